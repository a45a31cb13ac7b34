// RUN: relay-opt %s -p 'partition-for-engines{engines=dnnl}' | filecheck %s

// Attention's heads: the reshape -> transpose -> reshape chains that make Q and K^T and the
// one that joins the context back move into the batched matmul's function (fold_views),
// where oneDNN reads and writes them as strides; the caller passes the dense results.

// CHECK:      func.func @tvmgen_default_dnnl_main_2(%0: tensor<8x32xf32>, %1: tensor<8x32xf32>) -> tensor<8x32xf32> attributes {{{.*}}relay.compiler = "dnnl"
// CHECK-NEXT:   %q1 = relay.reshape %0 {newshape = [1, 8, 4, 8]}
// CHECK-NEXT:   %q2 = relay.transpose %q1 {axes = [0, 2, 1, 3]}
// CHECK-NEXT:   %q3 = relay.reshape %q2 {newshape = [4, 8, 8]}
// CHECK-NEXT:   %k1 = relay.reshape %1 {newshape = [1, 8, 4, 8]}
// CHECK-NEXT:   %k2 = relay.transpose %k1 {axes = [0, 2, 3, 1]}
// CHECK-NEXT:   %k3 = relay.reshape %k2 {newshape = [4, 8, 8]}
// CHECK-NEXT:   %s = relay.nn.batch_matmul %q3, %k3
// CHECK-NEXT:   %c1 = relay.reshape %s {newshape = [1, 4, 8, 8]}
// CHECK-NEXT:   %c2 = relay.transpose %c1 {axes = [0, 2, 1, 3]}
// CHECK-NEXT:   %c3 = relay.reshape %c2 {newshape = [8, 32]}
// CHECK-NEXT:   func.return %c3 : tensor<8x32xf32>
// CHECK-NOT:  dnnl_reorder
// CHECK:      func.func @main
// CHECK:        %0 = func.call @tvmgen_default_dnnl_main_0(%x, %wq)
// CHECK-NEXT:   %1 = func.call @tvmgen_default_dnnl_main_1(%x, %wk)
// CHECK-NEXT:   %c3 = func.call @tvmgen_default_dnnl_main_2(%0, %1)
// CHECK-NEXT:   %2 = func.call @tvmgen_default_dnnl_main_3(%c3, %wq)

func.func @main(%x: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %wq = relay.constant dense<0.25> : tensor<32x32xf32>
  %wk = relay.constant dense<0.5> : tensor<32x32xf32>
  %q = relay.nn.dense %x, %wq : (tensor<8x32xf32>, tensor<32x32xf32>) -> tensor<8x32xf32>
  %k = relay.nn.dense %x, %wk : (tensor<8x32xf32>, tensor<32x32xf32>) -> tensor<8x32xf32>
  %q1 = relay.reshape %q {newshape = [1, 8, 4, 8]} : (tensor<8x32xf32>) -> tensor<1x8x4x8xf32>
  %q2 = relay.transpose %q1 {axes = [0, 2, 1, 3]} : (tensor<1x8x4x8xf32>) -> tensor<1x4x8x8xf32>
  %q3 = relay.reshape %q2 {newshape = [4, 8, 8]} : (tensor<1x4x8x8xf32>) -> tensor<4x8x8xf32>
  %k1 = relay.reshape %k {newshape = [1, 8, 4, 8]} : (tensor<8x32xf32>) -> tensor<1x8x4x8xf32>
  %k2 = relay.transpose %k1 {axes = [0, 2, 3, 1]} : (tensor<1x8x4x8xf32>) -> tensor<1x4x8x8xf32>
  %k3 = relay.reshape %k2 {newshape = [4, 8, 8]} : (tensor<1x4x8x8xf32>) -> tensor<4x8x8xf32>
  %s = relay.nn.batch_matmul %q3, %k3 {transpose_b = false} : (tensor<4x8x8xf32>, tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %c1 = relay.reshape %s {newshape = [1, 4, 8, 8]} : (tensor<4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %c2 = relay.transpose %c1 {axes = [0, 2, 1, 3]} : (tensor<1x4x8x8xf32>) -> tensor<1x8x4x8xf32>
  %c3 = relay.reshape %c2 {newshape = [8, 32]} : (tensor<1x8x4x8xf32>) -> tensor<8x32xf32>
  %y = relay.nn.dense %c3, %wq : (tensor<8x32xf32>, tensor<32x32xf32>) -> tensor<8x32xf32>
  func.return %y : tensor<8x32xf32>
}
