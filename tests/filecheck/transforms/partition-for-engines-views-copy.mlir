// RUN: relay-opt %s -p 'partition-for-engines{engines=dnnl}' | filecheck %s

// Two images' heads merged into the rows: (4 heads, 8 positions) of each image cannot
// merge into one row stride, and the rows are not batch dims a matmul can keep apart
// (primitives.matmul_view), so only the last reshape is a view the matmul reads; the
// transpose before it stays one reorder (a copy).

// CHECK:      func.func @tvmgen_default_dnnl_main_1(%0: tensor<2x4x8x8xf32>, %1: tensor<2x8x8xf32>) -> tensor<2x32x8xf32>
// CHECK-NEXT:   %q3 = relay.reshape %0 {newshape = [2, 32, 8]}
// CHECK-NEXT:   %s = relay.nn.batch_matmul %q3, %1
// CHECK-NEXT:   func.return %s
// CHECK:      func.func @tvmgen_default_dnnl_move_0(%0: tensor<16x32xf32>) -> tensor<2x4x8x8xf32>
// CHECK-NEXT:   %q1 = relay.reshape %0 {newshape = [2, 8, 4, 8]}
// CHECK-NEXT:   %q2 = relay.transpose %q1 {axes = [0, 2, 1, 3]}
// CHECK-NEXT:   func.return %q2
// CHECK:      func.func @main
// CHECK:        %q2 = func.call @tvmgen_default_dnnl_move_0(%0)
// CHECK-NEXT:   %1 = func.call @tvmgen_default_dnnl_main_1(%q2, %y)

func.func @main(%x: tensor<16x32xf32>, %y: tensor<2x8x8xf32>) -> tensor<2x32x8xf32> {
  %wq = relay.constant dense<0.25> : tensor<32x32xf32>
  %q = relay.nn.dense %x, %wq : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %q1 = relay.reshape %q {newshape = [2, 8, 4, 8]} : (tensor<16x32xf32>) -> tensor<2x8x4x8xf32>
  %q2 = relay.transpose %q1 {axes = [0, 2, 1, 3]} : (tensor<2x8x4x8xf32>) -> tensor<2x4x8x8xf32>
  %q3 = relay.reshape %q2 {newshape = [2, 32, 8]} : (tensor<2x4x8x8xf32>) -> tensor<2x32x8xf32>
  %s = relay.nn.batch_matmul %q3, %y : (tensor<2x32x8xf32>, tensor<2x8x8xf32>) -> tensor<2x32x8xf32>
  func.return %s : tensor<2x32x8xf32>
}
