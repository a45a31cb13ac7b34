// RUN: relay-opt %s -p 'partition-for-engines{engines=dnnl}' | filecheck %s

// A gated linear unit as two linear layers (Llama's SwiGLU, silu(x W_g) * (x W_u)): the
// product by the other layer's output joins the activated matmul's composite (oneDNN's
// binary multiply post-op), the activation on either side of the product. The SiLU's own
// x * sigmoid(x) is no gate: it stays the activation (dnnl.dense_swish), and a factor that
// broadcasts (%one: one column) is no gate either.

// CHECK:      func.func private @dnnl_dense_swish_mul{{.*}} attributes {relay.composite = "dnnl.dense_swish_mul"
// CHECK-NEXT:   relay.nn.dense
// CHECK-NEXT:   relay.sigmoid
// CHECK-NEXT:   relay.multiply
// CHECK-NEXT:   relay.multiply
// CHECK-NEXT:   func.return
// CHECK:      func.func private @dnnl_dense_swish_mul{{.*}} attributes {relay.composite = "dnnl.dense_swish_mul"
// CHECK:      func.func private @dnnl_dense_swish({{.*}} attributes {relay.composite = "dnnl.dense_swish"
// CHECK-NEXT:   relay.nn.dense
// CHECK-NEXT:   relay.sigmoid
// CHECK-NEXT:   relay.multiply
// CHECK-NEXT:   func.return
// CHECK:      func.func @main
// CHECK:        relay.multiply %{{.*}} : (tensor<8x64xf32>, tensor<8x1xf32>)
// CHECK-NOT:    relay.multiply
// CHECK:        func.return

func.func @main(%x: tensor<8x32xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>) {
  %wg = relay.constant dense<0.25> : tensor<64x32xf32>
  %wu = relay.constant dense<0.5> : tensor<64x32xf32>
  %w1 = relay.constant dense<0.125> : tensor<1x32xf32>
  %g = relay.nn.dense %x, %wg : (tensor<8x32xf32>, tensor<64x32xf32>) -> tensor<8x64xf32>
  %s = relay.sigmoid %g : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %a = relay.multiply %g, %s : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  %u = relay.nn.dense %x, %wu : (tensor<8x32xf32>, tensor<64x32xf32>) -> tensor<8x64xf32>
  %y = relay.multiply %a, %u : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  %g2 = relay.nn.dense %x, %wu : (tensor<8x32xf32>, tensor<64x32xf32>) -> tensor<8x64xf32>
  %s2 = relay.sigmoid %g2 : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %a2 = relay.multiply %s2, %g2 : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  %u2 = relay.nn.dense %x, %wg : (tensor<8x32xf32>, tensor<64x32xf32>) -> tensor<8x64xf32>
  %y2 = relay.multiply %u2, %a2 : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  %g3 = relay.nn.dense %x, %wg : (tensor<8x32xf32>, tensor<64x32xf32>) -> tensor<8x64xf32>
  %s3 = relay.sigmoid %g3 : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %a3 = relay.multiply %g3, %s3 : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  %one = relay.nn.dense %x, %w1 : (tensor<8x32xf32>, tensor<1x32xf32>) -> tensor<8x1xf32>
  %y3 = relay.multiply %a3, %one : (tensor<8x64xf32>, tensor<8x1xf32>) -> tensor<8x64xf32>
  func.return %y, %y2, %y3 : tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>
}
