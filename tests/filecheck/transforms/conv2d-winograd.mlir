// RUN: relay-opt %s -p conv2d-winograd | filecheck %s

// A 3x3 stride-1 float32 convolution with a constant kernel, blocked as the C build's
// alter-op-layout makes it, becomes the Winograd op; its weights are the transformed
// kernel packed (6, 6, O/8, I, 8), a constant.
// CHECK-LABEL: func.func @blocked(
// CHECK-NOT:   relay.nn.conv2d
// CHECK:       %[[U:.*]] = relay.constant dense<"0x0000003E0000003E{{.*}}"> : tensor<6x6x2x16x8xf32>
// CHECK:       relay.nn.contrib_conv2d_winograd_without_weight_transform %x, %[[U]] {padding = [1, 1, 1, 1], channels = 16, kernel_size = [3, 3], data_layout = "NCHW8c"} : (tensor<1x2x14x14x8xf32>, tensor<6x6x2x16x8xf32>) -> tensor<1x2x14x14x8xf32>
func.func @blocked(%x: tensor<1x2x14x14x8xf32>) -> tensor<1x2x14x14x8xf32> {
  %w = relay.constant dense<0.5> : tensor<2x2x3x3x8x8xf32>
  %y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1], channels = 16, kernel_size = [3, 3], data_layout = "NCHW8c", kernel_layout = "OIHW8i8o"} : (tensor<1x2x14x14x8xf32>, tensor<2x2x3x3x8x8xf32>) -> tensor<1x2x14x14x8xf32>
  func.return %y : tensor<1x2x14x14x8xf32>
}

// NCHW data into a blocked result (the input layer of a blocked program); asymmetric padding.
// CHECK-LABEL: func.func @plain_data(
// CHECK:       relay.nn.contrib_conv2d_winograd_without_weight_transform %x, %{{.*}} {padding = [0, 1, 2, 0], channels = 16, kernel_size = [3, 3], out_layout = "NCHW16c"} : (tensor<1x16x16x15xf32>, tensor<6x6x2x16x8xf32>) -> tensor<1x1x16x14x16xf32>
func.func @plain_data(%x: tensor<1x16x16x15xf32>) -> tensor<1x1x16x14x16xf32> {
  %w = relay.constant dense<0.5> : tensor<16x16x3x3xf32>
  %y = relay.nn.conv2d %x, %w {padding = [0, 1, 2, 0], channels = 16, kernel_size = [3, 3], out_layout = "NCHW16c"} : (tensor<1x16x16x15xf32>, tensor<16x16x3x3xf32>) -> tensor<1x1x16x14x16xf32>
  func.return %y : tensor<1x1x16x14x16xf32>
}

// Left alone: an NCHW result (the C's output transform writes 8 contiguous channels), a
// stride of 2, a 7x7 output, a kernel that is not a constant, a grouped convolution.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT:   winograd
// CHECK:       func.return
func.func @kept(%x: tensor<1x16x14x14xf32>, %xb: tensor<1x2x14x14x8xf32>, %x7: tensor<1x2x7x7x8xf32>, %wp: tensor<2x2x3x3x8x8xf32>) -> (tensor<1x16x14x14xf32>, tensor<1x2x7x7x8xf32>, tensor<1x2x7x7x8xf32>, tensor<1x2x14x14x8xf32>, tensor<1x2x14x14x8xf32>) {
  %w = relay.constant dense<0.5> : tensor<16x16x3x3xf32>
  %wb = relay.constant dense<0.5> : tensor<2x2x3x3x8x8xf32>
  %wg = relay.constant dense<0.5> : tensor<2x1x3x3x8x8xf32>
  %a = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1], channels = 16, kernel_size = [3, 3]} : (tensor<1x16x14x14xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x14x14xf32>
  %b = relay.nn.conv2d %xb, %wb {strides = [2, 2], padding = [1, 1, 1, 1], channels = 16, kernel_size = [3, 3], data_layout = "NCHW8c", kernel_layout = "OIHW8i8o"} : (tensor<1x2x14x14x8xf32>, tensor<2x2x3x3x8x8xf32>) -> tensor<1x2x7x7x8xf32>
  %c = relay.nn.conv2d %x7, %wb {padding = [1, 1, 1, 1], channels = 16, kernel_size = [3, 3], data_layout = "NCHW8c", kernel_layout = "OIHW8i8o"} : (tensor<1x2x7x7x8xf32>, tensor<2x2x3x3x8x8xf32>) -> tensor<1x2x7x7x8xf32>
  %d = relay.nn.conv2d %xb, %wp {padding = [1, 1, 1, 1], channels = 16, kernel_size = [3, 3], data_layout = "NCHW8c", kernel_layout = "OIHW8i8o"} : (tensor<1x2x14x14x8xf32>, tensor<2x2x3x3x8x8xf32>) -> tensor<1x2x14x14x8xf32>
  %e = relay.nn.conv2d %xb, %wg {padding = [1, 1, 1, 1], groups = 2, channels = 16, kernel_size = [3, 3], data_layout = "NCHW8c", kernel_layout = "OIHW8i8o"} : (tensor<1x2x14x14x8xf32>, tensor<2x1x3x3x8x8xf32>) -> tensor<1x2x14x14x8xf32>
  func.return %a, %b, %c, %d, %e : tensor<1x16x14x14xf32>, tensor<1x2x7x7x8xf32>, tensor<1x2x7x7x8xf32>, tensor<1x2x14x14x8xf32>, tensor<1x2x14x14x8xf32>
}
