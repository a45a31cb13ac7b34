// RUN: relay-opt %s -p 'convert-layout{desired-layouts="nn.conv2d=NHWC,default;nn.conv2d_transpose=NHWC,default;nn.global_max_pool2d=NHWC;qnn.conv2d=NHWC,default;vision.roi_align=NHWC,default"}' --split-input-file 2>/dev/null | filecheck %s
// RUN: not relay-opt %s -p 'convert-layout{desired-layouts="nn.conv2d=default,HWIO"}' 2>&1 | filecheck %s --check-prefix=DEFAULT
// RUN: relay-opt %s -p 'convert-layout{desired-layouts="nn.relu=NHWC"}' 2>&1 >/dev/null | filecheck %s --check-prefix=NOCONV
// RUN: not relay-opt %s -p 'convert-layout{desired-layouts="nn.conv2d=NHWC"}' 2>&1 | filecheck %s --check-prefix=ARITY
// RUN: not relay-opt %s -p 'convert-layout{desired-layouts="nn.conv2d=NH3WC,default"}' 2>&1 | filecheck %s --check-prefix=BAD

// DEFAULT: convert-layout: 'nn.conv2d': data layout cannot be 'default'
// NOCONV: convert-layout: op 'nn.relu' has no layout conversion; its desired layouts are ignored (convertible: image.resize1d, image.resize2d, nn.avg_pool2d, nn.conv2d, nn.conv2d_transpose, nn.conv3d, nn.deformable_conv2d,
// ARITY: convert-layout: 'nn.conv2d' needs 2 desired layout(s), got ['NHWC']
// BAD: convert-layout: nn.conv2d: invalid layout 'NH3WC'

// The conv's input and weight are transformed, relu follows, the result goes back to NCHW.
// CHECK-LABEL: func.func @conv_relu(
// CHECK-NEXT:  %0 = relay.layout_transform %x {src_layout = "NCHW", dst_layout = "NHWC"} : (tensor<1x8x6x6xf32>) -> tensor<1x6x6x8xf32>
// CHECK-NEXT:  %1 = relay.layout_transform %w {src_layout = "OIHW", dst_layout = "HWIO"} : (tensor<4x8x3x3xf32>) -> tensor<3x3x8x4xf32>
// CHECK-NEXT:  %y = relay.nn.conv2d %0, %1 {padding = [1, 1, 1, 1], data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x6x6x8xf32>, tensor<3x3x8x4xf32>) -> tensor<1x6x6x4xf32>
// CHECK-NEXT:  %r = relay.nn.relu %y : (tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
// CHECK-NEXT:  %2 = relay.layout_transform %r {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x6x6x4xf32>) -> tensor<1x4x6x6xf32>
// CHECK-NEXT:  func.return %2 : tensor<1x4x6x6xf32>
// CHECK-NEXT:  }
func.func @conv_relu(%x: tensor<1x8x6x6xf32>, %w: tensor<4x8x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]} : (tensor<1x8x6x6xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r = relay.nn.relu %y : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  func.return %r : tensor<1x4x6x6xf32>
}

// -----

// A per-channel operand (CHW) is expanded and transformed like the conv output; the pools
// (no desired layout) follow NHWC, concatenate and mean move their axes; the mean (NC) needs
// no transform back.
// CHECK-LABEL: func.func @bias_pool_concat(
// CHECK-NEXT:  %0 = relay.layout_transform %x {src_layout = "NCHW", dst_layout = "NHWC"} : (tensor<1x8x6x6xf32>) -> tensor<1x6x6x8xf32>
// CHECK-NEXT:  %1 = relay.layout_transform %w {src_layout = "OIHW", dst_layout = "HWIO"} : (tensor<4x8x3x3xf32>) -> tensor<3x3x8x4xf32>
// CHECK-NEXT:  %y = relay.nn.conv2d %0, %1 {padding = [1, 1, 1, 1], data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x6x6x8xf32>, tensor<3x3x8x4xf32>) -> tensor<1x6x6x4xf32>
// CHECK-NEXT:  %e = relay.expand_dims %b {axis = 1, num_newaxis = 2} : (tensor<4xf32>) -> tensor<4x1x1xf32>
// CHECK-NEXT:  %2 = relay.expand_dims %e {axis = 0} : (tensor<4x1x1xf32>) -> tensor<1x4x1x1xf32>
// CHECK-NEXT:  %3 = relay.layout_transform %2 {src_layout = "NCHW", dst_layout = "NHWC"} : (tensor<1x4x1x1xf32>) -> tensor<1x1x1x4xf32>
// CHECK-NEXT:  %a = relay.add %y, %3 : (tensor<1x6x6x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x6x6x4xf32>
// CHECK-NEXT:  %p = relay.nn.max_pool2d %a {pool_size = [2, 2], strides = [2, 2], layout = "NHWC"} : (tensor<1x6x6x4xf32>) -> tensor<1x3x3x4xf32>
// CHECK-NEXT:  %q = relay.nn.avg_pool2d %a {pool_size = [2, 2], strides = [2, 2], layout = "NHWC"} : (tensor<1x6x6x4xf32>) -> tensor<1x3x3x4xf32>
// CHECK-NEXT:  %c = relay.concatenate %p, %q {axis = 3} : (tensor<1x3x3x4xf32>, tensor<1x3x3x4xf32>) -> tensor<1x3x3x8xf32>
// CHECK-NEXT:  %s = relay.mean %c {axis = [1, 2]} : (tensor<1x3x3x8xf32>) -> tensor<1x8xf32>
// CHECK-NEXT:  %4 = relay.layout_transform %c {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x3x3x8xf32>) -> tensor<1x8x3x3xf32>
// CHECK-NEXT:  func.return %4, %s : tensor<1x8x3x3xf32>, tensor<1x8xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  }
func.func @bias_pool_concat(%x: tensor<1x8x6x6xf32>, %w: tensor<4x8x3x3xf32>, %b: tensor<4xf32>) -> (tensor<1x8x3x3xf32>, tensor<1x8xf32>) {
  %y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]} : (tensor<1x8x6x6xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x6x6xf32>
  %e = relay.expand_dims %b {axis = 1, num_newaxis = 2} : (tensor<4xf32>) -> tensor<4x1x1xf32>
  %a = relay.add %y, %e : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %p = relay.nn.max_pool2d %a {pool_size = [2, 2], strides = [2, 2]} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  %q = relay.nn.avg_pool2d %a {pool_size = [2, 2], strides = [2, 2]} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  %c = relay.concatenate %p, %q {axis = 1} : (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<1x8x3x3xf32>
  %s = relay.mean %c {axis = [2, 3]} : (tensor<1x8x3x3xf32>) -> tensor<1x8xf32>
  func.return %c, %s : tensor<1x8x3x3xf32>, tensor<1x8xf32>
}

// -----

// batch_norm, pad, split, strided_slice and transpose follow NHWC (axes and widths move);
// the transpose becomes the identity and its result (NHWC before and after) is returned as is.
// CHECK-LABEL: func.func @follow(
// CHECK-NEXT:  %0 = relay.layout_transform %x {src_layout = "NCHW", dst_layout = "NHWC"} : (tensor<1x8x6x6xf32>) -> tensor<1x6x6x8xf32>
// CHECK-NEXT:  %1 = relay.layout_transform %w {src_layout = "OIHW", dst_layout = "HWIO"} : (tensor<8x8x3x3xf32>) -> tensor<3x3x8x8xf32>
// CHECK-NEXT:  %y = relay.nn.conv2d %0, %1 {padding = [1, 1, 1, 1], data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x6x6x8xf32>, tensor<3x3x8x8xf32>) -> tensor<1x6x6x8xf32>
// CHECK-NEXT:  %bn, %bn_1, %bn_2 = relay.nn.batch_norm %y, %g, %bb, %m, %v {axis = 3} : (tensor<1x6x6x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<1x6x6x8xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK-NEXT:  %p = relay.nn.pad %bn, %pv {pad_width = [[0, 0], [1, 1], [1, 1], [0, 0]]} : (tensor<1x6x6x8xf32>, tensor<f32>) -> tensor<1x8x8x8xf32>
// CHECK-NEXT:  %s, %s_1 = relay.split %p {indices_or_sections = 2, axis = 3} : (tensor<1x8x8x8xf32>) -> (tensor<1x8x8x4xf32>, tensor<1x8x8x4xf32>)
// CHECK-NEXT:  %t = relay.strided_slice %bn {begin = [0, 1, 0, 0], end = [1, 3, 6, 8], strides = [1, 1, 1, 1]} : (tensor<1x6x6x8xf32>) -> tensor<1x2x6x8xf32>
// CHECK-NEXT:  %u = relay.transpose %bn {axes = [0, 1, 2, 3]} : (tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>
// CHECK-NEXT:  %2 = relay.layout_transform %s {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT:  %3 = relay.layout_transform %s_1 {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT:  %4 = relay.layout_transform %t {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x2x6x8xf32>) -> tensor<1x8x2x6xf32>
// CHECK-NEXT:  func.return %2, %3, %4, %u : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x8x2x6xf32>, tensor<1x6x6x8xf32>
// CHECK-NEXT:  }
func.func @follow(%x: tensor<1x8x6x6xf32>, %w: tensor<8x8x3x3xf32>, %g: tensor<8xf32>, %bb: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>, %pv: tensor<f32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x8x2x6xf32>, tensor<1x6x6x8xf32>) {
  %y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]} : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  %bn:3 = relay.nn.batch_norm %y, %g, %bb, %m, %v : (tensor<1x8x6x6xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<1x8x6x6xf32>, tensor<8xf32>, tensor<8xf32>)
  %p = relay.nn.pad %bn#0, %pv {pad_width = [[0, 0], [0, 0], [1, 1], [1, 1]]} : (tensor<1x8x6x6xf32>, tensor<f32>) -> tensor<1x8x8x8xf32>
  %s:2 = relay.split %p {indices_or_sections = 2, axis = 1} : (tensor<1x8x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>)
  %t = relay.strided_slice %bn#0 {begin = [0, 0, 1, 0], end = [1, 8, 3, 6]} : (tensor<1x8x6x6xf32>) -> tensor<1x8x2x6xf32>
  %u = relay.transpose %bn#0 {axes = [0, 2, 3, 1]} : (tensor<1x8x6x6xf32>) -> tensor<1x6x6x8xf32>
  func.return %s#0, %s#1, %t, %u : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x8x2x6xf32>, tensor<1x6x6x8xf32>
}

// -----

// conv2d_transpose: IOHW -> HWIO; the global pool converts, the adaptive pool follows.
// CHECK-LABEL: func.func @transpose_conv_pools(
// CHECK-NEXT:  %0 = relay.layout_transform %x {src_layout = "NCHW", dst_layout = "NHWC"} : (tensor<1x8x4x4xf32>) -> tensor<1x4x4x8xf32>
// CHECK-NEXT:  %1 = relay.layout_transform %w {src_layout = "IOHW", dst_layout = "HWIO"} : (tensor<8x4x3x3xf32>) -> tensor<3x3x8x4xf32>
// CHECK-NEXT:  %y = relay.nn.conv2d_transpose %0, %1 {strides = [2, 2], data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x4x4x8xf32>, tensor<3x3x8x4xf32>) -> tensor<1x9x9x4xf32>
// CHECK-NEXT:  %g = relay.nn.global_max_pool2d %y {layout = "NHWC", out_layout = "NHWC"} : (tensor<1x9x9x4xf32>) -> tensor<1x1x1x4xf32>
// CHECK-NEXT:  %a = relay.nn.adaptive_avg_pool2d %y {output_size = [1, 1], layout = "NHWC"} : (tensor<1x9x9x4xf32>) -> tensor<1x1x1x4xf32>
// CHECK-NEXT:  %2 = relay.layout_transform %g {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x1x1x4xf32>) -> tensor<1x4x1x1xf32>
// CHECK-NEXT:  %3 = relay.layout_transform %a {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x1x1x4xf32>) -> tensor<1x4x1x1xf32>
// CHECK-NEXT:  func.return %2, %3 : tensor<1x4x1x1xf32>, tensor<1x4x1x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  }
func.func @transpose_conv_pools(%x: tensor<1x8x4x4xf32>, %w: tensor<8x4x3x3xf32>) -> (tensor<1x4x1x1xf32>, tensor<1x4x1x1xf32>) {
  %y = relay.nn.conv2d_transpose %x, %w {strides = [2, 2]} : (tensor<1x8x4x4xf32>, tensor<8x4x3x3xf32>) -> tensor<1x4x9x9xf32>
  %g = relay.nn.global_max_pool2d %y : (tensor<1x4x9x9xf32>) -> tensor<1x4x1x1xf32>
  %a = relay.nn.adaptive_avg_pool2d %y {output_size = [1, 1]} : (tensor<1x4x9x9xf32>) -> tensor<1x4x1x1xf32>
  func.return %g, %a : tensor<1x4x1x1xf32>, tensor<1x4x1x1xf32>
}

// -----

// qnn.conv2d converts like nn.conv2d (its scales and zero points are channel vectors and stay
// as they are); qnn.requantize follows NHWC and moves its axis to 3.
// CHECK-LABEL: func.func @qnn_conv_requantize(
// CHECK-NEXT:  %zp = relay.constant dense<0> : tensor<i32>
// CHECK-NEXT:  %sc = relay.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:  %0 = relay.layout_transform %x {src_layout = "NCHW", dst_layout = "NHWC"} : (tensor<1x8x6x6xi8>) -> tensor<1x6x6x8xi8>
// CHECK-NEXT:  %1 = relay.layout_transform %w {src_layout = "OIHW", dst_layout = "HWIO"} : (tensor<4x8x3x3xi8>) -> tensor<3x3x8x4xi8>
// CHECK-NEXT:  %y = qnn.conv2d %0, %1, %zp, %zp, %sc, %s {padding = [1, 1, 1, 1], channels = 4, kernel_size = [3, 3], data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x6x6x8xi8>, tensor<3x3x8x4xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<4xf32>) -> tensor<1x6x6x4xi32>
// CHECK-NEXT:  %r = qnn.requantize %y, %s, %zp, %sc, %zp {axis = 3} : (tensor<1x6x6x4xi32>, tensor<4xf32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x6x6x4xi8>
// CHECK-NEXT:  %2 = relay.layout_transform %r {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x6x6x4xi8>) -> tensor<1x4x6x6xi8>
// CHECK-NEXT:  func.return %2 : tensor<1x4x6x6xi8>
// CHECK-NEXT:  }
func.func @qnn_conv_requantize(%x: tensor<1x8x6x6xi8>, %w: tensor<4x8x3x3xi8>, %s: tensor<4xf32>) -> tensor<1x4x6x6xi8> {
  %zp = relay.constant dense<0> : tensor<i32>
  %sc = relay.constant dense<0.5> : tensor<f32>
  %y = qnn.conv2d %x, %w, %zp, %zp, %sc, %s {padding = [1, 1, 1, 1], channels = 4, kernel_size = [3, 3]} : (tensor<1x8x6x6xi8>, tensor<4x8x3x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<4xf32>) -> tensor<1x4x6x6xi32>
  %r = qnn.requantize %y, %s, %zp, %sc, %zp {axis = 1} : (tensor<1x4x6x6xi32>, tensor<4xf32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x4x6x6xi8>
  func.return %r : tensor<1x4x6x6xi8>
}

// -----

// resize2d (not desired) follows its input's NHWC; l2_normalize moves its axes.
// CHECK-LABEL: func.func @resize(
// CHECK-NEXT:  %0 = relay.layout_transform %x {src_layout = "NCHW", dst_layout = "NHWC"} : (tensor<1x8x6x6xf32>) -> tensor<1x6x6x8xf32>
// CHECK-NEXT:  %1 = relay.layout_transform %w {src_layout = "OIHW", dst_layout = "HWIO"} : (tensor<4x8x3x3xf32>) -> tensor<3x3x8x4xf32>
// CHECK-NEXT:  %y = relay.nn.conv2d %0, %1 {padding = [1, 1, 1, 1], data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x6x6x8xf32>, tensor<3x3x8x4xf32>) -> tensor<1x6x6x4xf32>
// CHECK-NEXT:  %r = relay.image.resize2d %y {size = [12, 12], layout = "NHWC"} : (tensor<1x6x6x4xf32>) -> tensor<1x12x12x4xf32>
// CHECK-NEXT:  %n = relay.nn.l2_normalize %r {eps = 0.001, axis = [3]} : (tensor<1x12x12x4xf32>) -> tensor<1x12x12x4xf32>
// CHECK-NEXT:  %2 = relay.layout_transform %n {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x12x12x4xf32>) -> tensor<1x4x12x12xf32>
// CHECK-NEXT:  func.return %2 : tensor<1x4x12x12xf32>
// CHECK-NEXT:  }
func.func @resize(%x: tensor<1x8x6x6xf32>, %w: tensor<4x8x3x3xf32>) -> tensor<1x4x12x12xf32> {
  %y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]} : (tensor<1x8x6x6xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r = relay.image.resize2d %y {size = [12, 12]} : (tensor<1x4x6x6xf32>) -> tensor<1x4x12x12xf32>
  %n = relay.nn.l2_normalize %r {eps = 0.001, axis = [1]} : (tensor<1x4x12x12xf32>) -> tensor<1x4x12x12xf32>
  func.return %n : tensor<1x4x12x12xf32>
}

// -----

// roi_align (desired NHWC) takes the conv's NHWC output; roi_pool (not desired) keeps its
// NCHW, so the conv output goes back for it and its result forward to NHWC for the add (which
// follows its first operand); the regions stay as they are.
// CHECK-LABEL: func.func @roi(
// CHECK-NEXT:  %0 = relay.layout_transform %x {src_layout = "NCHW", dst_layout = "NHWC"} : (tensor<1x8x6x6xf32>) -> tensor<1x6x6x8xf32>
// CHECK-NEXT:  %1 = relay.layout_transform %w {src_layout = "OIHW", dst_layout = "HWIO"} : (tensor<4x8x3x3xf32>) -> tensor<3x3x8x4xf32>
// CHECK-NEXT:  %y = relay.nn.conv2d %0, %1 {padding = [1, 1, 1, 1], data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x6x6x8xf32>, tensor<3x3x8x4xf32>) -> tensor<1x6x6x4xf32>
// CHECK-NEXT:  %a = relay.vision.roi_align %y, %r {pooled_size = [2, 2], spatial_scale = 1.0, layout = "NHWC"} : (tensor<1x6x6x4xf32>, tensor<3x5xf32>) -> tensor<3x2x2x4xf32>
// CHECK-NEXT:  %2 = relay.layout_transform %y {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x6x6x4xf32>) -> tensor<1x4x6x6xf32>
// CHECK-NEXT:  %p = relay.vision.roi_pool %2, %r {pooled_size = [2, 2], spatial_scale = 1.0} : (tensor<1x4x6x6xf32>, tensor<3x5xf32>) -> tensor<3x4x2x2xf32>
// CHECK-NEXT:  %3 = relay.layout_transform %p {src_layout = "NCHW", dst_layout = "NHWC"} : (tensor<3x4x2x2xf32>) -> tensor<3x2x2x4xf32>
// CHECK-NEXT:  %s = relay.add %a, %3 : (tensor<3x2x2x4xf32>, tensor<3x2x2x4xf32>) -> tensor<3x2x2x4xf32>
// CHECK-NEXT:  %4 = relay.layout_transform %s {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<3x2x2x4xf32>) -> tensor<3x4x2x2xf32>
// CHECK-NEXT:  func.return %4 : tensor<3x4x2x2xf32>
// CHECK-NEXT:  }
func.func @roi(%x: tensor<1x8x6x6xf32>, %w: tensor<4x8x3x3xf32>, %r: tensor<3x5xf32>) -> tensor<3x4x2x2xf32> {
  %y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]} : (tensor<1x8x6x6xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x6x6xf32>
  %a = relay.vision.roi_align %y, %r {pooled_size = [2, 2], spatial_scale = 1.0} : (tensor<1x4x6x6xf32>, tensor<3x5xf32>) -> tensor<3x4x2x2xf32>
  %p = relay.vision.roi_pool %y, %r {pooled_size = [2, 2], spatial_scale = 1.0} : (tensor<1x4x6x6xf32>, tensor<3x5xf32>) -> tensor<3x4x2x2xf32>
  %s = relay.add %a, %p : (tensor<3x4x2x2xf32>, tensor<3x4x2x2xf32>) -> tensor<3x4x2x2xf32>
  func.return %s : tensor<3x4x2x2xf32>
}
