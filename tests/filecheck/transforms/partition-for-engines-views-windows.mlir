// RUN: relay-opt %s -p 'partition-for-engines{engines=dnnl}' | filecheck %s

// Swin's windows: a packed Q/K/V projection of 2 windows, split into 2 heads each, then
// the windows and heads merged into one batch of 4 (reshape to 4x4x4). The merged batch is
// two strided runs of the projection (windows 96 elements apart, heads 4), which no single
// stride spans: the matmul reads its operands over both batch dims (primitives.matmul_view),
// so the slice, the heads' reshape and transpose and the merging reshape all move into the
// matmul's function (fold_views) and the caller passes the whole projection: no copy.

// CHECK:      func.func @tvmgen_default_dnnl_main_1(%0: tensor<2x4x24xf32>, %1: tensor<2x4x24xf32>) -> tensor<4x4x4xf32> attributes {{{.*}}relay.compiler = "dnnl"
// CHECK-NEXT:   %q = relay.strided_slice %0 {begin = [0], end = [8], strides = [1], axes = [2]}
// CHECK-NEXT:   %q1 = relay.reshape %q {newshape = [2, 4, 2, 4]}
// CHECK-NEXT:   %q2 = relay.transpose %q1 {axes = [0, 2, 1, 3]}
// CHECK-NEXT:   %q3 = relay.reshape %q2 {newshape = [4, 4, 4]}
// CHECK-NEXT:   %k = relay.strided_slice %1 {begin = [8], end = [16], strides = [1], axes = [2]}
// CHECK-NEXT:   %k1 = relay.reshape %k {newshape = [2, 4, 2, 4]}
// CHECK-NEXT:   %k2 = relay.transpose %k1 {axes = [0, 2, 3, 1]}
// CHECK-NEXT:   %k3 = relay.reshape %k2 {newshape = [4, 4, 4]}
// CHECK-NEXT:   %s = relay.nn.batch_matmul %q3, %k3
// CHECK-NEXT:   func.return %s : tensor<4x4x4xf32>
// CHECK:      func.func @main
// CHECK-NOT:    relay.strided_slice
// CHECK-NOT:    relay.transpose
// CHECK:        %0 = func.call @tvmgen_default_dnnl_main_0(%x, %w)
// CHECK-NEXT:   %1 = func.call @tvmgen_default_dnnl_main_1(%0, %0)
// CHECK-NOT:    relay.strided_slice
// CHECK-NOT:    relay.transpose

func.func @main(%x: tensor<2x4x8xf32>) -> tensor<4x4x4xf32> {
  %w = relay.constant dense<0.25> : tensor<24x8xf32>
  %qkv = relay.nn.dense %x, %w : (tensor<2x4x8xf32>, tensor<24x8xf32>) -> tensor<2x4x24xf32>
  %q = relay.strided_slice %qkv {begin = [0], end = [8], strides = [1], axes = [2]} : (tensor<2x4x24xf32>) -> tensor<2x4x8xf32>
  %k = relay.strided_slice %qkv {begin = [8], end = [16], strides = [1], axes = [2]} : (tensor<2x4x24xf32>) -> tensor<2x4x8xf32>
  %q1 = relay.reshape %q {newshape = [2, 4, 2, 4]} : (tensor<2x4x8xf32>) -> tensor<2x4x2x4xf32>
  %q2 = relay.transpose %q1 {axes = [0, 2, 1, 3]} : (tensor<2x4x2x4xf32>) -> tensor<2x2x4x4xf32>
  %q3 = relay.reshape %q2 {newshape = [4, 4, 4]} : (tensor<2x2x4x4xf32>) -> tensor<4x4x4xf32>
  %k1 = relay.reshape %k {newshape = [2, 4, 2, 4]} : (tensor<2x4x8xf32>) -> tensor<2x4x2x4xf32>
  %k2 = relay.transpose %k1 {axes = [0, 2, 3, 1]} : (tensor<2x4x2x4xf32>) -> tensor<2x2x4x4xf32>
  %k3 = relay.reshape %k2 {newshape = [4, 4, 4]} : (tensor<2x2x4x4xf32>) -> tensor<4x4x4xf32>
  %s = relay.nn.batch_matmul %q3, %k3 {transpose_b = false} : (tensor<4x4x4xf32>, tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  func.return %s : tensor<4x4x4xf32>
}
