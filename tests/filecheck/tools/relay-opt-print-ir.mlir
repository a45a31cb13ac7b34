// --print-ir-{before,after}[-all] dump the module to stderr around passes, each dump
// under an MLIR comment header, so every section parses back.

// RUN: relay-opt %s -p infer-type,cse --print-ir-after-all -o %t 2>&1 | filecheck %s
// CHECK:      // -----// IR Dump After InferType //----- //
// CHECK-NEXT: builtin.module {
// CHECK:        %a = relay.add %x, %y
// CHECK-NEXT:   %b = relay.add %x, %y
// CHECK-NEXT:   %dead = relay.nn.relu %a
// CHECK:      // -----// IR Dump After cse //----- //
// CHECK-NEXT: builtin.module {
// CHECK:        %a = relay.add %x, %y
// CHECK-NEXT:   %c = relay.multiply %a, %a

// The dump parses back as split input (the empty chunk before the first marker is an empty
// module, as mlir-opt reads it), one module per dump.
// RUN: relay-opt %s -p infer-type,cse --print-ir-after-all -o %t 2>&1 | relay-opt --split-input-file | filecheck %s --check-prefix=REPARSE
// REPARSE:      builtin.module {
// REPARSE-NEXT: }
// REPARSE-EMPTY:
// REPARSE-NEXT: // -----
// REPARSE-NEXT: builtin.module {
// REPARSE:        %b = relay.add %x, %y
// REPARSE:      // -----
// REPARSE-NEXT: builtin.module {
// REPARSE-NOT:    %b = relay.add
// REPARSE:        %c = relay.multiply %a, %a
// REPARSE:        func.return %c

// RUN: relay-opt %s -p infer-type,cse --print-ir-before-all -o %t 2>&1 | filecheck %s --check-prefix=BEFORE
// BEFORE:      // -----// IR Dump Before InferType //----- //
// BEFORE:        %b = relay.add %x, %y
// BEFORE:      // -----// IR Dump Before cse //----- //
// BEFORE:        %b = relay.add %x, %y
// BEFORE-NOT:  IR Dump

// Names may be CLI or Relay names; only the named passes are printed.
// RUN: relay-opt %s -p infer-type,cse,dce --print-ir-before=infer-type --print-ir-after=dce,InferType -o %t 2>&1 | filecheck %s --check-prefix=NAMED
// NAMED:      // -----// IR Dump Before InferType //----- //
// NAMED-NEXT: builtin.module {
// NAMED:      // -----// IR Dump After InferType //----- //
// NAMED-NOT:  IR Dump {{.*}} cse
// NAMED:      // -----// IR Dump After dce //----- //
// NAMED-NOT:  IR Dump

// stdout holds only the final module.
// RUN: relay-opt %s -p cse --print-ir-after-all 2>/dev/null | filecheck %s --check-prefix=OUT
// OUT-NOT: IR Dump
// OUT:     builtin.module {

func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = relay.add %x, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %b = relay.add %x, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %dead = relay.nn.relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = relay.multiply %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %c : tensor<2x3xf32>
}
