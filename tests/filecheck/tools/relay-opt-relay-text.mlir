// relay-opt and relay-run read Relay's text format (by the .relay extension or
// --input-format relay) and relay-opt prints it with --output-format relay.

// RUN: relay-opt %S/Inputs/bn-relu.relay | filecheck %s --check-prefix=IR
// IR:      func.func @main(%x: tensor<1x2x2x2xf32>, %g: tensor<2xf32>) -> tensor<1x2x2x2xf32> {
// IR-NEXT:   %y, %0, %1 = relay.nn.batch_norm %x, %g, %g, %g, %g {epsilon = 0.001}
// IR-NEXT:   %2 = relay.nn.relu %y

// A fused function literal is numbered after the temporaries of its own body (%10 after
// %0-%9), as Relay's printer numbers it.
// RUN: relay-opt %S/Inputs/bn-relu.relay -p simplify-inference,fuse-ops --output-format relay | filecheck %s --check-prefix=RELAY
// RELAY:      #[version = "0.0.5"]
// RELAY-NEXT: def @main(%x: Tensor[(1, 2, 2, 2), float32] /* ty=Tensor[(1, 2, 2, 2), float32] */, %g: Tensor[(2), float32] /* ty=Tensor[(2), float32] */) -> Tensor[(1, 2, 2, 2), float32] {
// RELAY-NEXT:   %10 = fn (%p0: Tensor[(2), float32] /* ty=Tensor[(2), float32] */, %p1: Tensor[(1, 2, 2, 2), float32] /* ty=Tensor[(1, 2, 2, 2), float32] */, Primitive=1) -> Tensor[(1, 2, 2, 2), float32] {
// RELAY-NEXT:     %0 = add(%p0, 0.001f /* ty=float32 */) /* ty=Tensor[(2), float32] */;
// RELAY:          nn.relu(%y) /* ty=Tensor[(1, 2, 2, 2), float32] */
// RELAY-NEXT:   } /* ty=fn (Tensor[(2), float32], Tensor[(1, 2, 2, 2), float32]) -> Tensor[(1, 2, 2, 2), float32] */;
// RELAY-NEXT:   %10(%g, %x) /* ty=Tensor[(1, 2, 2, 2), float32] */
// RELAY-NEXT: }

// Relay text in, Relay text out, through a pipe: the printed text parses back to itself.
// RUN: relay-opt %S/Inputs/bn-relu.relay --output-format relay > %t.relay
// RUN: relay-opt --input-format relay < %t.relay --output-format relay | diff %t.relay -
// RUN: filecheck %s --check-prefix=LET < %t.relay
// LET:      %0 = nn.batch_norm(%x, %g, %g, %g, %g, epsilon=0.001f)
// LET-NEXT: let %y = %0.0 /* ty=Tensor[(1, 2, 2, 2), float32] */;
// LET-NEXT: nn.relu(%y) /* ty=Tensor[(1, 2, 2, 2), float32] */

// to-a-normal-form: every call let-bound (%x, %x1, ... as Relay names them), the body ends in
// a variable; to-graph-normal-form: graph bindings again, the let names gone.
// RUN: relay-opt %S/Inputs/bn-relu.relay -p to-a-normal-form --output-format relay | filecheck %s --check-prefix=ANF
// ANF:      let %x1 = nn.batch_norm(%x, %g, %g, %g, %g, epsilon=0.001f)
// ANF-NEXT: let %y = %x1.0 /* ty=Tensor[(1, 2, 2, 2), float32] */;
// ANF-NEXT: let %x2 = nn.relu(%y) /* ty=Tensor[(1, 2, 2, 2), float32] */;
// ANF-NEXT: %x2
// RUN: relay-opt %S/Inputs/bn-relu.relay -p to-a-normal-form,to-graph-normal-form --output-format relay | filecheck %s --check-prefix=GNF
// GNF:      %0 = nn.batch_norm(%x, %g, %g, %g, %g, epsilon=0.001f)
// GNF-NEXT: %1 = %0.0 /* ty=Tensor[(1, 2, 2, 2), float32] */;
// GNF-NEXT: nn.relu(%1) /* ty=Tensor[(1, 2, 2, 2), float32] */

// MLIR in, Relay text out, and back to the same MLIR.
// RUN: relay-opt %s --output-format relay | relay-opt --input-format relay | filecheck %s --check-prefix=BACK
// BACK: %0 = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]} : (tensor<1x3x4x4xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x4x4xf32>

// RUN: relay-run %S/Inputs/bn-relu.relay --random-inputs 1 | filecheck %s --check-prefix=OUT
// RUN: relay-opt %S/Inputs/bn-relu.relay --output-format relay | relay-run - --input-format relay --random-inputs 1 | filecheck %s --check-prefix=OUT
// OUT: output 0: shape (1, 2, 2, 2) float32

// An error in Relay text: file, line and column, the line and a caret; exit 1.
// RUN: not relay-opt %S/Inputs/bad-call.relay 2>&1 | filecheck %s --check-prefix=ERR
// ERR:      error: {{.*}}bad-call.relay:3:1: expected ',' or ')', found '}'
// ERR-NEXT: }
// ERR-NEXT: ^
// RUN: not relay-run %S/Inputs/bad-call.relay --random-inputs 1 2>&1 | filecheck %s --check-prefix=ERR

func.func @main(%x: tensor<1x3x4x4xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x2x4x4xf32> {
  %0 = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]} : (tensor<1x3x4x4xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x4x4xf32>
  func.return %0 : tensor<1x2x4x4xf32>
}
