// RUN: relay-opt %s -p 'combine-split-conv2d' --split-input-file | filecheck %s
// RUN: relay-opt %s -p 'combine-split-conv2d{max-padded-ratio=1}' --split-input-file | filecheck %s --check-prefix=BOUND

// MixConv: the channels split in two, a 3x3 and a 5x5 depthwise convolution, concatenated:
// one 5x5 depthwise convolution whose first 3 kernels are the 3x3 ones framed by a zero tap.
// With max-padded-ratio=1 no zeros may be added: the pieces stay.
// BOUND-LABEL: func.func @mixconv(
// BOUND: relay.split
// BOUND: relay.concatenate %a, %b
// CHECK-LABEL: func.func @mixconv(
// CHECK-NEXT: %0 = relay.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT{LITERAL}: %1 = relay.nn.pad %w0, %0 {pad_width = [[0, 0], [0, 0], [1, 1], [1, 1]]} : (tensor<3x1x3x3xf32>, tensor<f32>) -> tensor<3x1x5x5xf32>
// CHECK-NEXT: %2 = relay.concatenate %1, %w1 : (tensor<3x1x5x5xf32>, tensor<3x1x5x5xf32>) -> tensor<6x1x5x5xf32>
// CHECK-NEXT: %y = relay.nn.conv2d %x, %2 {padding = [2, 2, 2, 2], groups = 6, channels = 6, kernel_size = [5, 5]} : (tensor<1x6x8x8xf32>, tensor<6x1x5x5xf32>) -> tensor<1x6x8x8xf32>
// CHECK-NEXT: func.return %y
func.func @mixconv(%x: tensor<1x6x8x8xf32>, %w0: tensor<3x1x3x3xf32>, %w1: tensor<3x1x5x5xf32>) -> tensor<1x6x8x8xf32> {
  %s:2 = relay.split %x {indices_or_sections = [3], axis = 1} : (tensor<1x6x8x8xf32>) -> (tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>)
  %a = relay.nn.conv2d %s#0, %w0 {padding = [1, 1, 1, 1], groups = 3, channels = 3, kernel_size = [3, 3]} : (tensor<1x3x8x8xf32>, tensor<3x1x3x3xf32>) -> tensor<1x3x8x8xf32>
  %b = relay.nn.conv2d %s#1, %w1 {padding = [2, 2, 2, 2], groups = 3, channels = 3, kernel_size = [5, 5]} : (tensor<1x3x8x8xf32>, tensor<3x1x5x5xf32>) -> tensor<1x3x8x8xf32>
  %y = relay.concatenate %a, %b {axis = 1} : (tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>) -> tensor<1x6x8x8xf32>
  func.return %y : tensor<1x6x8x8xf32>
}

// -----

// TensorFlow's "same" padding at stride 2 is asymmetric (3x3: 0 above, 1 below; 7x7: 2
// and 3): the 3x3 kernel framed by 2 zero taps has the 7x7 kernel's window. Three pieces of
// 5, 5 and 7 channels (not multiples of 8); the 5x5 piece is padded by 1.
// CHECK-LABEL: func.func @same_stride_2(
// CHECK: relay.nn.pad %w0, %{{.*}} {pad_width = {{\[\[}}0, 0], [0, 0], [2, 2], [2, 2]]}
// CHECK: relay.nn.pad %w1, %{{.*}} {pad_width = {{\[\[}}0, 0], [0, 0], [1, 1], [1, 1]]}
// CHECK: relay.concatenate %{{.*}}, %{{.*}}, %w2 : (tensor<5x1x7x7xf32>, tensor<5x1x7x7xf32>, tensor<7x1x7x7xf32>) -> tensor<17x1x7x7xf32>
// CHECK: %y = relay.nn.conv2d %x, %{{.*}} {strides = [2, 2], padding = [2, 2, 3, 3], groups = 17, channels = 17, kernel_size = [7, 7]} : (tensor<1x17x10x10xf32>, tensor<17x1x7x7xf32>) -> tensor<1x17x5x5xf32>
// CHECK-NOT: relay.split
func.func @same_stride_2(%x: tensor<1x17x10x10xf32>, %w0: tensor<5x1x3x3xf32>, %w1: tensor<5x1x5x5xf32>, %w2: tensor<7x1x7x7xf32>) -> tensor<1x17x5x5xf32> {
  %s:3 = relay.split %x {indices_or_sections = [5, 10], axis = 1} : (tensor<1x17x10x10xf32>) -> (tensor<1x5x10x10xf32>, tensor<1x5x10x10xf32>, tensor<1x7x10x10xf32>)
  %a = relay.nn.conv2d %s#0, %w0 {strides = [2, 2], padding = [0, 0, 1, 1], groups = 5, channels = 5, kernel_size = [3, 3]} : (tensor<1x5x10x10xf32>, tensor<5x1x3x3xf32>) -> tensor<1x5x5x5xf32>
  %b = relay.nn.conv2d %s#1, %w1 {strides = [2, 2], padding = [1, 1, 2, 2], groups = 5, channels = 5, kernel_size = [5, 5]} : (tensor<1x5x10x10xf32>, tensor<5x1x5x5xf32>) -> tensor<1x5x5x5xf32>
  %c = relay.nn.conv2d %s#2, %w2 {strides = [2, 2], padding = [2, 2, 3, 3], groups = 7, channels = 7, kernel_size = [7, 7]} : (tensor<1x7x10x10xf32>, tensor<7x1x7x7xf32>) -> tensor<1x7x5x5xf32>
  %y = relay.concatenate %a, %b, %c {axis = 1} : (tensor<1x5x5x5xf32>, tensor<1x5x5x5xf32>, tensor<1x7x5x5xf32>) -> tensor<1x17x5x5xf32>
  func.return %y : tensor<1x17x5x5xf32>
}

// -----

// A grouped 1x1 convolution written as split and one ordinary convolution per piece: groups
// = 2, the weights stacked, nothing padded.
// BOUND-LABEL: func.func @grouped_pointwise(
// BOUND-NOT: relay.split
// CHECK-LABEL: func.func @grouped_pointwise(
// CHECK-NEXT: %0 = relay.concatenate %w0, %w1 : (tensor<6x5x1x1xf32>, tensor<6x5x1x1xf32>) -> tensor<12x5x1x1xf32>
// CHECK-NEXT: %y = relay.nn.conv2d %x, %0 {groups = 2, channels = 12, kernel_size = [1, 1]} : (tensor<1x10x7x7xf32>, tensor<12x5x1x1xf32>) -> tensor<1x12x7x7xf32>
// CHECK-NEXT: func.return %y
func.func @grouped_pointwise(%x: tensor<1x10x7x7xf32>, %w0: tensor<6x5x1x1xf32>, %w1: tensor<6x5x1x1xf32>) -> tensor<1x12x7x7xf32> {
  %s:2 = relay.split %x {indices_or_sections = 2, axis = 1} : (tensor<1x10x7x7xf32>) -> (tensor<1x5x7x7xf32>, tensor<1x5x7x7xf32>)
  %a = relay.nn.conv2d %s#0, %w0 {padding = [0, 0, 0, 0]} : (tensor<1x5x7x7xf32>, tensor<6x5x1x1xf32>) -> tensor<1x6x7x7xf32>
  %b = relay.nn.conv2d %s#1, %w1 {padding = [0, 0, 0, 0]} : (tensor<1x5x7x7xf32>, tensor<6x5x1x1xf32>) -> tensor<1x6x7x7xf32>
  %y = relay.concatenate %a, %b {axis = 1} : (tensor<1x6x7x7xf32>, tensor<1x6x7x7xf32>) -> tensor<1x12x7x7xf32>
  func.return %y : tensor<1x12x7x7xf32>
}

// -----

// The pieces as strided_slices (an exporter's Slice) in channels-last layout, one piece with
// a bias: the biases are concatenated, zeros for the piece without one; dilation 2 pads the
// 3x3 kernel by one tap for the 5x5 one's window.
// BOUND-LABEL: func.func @slices_bias_nhwc(
// CHECK-LABEL: func.func @slices_bias_nhwc(
// CHECK: %[[P:.*]] = relay.nn.pad %w0, %{{.*}} {pad_width = {{\[\[}}1, 1], [1, 1], [0, 0], [0, 0]]} : (tensor<3x3x1x4xf32>, tensor<f32>) -> tensor<5x5x1x4xf32>
// CHECK: %[[W:.*]] = relay.concatenate %[[P]], %w1 {axis = 3} : (tensor<5x5x1x4xf32>, tensor<5x5x1x3xf32>) -> tensor<5x5x1x7xf32>
// CHECK: %[[C:.*]] = relay.nn.conv2d %x, %[[W]] {padding = [4, 4, 4, 4], dilation = [2, 2], groups = 7, channels = 7, kernel_size = [5, 5], data_layout = "NHWC", kernel_layout = "HWIO"}
// CHECK: %[[Z:.*]] = relay.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK: %[[B:.*]] = relay.concatenate %bias, %[[Z]] : (tensor<4xf32>, tensor<3xf32>) -> tensor<7xf32>
// CHECK: %y = relay.nn.bias_add %[[C]], %[[B]] {axis = 3} : (tensor<1x9x9x7xf32>, tensor<7xf32>) -> tensor<1x9x9x7xf32>
// CHECK-NOT: relay.strided_slice
func.func @slices_bias_nhwc(%x: tensor<1x9x9x7xf32>, %w0: tensor<3x3x1x4xf32>, %w1: tensor<5x5x1x3xf32>, %bias: tensor<4xf32>) -> tensor<1x9x9x7xf32> {
  %p = relay.strided_slice %x {begin = [0], end = [4], strides = [1], axes = [3]} : (tensor<1x9x9x7xf32>) -> tensor<1x9x9x4xf32>
  %q = relay.strided_slice %x {begin = [4], end = [7], strides = [1], axes = [3]} : (tensor<1x9x9x7xf32>) -> tensor<1x9x9x3xf32>
  %a = relay.nn.conv2d %p, %w0 {padding = [2, 2, 2, 2], dilation = [2, 2], groups = 4, channels = 4, kernel_size = [3, 3], data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x9x9x4xf32>, tensor<3x3x1x4xf32>) -> tensor<1x9x9x4xf32>
  %ab = relay.nn.bias_add %a, %bias {axis = 3} : (tensor<1x9x9x4xf32>, tensor<4xf32>) -> tensor<1x9x9x4xf32>
  %b = relay.nn.conv2d %q, %w1 {padding = [4, 4, 4, 4], dilation = [2, 2], groups = 3, channels = 3, kernel_size = [5, 5], data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x9x9x3xf32>, tensor<5x5x1x3xf32>) -> tensor<1x9x9x3xf32>
  %y = relay.concatenate %ab, %b {axis = 3} : (tensor<1x9x9x4xf32>, tensor<1x9x9x3xf32>) -> tensor<1x9x9x7xf32>
  func.return %y : tensor<1x9x9x7xf32>
}

// -----

// At stride 2 the padding below only decides how many outputs fit: a 3x3 kernel padded 1
// on every side and a 5x5 one padded 2 above and left, 1 below and right, both give 4x4
// outputs of an 8x8 input; the 3x3 kernel framed by one zero tap reads the same rows.
// CHECK-LABEL: func.func @bottoms(
// CHECK: relay.nn.pad %w0, %{{.*}} {pad_width = {{\[\[}}0, 0], [0, 0], [1, 1], [1, 1]]}
// CHECK: %y = relay.nn.conv2d %x, %{{.*}} {strides = [2, 2], padding = [2, 2, 1, 1], groups = 5, channels = 5, kernel_size = [5, 5]} : (tensor<1x5x8x8xf32>, tensor<5x1x5x5xf32>) -> tensor<1x5x4x4xf32>
func.func @bottoms(%x: tensor<1x5x8x8xf32>, %w0: tensor<3x1x3x3xf32>, %w1: tensor<2x1x5x5xf32>) -> tensor<1x5x4x4xf32> {
  %s:2 = relay.split %x {indices_or_sections = [3], axis = 1} : (tensor<1x5x8x8xf32>) -> (tensor<1x3x8x8xf32>, tensor<1x2x8x8xf32>)
  %a = relay.nn.conv2d %s#0, %w0 {strides = [2, 2], padding = [1, 1, 1, 1], groups = 3, channels = 3, kernel_size = [3, 3]} : (tensor<1x3x8x8xf32>, tensor<3x1x3x3xf32>) -> tensor<1x3x4x4xf32>
  %b = relay.nn.conv2d %s#1, %w1 {strides = [2, 2], padding = [2, 2, 1, 1], groups = 2, channels = 2, kernel_size = [5, 5]} : (tensor<1x2x8x8xf32>, tensor<2x1x5x5xf32>) -> tensor<1x2x4x4xf32>
  %y = relay.concatenate %a, %b {axis = 1} : (tensor<1x3x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x5x4x4xf32>
  func.return %y : tensor<1x5x4x4xf32>
}

// -----

// Left as they are: pieces concatenated out of order (%swapped), a convolution with another
// user (%shared), pieces whose groups read different numbers of channels (%uneven: 4 and 6),
// a convolution whose groups read several channels with kernels of different sizes
// (%dense_kernels: the zeros would be real multiply-adds), a 3x3 window that starts above
// the 5x5 one's (%above: padded 2 above, the 5x5 kernel 1) and a dilated 3x3 window that
// starts between the dilated 5x5 one's taps (%between: padded 2 above, the 5x5 kernel 3,
// dilation 2).
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: relay.nn.pad
// CHECK: %swapped = relay.concatenate %b, %a
// CHECK: %shared = relay.concatenate %c, %d
// CHECK: %uneven = relay.concatenate %f, %g
// CHECK: %dense_kernels = relay.concatenate %h, %i
// CHECK: %above = relay.concatenate %j, %k
// CHECK: %between = relay.concatenate %l, %m
func.func @kept(%x: tensor<1x10x6x6xf32>, %w: tensor<5x1x3x3xf32>, %v: tensor<5x1x5x5xf32>, %u4: tensor<2x4x1x1xf32>, %u6: tensor<2x6x1x1xf32>, %d3: tensor<2x5x3x3xf32>, %d5: tensor<2x5x5x5xf32>) -> (tensor<1x10x6x6xf32>, tensor<1x10x6x6xf32>, tensor<1x5x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x10x6x6xf32>, tensor<1x10x6x6xf32>) {
  %s:2 = relay.split %x {indices_or_sections = 2, axis = 1} : (tensor<1x10x6x6xf32>) -> (tensor<1x5x6x6xf32>, tensor<1x5x6x6xf32>)
  %a = relay.nn.conv2d %s#0, %w {padding = [1, 1, 1, 1], groups = 5, channels = 5, kernel_size = [3, 3]} : (tensor<1x5x6x6xf32>, tensor<5x1x3x3xf32>) -> tensor<1x5x6x6xf32>
  %b = relay.nn.conv2d %s#1, %v {padding = [2, 2, 2, 2], groups = 5, channels = 5, kernel_size = [5, 5]} : (tensor<1x5x6x6xf32>, tensor<5x1x5x5xf32>) -> tensor<1x5x6x6xf32>
  %swapped = relay.concatenate %b, %a {axis = 1} : (tensor<1x5x6x6xf32>, tensor<1x5x6x6xf32>) -> tensor<1x10x6x6xf32>
  %t:2 = relay.split %x {indices_or_sections = 2, axis = 1} : (tensor<1x10x6x6xf32>) -> (tensor<1x5x6x6xf32>, tensor<1x5x6x6xf32>)
  %c = relay.nn.conv2d %t#0, %w {padding = [1, 1, 1, 1], groups = 5, channels = 5, kernel_size = [3, 3]} : (tensor<1x5x6x6xf32>, tensor<5x1x3x3xf32>) -> tensor<1x5x6x6xf32>
  %d = relay.nn.conv2d %t#1, %v {padding = [2, 2, 2, 2], groups = 5, channels = 5, kernel_size = [5, 5]} : (tensor<1x5x6x6xf32>, tensor<5x1x5x5xf32>) -> tensor<1x5x6x6xf32>
  %shared = relay.concatenate %c, %d {axis = 1} : (tensor<1x5x6x6xf32>, tensor<1x5x6x6xf32>) -> tensor<1x10x6x6xf32>
  %e = relay.nn.relu %c : (tensor<1x5x6x6xf32>) -> tensor<1x5x6x6xf32>
  %r:2 = relay.split %x {indices_or_sections = [4], axis = 1} : (tensor<1x10x6x6xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x6x6x6xf32>)
  %f = relay.nn.conv2d %r#0, %u4 {padding = [0, 0, 0, 0]} : (tensor<1x4x6x6xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x6x6xf32>
  %g = relay.nn.conv2d %r#1, %u6 {padding = [0, 0, 0, 0]} : (tensor<1x6x6x6xf32>, tensor<2x6x1x1xf32>) -> tensor<1x2x6x6xf32>
  %uneven = relay.concatenate %f, %g {axis = 1} : (tensor<1x2x6x6xf32>, tensor<1x2x6x6xf32>) -> tensor<1x4x6x6xf32>
  %q:2 = relay.split %x {indices_or_sections = 2, axis = 1} : (tensor<1x10x6x6xf32>) -> (tensor<1x5x6x6xf32>, tensor<1x5x6x6xf32>)
  %h = relay.nn.conv2d %q#0, %d3 {padding = [1, 1, 1, 1]} : (tensor<1x5x6x6xf32>, tensor<2x5x3x3xf32>) -> tensor<1x2x6x6xf32>
  %i = relay.nn.conv2d %q#1, %d5 {padding = [2, 2, 2, 2]} : (tensor<1x5x6x6xf32>, tensor<2x5x5x5xf32>) -> tensor<1x2x6x6xf32>
  %dense_kernels = relay.concatenate %h, %i {axis = 1} : (tensor<1x2x6x6xf32>, tensor<1x2x6x6xf32>) -> tensor<1x4x6x6xf32>
  %z:2 = relay.split %x {indices_or_sections = 2, axis = 1} : (tensor<1x10x6x6xf32>) -> (tensor<1x5x6x6xf32>, tensor<1x5x6x6xf32>)
  %j = relay.nn.conv2d %z#0, %w {padding = [2, 2, 0, 0], groups = 5, channels = 5, kernel_size = [3, 3]} : (tensor<1x5x6x6xf32>, tensor<5x1x3x3xf32>) -> tensor<1x5x6x6xf32>
  %k = relay.nn.conv2d %z#1, %v {padding = [1, 1, 3, 3], groups = 5, channels = 5, kernel_size = [5, 5]} : (tensor<1x5x6x6xf32>, tensor<5x1x5x5xf32>) -> tensor<1x5x6x6xf32>
  %above = relay.concatenate %j, %k {axis = 1} : (tensor<1x5x6x6xf32>, tensor<1x5x6x6xf32>) -> tensor<1x10x6x6xf32>
  %n:2 = relay.split %x {indices_or_sections = 2, axis = 1} : (tensor<1x10x6x6xf32>) -> (tensor<1x5x6x6xf32>, tensor<1x5x6x6xf32>)
  %l = relay.nn.conv2d %n#0, %w {padding = [2, 2, 2, 2], dilation = [2, 2], groups = 5, channels = 5, kernel_size = [3, 3]} : (tensor<1x5x6x6xf32>, tensor<5x1x3x3xf32>) -> tensor<1x5x6x6xf32>
  %m = relay.nn.conv2d %n#1, %v {padding = [3, 3, 5, 5], dilation = [2, 2], groups = 5, channels = 5, kernel_size = [5, 5]} : (tensor<1x5x6x6xf32>, tensor<5x1x5x5xf32>) -> tensor<1x5x6x6xf32>
  %between = relay.concatenate %l, %m {axis = 1} : (tensor<1x5x6x6xf32>, tensor<1x5x6x6xf32>) -> tensor<1x10x6x6xf32>
  func.return %swapped, %shared, %e, %uneven, %dense_kernels, %above, %between : tensor<1x10x6x6xf32>, tensor<1x10x6x6xf32>, tensor<1x5x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x10x6x6xf32>, tensor<1x10x6x6xf32>
}
