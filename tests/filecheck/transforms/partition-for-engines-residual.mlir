// RUN: relay-opt %s -p 'partition-for-engines{engines=dnnl}' | filecheck %s

// GPT-2's Conv1D back to the residual stream: the matmul on the flattened rows, its bias,
// the view back to (batch, seq, features) and the residual add are one composite (the add
// is oneDNN's sum post-op)

// CHECK:      func.func private @dnnl_dense_bias_sum{{.*}} attributes {relay.composite = "dnnl.dense_bias_sum"
// CHECK-NEXT:   relay.nn.dense
// CHECK-NEXT:   relay.add
// CHECK-NEXT:   relay.reshape
// CHECK-NEXT:   relay.add
// CHECK:      func.func @main
// CHECK-NOT:    relay.add
// CHECK:        func.return

func.func @main(%x: tensor<8x32xf32>, %r: tensor<1x8x32xf32>) -> tensor<1x8x32xf32> {
  %w = relay.constant dense<0.25> : tensor<32x32xf32>
  %b = relay.constant dense<0.5> : tensor<32xf32>
  %d = relay.nn.dense %x, %w : (tensor<8x32xf32>, tensor<32x32xf32>) -> tensor<8x32xf32>
  %a = relay.add %d, %b : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %v = relay.reshape %a {newshape = [1, 8, 32]} : (tensor<8x32xf32>) -> tensor<1x8x32xf32>
  %s = relay.add %v, %r : (tensor<1x8x32xf32>, tensor<1x8x32xf32>) -> tensor<1x8x32xf32>
  func.return %s : tensor<1x8x32xf32>
}
