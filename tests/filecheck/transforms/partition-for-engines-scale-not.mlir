// RUN: relay-opt %s -p 'partition-for-engines{engines=dnnl}' | filecheck %s

// A multiply after a biased matmul or convolution that is not a constant scale per output
// channel stays out of the composite: a constant varying along the rows, a computed factor
// (a squeeze-and-excitation gate), a constant varying over the pixels (channels-last after ConvertLayout).

// CHECK-NOT:  _scale
// CHECK:      func.func @main
// CHECK-DAG:    relay.multiply %{{.*}}, %rows : (tensor<8x32xf32>, tensor<8x1xf32>)
// CHECK-DAG:    relay.multiply %{{.*}}, %{{.*}} : (tensor<8x32xf32>, tensor<1x32xf32>)
// CHECK-DAG:    relay.multiply %{{.*}}, %{{.*}} : (tensor<1x8x8x16xf32>, tensor<1x8x8x1xf32>)

func.func @main(%x: tensor<8x32xf32>, %y: tensor<32xf32>, %img: tensor<1x16x8x8xf32>) -> (tensor<8x32xf32>, tensor<8x32xf32>, tensor<1x16x8x8xf32>) {
  %w = relay.constant dense<0.25> : tensor<32x32xf32>
  %b = relay.constant dense<0.5> : tensor<32xf32>
  %rows = relay.constant dense<0.125> : tensor<8x1xf32>
  %d = relay.nn.dense %x, %w : (tensor<8x32xf32>, tensor<32x32xf32>) -> tensor<8x32xf32>
  %a = relay.add %d, %b : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %m = relay.multiply %a, %rows : (tensor<8x32xf32>, tensor<8x1xf32>) -> tensor<8x32xf32>
  %d2 = relay.nn.dense %m, %w : (tensor<8x32xf32>, tensor<32x32xf32>) -> tensor<8x32xf32>
  %a2 = relay.add %d2, %b : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %m2 = relay.multiply %a2, %y : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %cw = relay.constant dense<0.5> : tensor<16x16x3x3xf32>
  %cb = relay.constant dense<0.25> : tensor<16x1x1xf32>
  %px = relay.constant dense<0.75> : tensor<1x8x8xf32>
  %c = relay.nn.conv2d %img, %cw {channels = 16, kernel_size = [3, 3], padding = [1, 1, 1, 1]} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %ca = relay.add %c, %cb : (tensor<1x16x8x8xf32>, tensor<16x1x1xf32>) -> tensor<1x16x8x8xf32>
  %cm = relay.multiply %ca, %px : (tensor<1x16x8x8xf32>, tensor<1x8x8xf32>) -> tensor<1x16x8x8xf32>
  func.return %m, %m2, %cm : tensor<8x32xf32>, tensor<8x32xf32>, tensor<1x16x8x8xf32>
}
