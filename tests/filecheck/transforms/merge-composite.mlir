// RUN: relay-opt %s -p 'merge-composite{pattern-table=dnnl}' --split-input-file | filecheck %s

// conv2d + bias add + relu becomes one dnnl.conv2d_bias_relu composite; tanh stays
func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32> {
  %c = relay.nn.conv2d %x, %w {channels = 4, kernel_size = [3, 3]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %a = relay.add %c, %b : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %r = relay.nn.relu %a : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %t = relay.tanh %r : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  func.return %t : tensor<1x4x6x6xf32>
}

// CHECK:      func.func private @dnnl_conv2d_bias_relu(%p0: tensor<1x3x8x8xf32>, %p1: tensor<4x3x3x3xf32>, %p2: tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32> attributes {relay.composite = "dnnl.conv2d_bias_relu", relay.partitioned_from_pattern = "nn.conv2d_add_nn.relu_"} {
// CHECK-NEXT:   %c = relay.nn.conv2d %p0, %p1 {channels = 4, kernel_size = [3, 3]}
// CHECK-NEXT:   %a = relay.add %c, %p2
// CHECK-NEXT:   %r = relay.nn.relu %a
// CHECK-NEXT:   func.return %r
// CHECK:      func.func @main
// CHECK-NEXT:   %r = func.call @dnnl_conv2d_bias_relu(%x, %w, %b)
// CHECK-NEXT:   %t = relay.tanh %r
// CHECK-NEXT:   func.return %t

// -----

// Relay's bias-add predicate rejects a conv2d without `channels`: conv2d_bias_relu and
// conv2d_bias do not apply, and conv2d_relu cannot match across the add, so nothing is outlined
func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32> {
  %c = relay.nn.conv2d %x, %w {kernel_size = [3, 3]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %a = relay.add %c, %b : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %r = relay.nn.relu %a : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  func.return %r : tensor<1x4x6x6xf32>
}

// CHECK-NOT:  relay.composite
// CHECK:      func.func @main
// CHECK-NEXT:   relay.nn.conv2d
// CHECK-NEXT:   relay.add
// CHECK-NEXT:   relay.nn.relu

// -----

// dense + bias + gelu (Relay's erf form) is dnnl.dense_bias_gelu; %k, matched by three
// wildcards, is one parameter
func.func @main(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>, %k: tensor<f32>) -> tensor<2x4xf32> {
  %d = relay.nn.dense %x, %w : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  %a = relay.add %d, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %q = relay.divide %a, %k : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %e = relay.erf %q : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %h = relay.add %e, %k : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %m = relay.multiply %a, %h : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %o = relay.multiply %m, %k : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  func.return %o : tensor<2x4xf32>
}

// CHECK:      func.func private @dnnl_dense_bias_gelu(%p0: tensor<2x8xf32>, %p1: tensor<4x8xf32>, %p2: tensor<4xf32>, %p3: tensor<f32>) -> tensor<2x4xf32>
// CHECK-SAME:   relay.composite = "dnnl.dense_bias_gelu", relay.partitioned_from_pattern = "nn.dense_add_divide_erf_add_multiply_multiply_"
// CHECK:      func.func @main
// CHECK-NEXT:   %o = func.call @dnnl_dense_bias_gelu(%x, %w, %b, %k)
// CHECK-NEXT:   func.return %o

// -----

// a GELU after an op no pattern anchors (here a transpose) is dnnl.gelu by itself, in
// the canonical form (the reciprocal of sqrt 2, the 0.5 outermost); the transpose stays
func.func @main(%x: tensor<2x4x8xf32>, %r: tensor<f32>, %one: tensor<f32>, %half: tensor<f32>) -> tensor<2x8x4xf32> {
  %t = relay.transpose %x {axes = [0, 2, 1]} : (tensor<2x4x8xf32>) -> tensor<2x8x4xf32>
  %q = relay.multiply %t, %r : (tensor<2x8x4xf32>, tensor<f32>) -> tensor<2x8x4xf32>
  %e = relay.erf %q : (tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %h = relay.add %e, %one : (tensor<2x8x4xf32>, tensor<f32>) -> tensor<2x8x4xf32>
  %m = relay.multiply %t, %h : (tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = relay.multiply %m, %half : (tensor<2x8x4xf32>, tensor<f32>) -> tensor<2x8x4xf32>
  func.return %o : tensor<2x8x4xf32>
}

// CHECK:      func.func private @dnnl_gelu(%p0: tensor<2x8x4xf32>, %p1: tensor<f32>, %p2: tensor<f32>, %p3: tensor<f32>) -> tensor<2x8x4xf32>
// CHECK-SAME:   relay.composite = "dnnl.gelu", relay.partitioned_from_pattern = "multiply_erf_add_multiply_multiply_"
// CHECK:      func.func @main
// CHECK-NEXT:   %t = relay.transpose %x
// CHECK-NEXT:   %o = func.call @dnnl_gelu(%t, %r, %one, %half)
// CHECK-NEXT:   func.return %o

// -----

// a transposed convolution's bias (its `channels` elements) and ReLU: one
// dnnl.deconv2d_bias_relu composite, as a convolution's (oneDNN's deconvolution with post-ops)
func.func @main(%x: tensor<1x8x4x4xf32>, %w: tensor<8x6x3x3xf32>, %b: tensor<6x1x1xf32>) -> tensor<1x6x8x8xf32> {
  %c = relay.nn.conv2d_transpose %x, %w {channels = 6, kernel_size = [3, 3], strides = [2, 2], padding = [1, 1, 1, 1], output_padding = [1, 1]} : (tensor<1x8x4x4xf32>, tensor<8x6x3x3xf32>) -> tensor<1x6x8x8xf32>
  %a = relay.add %c, %b : (tensor<1x6x8x8xf32>, tensor<6x1x1xf32>) -> tensor<1x6x8x8xf32>
  %r = relay.nn.relu %a : (tensor<1x6x8x8xf32>) -> tensor<1x6x8x8xf32>
  func.return %r : tensor<1x6x8x8xf32>
}

// CHECK:      func.func private @dnnl_deconv2d_bias_relu(%p0: tensor<1x8x4x4xf32>, %p1: tensor<8x6x3x3xf32>, %p2: tensor<6x1x1xf32>) -> tensor<1x6x8x8xf32> attributes {relay.composite = "dnnl.deconv2d_bias_relu"
// CHECK-NEXT:   %c = relay.nn.conv2d_transpose %p0, %p1
// CHECK-NEXT:   %a = relay.add %c, %p2
// CHECK-NEXT:   %r = relay.nn.relu %a
// CHECK-NEXT:   func.return %r
// CHECK:      func.func @main
// CHECK-NEXT:   %r = func.call @dnnl_deconv2d_bias_relu(%x, %w, %b)
// CHECK-NEXT:   func.return %r
