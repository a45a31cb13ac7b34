// RUN: relay-opt %s -p 'partition-for-engines{engines=dnnl}' | filecheck %s

// A depthwise convolution with a channel multiplier of 2 (4 input channels, 4 groups, 8
// outputs) becomes, once channels-last, the repeat of its input's channels (each twice,
// along C) and a plain depthwise convolution of 8 groups with the same weight
// (depthwise_multiplier): oneDNN's depthwise kernels take a multiplier of 1 only.

// CHECK:      func.func private @dnnl_conv2d_relu(%p0: tensor<1x8x8x8xf32>, %p1: tensor<3x3x1x8xf32>)
// CHECK-NEXT:   relay.nn.conv2d %p0, %p1 {strides = [2, 2], padding = [1, 1, 1, 1], groups = 8, channels = 8, kernel_size = [3, 3], data_layout = "NHWC", kernel_layout = "HWIO"}
// CHECK:      func.func @main
// CHECK-NEXT:   %0 = func.call @tvmgen_default_dnnl_reorder_0(%x) : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x4xf32>
// CHECK-NEXT:   %1 = relay.constant dense<1.250000e-01> : tensor<3x3x1x8xf32>
// CHECK-NEXT:   %2 = relay.repeat %0 {repeats = 2, axis = 3} : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x8xf32>
// CHECK-NEXT:   func.call @tvmgen_default_dnnl_main_0(%2, %1)

// A depthwise convolution without a multiplier, and a grouped one of two channels a group,
// are left as they are.
// CHECK:      func.func @plain
// CHECK-NOT:    relay.repeat
// CHECK:        func.return

func.func @main(%x: tensor<1x4x8x8xf32>) -> tensor<1x8x4x4xf32> {
  %w = relay.constant dense<0.125> : tensor<8x1x3x3xf32>
  %c = relay.nn.conv2d %x, %w {strides = [2, 2], padding = [1, 1, 1, 1], groups = 4, channels = 8, kernel_size = [3, 3]} : (tensor<1x4x8x8xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x4x4xf32>
  %r = relay.nn.relu %c : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  func.return %r : tensor<1x8x4x4xf32>
}

func.func @plain(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = relay.constant dense<0.125> : tensor<4x1x3x3xf32>
  %c = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1], groups = 4, channels = 4, kernel_size = [3, 3]} : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x8x8xf32>
  %v = relay.constant dense<0.25> : tensor<4x2x3x3xf32>
  %g = relay.nn.conv2d %c, %v {padding = [1, 1, 1, 1], groups = 2, channels = 4, kernel_size = [3, 3]} : (tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return %g : tensor<1x4x8x8xf32>
}
