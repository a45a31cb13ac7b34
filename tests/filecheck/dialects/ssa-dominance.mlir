// RUN: relay-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: not relay-opt %S/../tools/Inputs/use-before-def.mlir 2>&1 | filecheck %s --check-prefix=TOOL
// RUN: not relay-run %S/../tools/Inputs/use-before-def.mlir --random-inputs 0 2>&1 | filecheck %s --check-prefix=EXEC

// SSA dominance as MLIR verifies it (xDSL's parser accepts forward references). A use outside
// the defining region is a parse error; tests/transforms/test_dominance.py builds that case.

// TOOL: relay-opt: error: {{.*}}use-before-def.mlir:2:3: operand #0 of 'relay.add' uses %z before its definition
// TOOL: | operand #0 of 'relay.add' uses %z before its definition
// TOOL-NOT: Traceback
// EXEC: relay-run: error: {{.*}}use-before-def.mlir:2:3: operand #0 of 'relay.add' uses %z before its definition
// EXEC-NOT: KeyError
// EXEC-NOT: Traceback

// A use before its definition in the same block.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = relay.add %z, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %z = relay.add %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
// CHECK: operand #0 of 'relay.add' uses %z before its definition

// -----

// An op using its own result.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = relay.add %y, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
// CHECK: operand #0 of 'relay.add' uses %y before its definition

// -----

// A use inside a nested region of a value the enclosing block defines later.
func.func @main(%c: i1, %x: tensor<2xf32>) -> tensor<2xf32> {
  %r = scf.if %c -> (tensor<2xf32>) {
    scf.yield %late : tensor<2xf32>
  } else {
    scf.yield %x : tensor<2xf32>
  }
  %late = relay.negative %x : (tensor<2xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}
// CHECK: operand #0 of 'scf.yield' uses %late before its definition

// -----

// Across blocks: ^bb1 does not dominate ^bb2 (both are reached from the entry).
func.func @main(%c: i1, %x: tensor<2xf32>) -> tensor<2xf32> {
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  %a = relay.negative %x : (tensor<2xf32>) -> tensor<2xf32>
  cf.br ^bb2
^bb2:
  func.return %a : tensor<2xf32>
}
// CHECK: operand #0 of 'func.return' uses %a before its definition

// -----

// Accepted: a dominating block's value, a nested region's use of an earlier value, and a use
// in a block unreachable from the entry (as in MLIR).
func.func @main(%c: i1, %x: tensor<2xf32>) -> tensor<2xf32> {
  %a = relay.negative %x : (tensor<2xf32>) -> tensor<2xf32>
  %r = scf.if %c -> (tensor<2xf32>) {
    scf.yield %a : tensor<2xf32>
  } else {
    scf.yield %x : tensor<2xf32>
  }
  cf.br ^bb1
^bb1:
  func.return %r : tensor<2xf32>
^bb2:
  func.return %b : tensor<2xf32>
^bb3:
  %b = relay.negative %x : (tensor<2xf32>) -> tensor<2xf32>
  cf.br ^bb2
}
// CHECK: func.func @main
// CHECK: ^bb2:
// CHECK-NEXT: func.return %b
