// RUN: relay-opt %s | relay-opt | filecheck %s
// RUN: relay-opt %s -p dead-code-elimination | filecheck %s --check-prefix=DCE

// relay.loop (ONNX's Loop with a run-time trip count) prints and parses back: the body takes the
// iteration number, the condition and the loop-carried value; a scan output gets a leading
// dynamic dimension.
// CHECK-LABEL: func.func @main
// CHECK:      %v, %s = relay.loop %n, %c, %v0 : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
// CHECK-NEXT: ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %vi: tensor<2xf32>):
// CHECK-NEXT:   %w = relay.add %vi, %vi : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:   relay.loop_yield %ci, %w, %w : tensor<i1>, tensor<2xf32>, tensor<2xf32>
// CHECK-NEXT: }

// A loop whose results are all unused goes (its body has no effects); one whose result is used
// stays.
// DCE-LABEL: func.func @main
// DCE:       %v, %s = relay.loop
// DCE-NOT:   %u = relay.loop
// DCE:       func.return
func.func @main(%n: tensor<i64>, %c: tensor<i1>, %v0: tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
  %v, %s = relay.loop %n, %c, %v0 : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %vi: tensor<2xf32>):
    %w = relay.add %vi, %vi : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    relay.loop_yield %ci, %w, %w : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }
  %u = relay.loop %n, %c, %v0 : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>) {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %vi: tensor<2xf32>):
    relay.loop_yield %ci, %vi : tensor<i1>, tensor<2xf32>
  }
  func.return %v, %s : tensor<2xf32>, tensor<?x2xf32>
}
