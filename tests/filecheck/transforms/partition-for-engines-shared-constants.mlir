// RUN: relay-opt %s -p 'partition-for-engines{engines=dnnl}' | filecheck %s

// Two matmuls by one weight (a weight-tied model's layers: ALBERT's): each becomes an
// nn.dense by the weight transposed, folded per use into a constant of its own; equal
// constants are then one (share_equal_constants), read by both oneDNN functions. The bias,
// equal to no other constant, stays, and so does a third matmul's weight of the same type and
// other bytes.

// CHECK:      func.func @main
// CHECK-NEXT:   %[[W:.*]] = relay.constant dense<5.000000e-01> : tensor<32x16xf32>
// CHECK-NEXT:   %[[B:.*]] = relay.constant dense<2.500000e-01> : tensor<32xf32>
// CHECK-NEXT:   func.call @tvmgen_default_dnnl_main_{{[0-9]+}}(%x, %[[W]], %[[B]])
// CHECK-NOT:    relay.constant
// CHECK:        func.call @tvmgen_default_dnnl_main_{{[0-9]+}}(%e, %[[W]])
// CHECK:        %[[V:.*]] = relay.constant dense<2.500000e-01> : tensor<32x16xf32>
// CHECK:        func.call @tvmgen_default_dnnl_main_{{[0-9]+}}(%{{.*}}, %[[V]])
// CHECK-NEXT:   func.return

func.func @main(%x: tensor<8x16xf32>) -> tensor<8x32xf32> {
  %wt = relay.constant dense<0.5> : tensor<16x32xf32>
  %a = relay.nn.matmul %x, %wt : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %b = relay.constant dense<0.25> : tensor<32xf32>
  %c = relay.add %a, %b : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %r = relay.nn.relu %c : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %s = relay.strided_slice %r {begin = [0], end = [16], strides = [1], axes = [1]} : (tensor<8x32xf32>) -> tensor<8x16xf32>
  %e = relay.exp %s : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %d = relay.nn.matmul %e, %wt : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %ds = relay.strided_slice %d {begin = [0], end = [16], strides = [1], axes = [1]} : (tensor<8x32xf32>) -> tensor<8x16xf32>
  %t = relay.exp %ds : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %vt = relay.constant dense<0.25> : tensor<16x32xf32>
  %o = relay.nn.matmul %t, %vt : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  func.return %o : tensor<8x32xf32>
}
