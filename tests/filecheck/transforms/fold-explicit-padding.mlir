// RUN: relay-opt %s -p fold-explicit-padding | filecheck %s

// A zero pad of H and W becomes the conv2d's padding.
// CHECK-LABEL: func.func @conv(
// CHECK-NOT:   relay.nn.pad
// CHECK:       %y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %zero = relay.constant dense<0.0> : tensor<f32>
  %p = relay.nn.pad %x, %zero {pad_width = [[0, 0], [0, 0], [1, 1], [1, 1]]} : (tensor<1x3x8x8xf32>, tensor<f32>) -> tensor<1x3x10x10xf32>
  %y = relay.nn.conv2d %p, %w : (tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return %y : tensor<1x4x8x8xf32>
}

// qnn.conv2d pads with its input zero point: a pad by the zero point (7) folds.
// CHECK-LABEL: func.func @qconv(
// CHECK-NOT:   relay.nn.pad
// CHECK:       %y = qnn.conv2d %x, %w, %zp, %kzp, %s, %s {padding = [1, 1, 1, 1], channels = 4, kernel_size = [3, 3]}
func.func @qconv(%x: tensor<1x3x8x8xui8>, %w: tensor<4x3x3x3xi8>) -> tensor<1x4x8x8xi32> {
  %zp8 = relay.constant dense<7> : tensor<ui8>
  %zp = relay.constant dense<7> : tensor<i32>
  %kzp = relay.constant dense<0> : tensor<i32>
  %s = relay.constant dense<0.5> : tensor<f32>
  %p = relay.nn.pad %x, %zp8 {pad_width = [[0, 0], [0, 0], [1, 1], [1, 1]]} : (tensor<1x3x8x8xui8>, tensor<ui8>) -> tensor<1x3x10x10xui8>
  %y = qnn.conv2d %p, %w, %zp, %kzp, %s, %s {channels = 4, kernel_size = [3, 3]} : (tensor<1x3x10x10xui8>, tensor<4x3x3x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<1x4x8x8xi32>
  func.return %y : tensor<1x4x8x8xi32>
}

// A pad by another value (0, zero point 7) stays.
// CHECK-LABEL: func.func @qconv_other_value(
// CHECK:       %p = relay.nn.pad %x, %v
// CHECK-NEXT:  %y = qnn.conv2d %p, %w
func.func @qconv_other_value(%x: tensor<1x3x8x8xui8>, %w: tensor<4x3x3x3xi8>) -> tensor<1x4x8x8xi32> {
  %v = relay.constant dense<0> : tensor<ui8>
  %zp = relay.constant dense<7> : tensor<i32>
  %kzp = relay.constant dense<0> : tensor<i32>
  %s = relay.constant dense<0.5> : tensor<f32>
  %p = relay.nn.pad %x, %v {pad_width = [[0, 0], [0, 0], [1, 1], [1, 1]]} : (tensor<1x3x8x8xui8>, tensor<ui8>) -> tensor<1x3x10x10xui8>
  %y = qnn.conv2d %p, %w, %zp, %kzp, %s, %s {channels = 4, kernel_size = [3, 3]} : (tensor<1x3x10x10xui8>, tensor<4x3x3x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<1x4x8x8xi32>
  func.return %y : tensor<1x4x8x8xi32>
}

// avg_pool2d without count_include_pad and with padding of its own: its divisor would count
// the folded zeros differently, so the pad stays.
// CHECK-LABEL: func.func @avg(
// CHECK:       %p = relay.nn.pad %x, %zero
// CHECK-NEXT:  %y = relay.nn.avg_pool2d %p {pool_size = [2, 2], padding = [0, 0, 1, 1]}
func.func @avg(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x9x9xf32> {
  %zero = relay.constant dense<0.0> : tensor<f32>
  %p = relay.nn.pad %x, %zero {pad_width = [[0, 0], [0, 0], [1, 0], [1, 0]]} : (tensor<1x3x8x8xf32>, tensor<f32>) -> tensor<1x3x9x9xf32>
  %y = relay.nn.avg_pool2d %p {pool_size = [2, 2], strides = [1, 1], padding = [0, 0, 1, 1]} : (tensor<1x3x9x9xf32>) -> tensor<1x3x9x9xf32>
  func.return %y : tensor<1x3x9x9xf32>
}

// Padding the channel axis cannot be a convolution's padding.
// CHECK-LABEL: func.func @channel_pad(
// CHECK:       %p = relay.nn.pad %x, %zero {pad_width = [[0, 0], [1, 1], [0, 0], [0, 0]]}
// CHECK-NEXT:  %y = relay.nn.conv2d %p, %w
func.func @channel_pad(%x: tensor<1x3x8x8xf32>, %w: tensor<4x5x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %zero = relay.constant dense<0.0> : tensor<f32>
  %p = relay.nn.pad %x, %zero {pad_width = [[0, 0], [1, 1], [0, 0], [0, 0]]} : (tensor<1x3x8x8xf32>, tensor<f32>) -> tensor<1x5x8x8xf32>
  %y = relay.nn.conv2d %p, %w : (tensor<1x5x8x8xf32>, tensor<4x5x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %y : tensor<1x4x6x6xf32>
}
