// RUN: relay-opt %s -p 'partition-for-engines{engines=dnnl}' | filecheck %s

// A per-channel constant scale directly after a bias-free matmul or convolution (ConvNeXt's
// layer scale after a Linear without bias), also after the matmul's rows are viewed back
// with the units still last, joins the composite with its residual add. A view that moves
// the units off the last axis does not: the factor would vary within a unit's row.

// CHECK:      func.func private @dnnl_conv2d_scale{{.*}} attributes {relay.composite = "dnnl.conv2d_scale"
// CHECK-NEXT:   relay.nn.conv2d
// CHECK-NEXT:   relay.constant dense<7.500000e-01> : tensor<1x1x1x16xf32>
// CHECK-NEXT:   relay.multiply
// CHECK-NEXT:   func.return
// CHECK:      func.func private @dnnl_dense_scale_sum{{.*}} attributes {relay.composite = "dnnl.dense_scale_sum"
// CHECK-NEXT:   relay.constant dense<1.250000e-01> : tensor<32xf32>
// CHECK-NEXT:   relay.nn.dense
// CHECK-NEXT:   relay.reshape
// CHECK-NEXT:   relay.multiply
// CHECK-NEXT:   relay.add
// CHECK-NEXT:   func.return
// CHECK:      func.func @main
// CHECK:        %[[V:.*]] = relay.reshape
// CHECK:        relay.multiply %[[V]]
// CHECK:        func.return

func.func @main(%x: tensor<8x32xf32>, %r: tensor<2x4x32xf32>, %img: tensor<1x16x8x8xf32>) -> (tensor<2x4x32xf32>, tensor<1x16x8x8xf32>, tensor<8x4x8xf32>) {
  %w = relay.constant dense<0.25> : tensor<32x32xf32>
  %g = relay.constant dense<0.125> : tensor<32xf32>
  %d = relay.nn.dense %x, %w : (tensor<8x32xf32>, tensor<32x32xf32>) -> tensor<8x32xf32>
  %v = relay.reshape %d {newshape = [2, 4, 32]} : (tensor<8x32xf32>) -> tensor<2x4x32xf32>
  %m = relay.multiply %v, %g : (tensor<2x4x32xf32>, tensor<32xf32>) -> tensor<2x4x32xf32>
  %s = relay.add %m, %r : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %cw = relay.constant dense<0.5> : tensor<16x16x3x3xf32>
  %cg = relay.constant dense<0.75> : tensor<16x1x1xf32>
  %c = relay.nn.conv2d %img, %cw {channels = 16, kernel_size = [3, 3], padding = [1, 1, 1, 1]} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %cm = relay.multiply %c, %cg : (tensor<1x16x8x8xf32>, tensor<16x1x1xf32>) -> tensor<1x16x8x8xf32>
  %h = relay.constant dense<0.5> : tensor<8xf32>
  %d2 = relay.nn.dense %x, %w : (tensor<8x32xf32>, tensor<32x32xf32>) -> tensor<8x32xf32>
  %v2 = relay.reshape %d2 {newshape = [8, 4, 8]} : (tensor<8x32xf32>) -> tensor<8x4x8xf32>
  %m2 = relay.multiply %v2, %h : (tensor<8x4x8xf32>, tensor<8xf32>) -> tensor<8x4x8xf32>
  func.return %s, %cm, %m2 : tensor<2x4x32xf32>, tensor<1x16x8x8xf32>, tensor<8x4x8xf32>
}
