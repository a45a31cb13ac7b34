// RUN: relay-opt %s -p 'partition-for-engines{engines=dnnl}' | filecheck %s

// A constant scale per output channel after the bias (ConvNeXt's layer scale) and the
// residual add after it join the matmul's or convolution's composite: the oneDNN reader
// folds the scale into the weights and the bias, the add is the sum post-op. The
// convolution's NCHW scale (16x1x1) is the channels-last 1x1x1x16 after ConvertLayout.

// CHECK:      func.func private @dnnl_conv2d_bias_scale_sum{{.*}} attributes {relay.composite = "dnnl.conv2d_bias_scale_sum"
// CHECK-NEXT:   relay.nn.conv2d
// CHECK-NEXT:   relay.add
// CHECK-NEXT:   relay.constant dense<7.500000e-01> : tensor<1x1x1x16xf32>
// CHECK-NEXT:   relay.multiply
// CHECK-NEXT:   relay.add
// CHECK:      func.func private @dnnl_dense_bias_scale_sum{{.*}} attributes {relay.composite = "dnnl.dense_bias_scale_sum"
// CHECK-NEXT:   relay.nn.dense
// CHECK-NEXT:   relay.add
// CHECK-NEXT:   relay.constant dense<1.250000e-01> : tensor<1x32xf32>
// CHECK-NEXT:   relay.multiply
// CHECK-NEXT:   relay.add
// CHECK:      func.func private @dnnl_dense_bias_scale(%{{.*}}) {{.*}}relay.composite = "dnnl.dense_bias_scale"
// CHECK-NEXT:   relay.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:   relay.nn.dense
// CHECK-NEXT:   relay.add
// CHECK-NEXT:   relay.multiply
// CHECK-NEXT:   func.return
// CHECK:      func.func @main
// CHECK-NOT:    relay.multiply
// CHECK-NOT:    relay.add
// CHECK:        func.return

func.func @main(%x: tensor<8x32xf32>, %r: tensor<8x32xf32>, %img: tensor<1x16x8x8xf32>) -> (tensor<8x32xf32>, tensor<1x16x8x8xf32>, tensor<8x32xf32>) {
  %w = relay.constant dense<0.25> : tensor<32x32xf32>
  %b = relay.constant dense<0.5> : tensor<32xf32>
  %g = relay.constant dense<0.125> : tensor<32xf32>
  %d = relay.nn.dense %x, %w : (tensor<8x32xf32>, tensor<32x32xf32>) -> tensor<8x32xf32>
  %a = relay.add %d, %b : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %m = relay.multiply %a, %g : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %s = relay.add %m, %r : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %cw = relay.constant dense<0.5> : tensor<16x16x3x3xf32>
  %cb = relay.constant dense<0.25> : tensor<16x1x1xf32>
  %cg = relay.constant dense<0.75> : tensor<16x1x1xf32>
  %c = relay.nn.conv2d %img, %cw {channels = 16, kernel_size = [3, 3], padding = [1, 1, 1, 1]} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %ca = relay.add %c, %cb : (tensor<1x16x8x8xf32>, tensor<16x1x1xf32>) -> tensor<1x16x8x8xf32>
  %cm = relay.multiply %ca, %cg : (tensor<1x16x8x8xf32>, tensor<16x1x1xf32>) -> tensor<1x16x8x8xf32>
  %cs = relay.add %cm, %img : (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %two = relay.constant dense<2.0> : tensor<f32>
  %d2 = relay.nn.dense %r, %w : (tensor<8x32xf32>, tensor<32x32xf32>) -> tensor<8x32xf32>
  %a2 = relay.add %d2, %b : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %m2 = relay.multiply %a2, %two : (tensor<8x32xf32>, tensor<f32>) -> tensor<8x32xf32>
  func.return %s, %cs, %m2 : tensor<8x32xf32>, tensor<1x16x8x8xf32>, tensor<8x32xf32>
}
