// RUN: relay-opt %s -p 'partition-for-engines{engines=dnnl}' | filecheck %s

// A decoder's transposed convolution between two convolutions is converted to NHWC with them
// (DESIRED_LAYOUTS has nn.conv2d_transpose): its bias a post-op of one oneDNN deconvolution, and
// layout transforms only at the edges of the NHWC region (none around it).

// CHECK:      relay.composite = "dnnl.deconv2d_bias"
// CHECK-NEXT:   relay.nn.conv2d_transpose %p0, %p1 {{{.*}}data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x6x6x8xf32>, tensor<2x2x8x4xf32>) -> tensor<1x12x12x4xf32>
// CHECK:      func.func @main
// CHECK-NEXT:   func.call @tvmgen_default_dnnl_move_0(%x)
// CHECK-NOT:    func.call @tvmgen_default_dnnl_move
// CHECK:        func.call @tvmgen_default_dnnl_main_1(%{{.*}}) : (tensor<1x6x6x8xf32>, tensor<2x2x8x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x12x12x4xf32>
// CHECK-NEXT:   func.call @tvmgen_default_dnnl_main_2
// CHECK-NEXT:   func.call @tvmgen_default_dnnl_move_1
// CHECK-NEXT:   func.return

func.func @main(%x: tensor<1x8x6x6xf32>) -> tensor<1x8x12x12xf32> {
  %w = relay.constant dense<0.125> : tensor<8x8x3x3xf32>
  %c = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1], channels = 8, kernel_size = [3, 3]} : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  %u = relay.constant dense<0.25> : tensor<8x4x2x2xf32>
  %d = relay.nn.conv2d_transpose %c, %u {strides = [2, 2], channels = 4, kernel_size = [2, 2]} : (tensor<1x8x6x6xf32>, tensor<8x4x2x2xf32>) -> tensor<1x4x12x12xf32>
  %b = relay.constant dense<0.5> : tensor<4x1x1xf32>
  %e = relay.add %d, %b : (tensor<1x4x12x12xf32>, tensor<4x1x1xf32>) -> tensor<1x4x12x12xf32>
  %v = relay.constant dense<0.125> : tensor<8x4x3x3xf32>
  %o = relay.nn.conv2d %e, %v {padding = [1, 1, 1, 1], channels = 8, kernel_size = [3, 3]} : (tensor<1x4x12x12xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x12x12xf32>
  func.return %o : tensor<1x8x12x12xf32>
}
