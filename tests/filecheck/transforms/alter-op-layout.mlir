// RUN: relay-opt %s -p alter-op-layout --split-input-file | filecheck %s
// RUN: relay-opt %s -p 'alter-op-layout{simd-width=8}' --split-input-file | filecheck %s --check-prefix=AVX2
// RUN: not relay-opt %s -p 'alter-op-layout{simd-width=0}' 2>&1 | filecheck %s --check-prefix=ERR
// RUN: relay-opt %s -p 'alter-op-layout{x86=false}' --split-input-file | filecheck %s --check-prefix=FAST
// RUN: relay-opt %s -p 'alter-op-layout{grouped=true}' --split-input-file | filecheck %s --check-prefix=GROUPED
// RUN: relay-opt %s -p 'alter-op-layout{block-lanes=8}' --split-input-file | filecheck %s --check-prefix=LANES
// RUN: not relay-opt %s -p 'alter-op-layout{block-lanes=0}' 2>&1 | filecheck %s --check-prefix=ERRLANES

// ERR: alter-op-layout: simd-width must be positive, got 0
// ERRLANES: alter-op-layout: block-lanes must be positive, got 0

// Block sizes per layer (32 -> 16 lanes, 24 -> 12; input blocks up to the output's); the bias
// is expanded and blocked like the conv output, relu and the pool stay blocked, two block
// sizes meet with one transform between them, and the result goes back to NCHW.
// CHECK:  %0 = relay.layout_transform %x {src_layout = "NCHW", dst_layout = "NCHW8c"} : (tensor<1x8x6x6xf32>) -> tensor<1x1x6x6x8xf32>
// CHECK-NEXT:  %1 = relay.layout_transform %w {src_layout = "OIHW", dst_layout = "OIHW8i16o"} : (tensor<32x8x3x3xf32>) -> tensor<2x1x3x3x8x16xf32>
// CHECK-NEXT:  %y = relay.nn.conv2d %0, %1 {padding = [1, 1, 1, 1], channels = 32, data_layout = "NCHW8c", kernel_layout = "OIHW8i16o", out_layout = "NCHW16c"} : (tensor<1x1x6x6x8xf32>, tensor<2x1x3x3x8x16xf32>) -> tensor<1x2x6x6x16xf32>
// CHECK-NEXT:  %e = relay.expand_dims %b {axis = 1, num_newaxis = 2} : (tensor<32xf32>) -> tensor<32x1x1xf32>
// CHECK-NEXT:  %2 = relay.expand_dims %e {axis = 0} : (tensor<32x1x1xf32>) -> tensor<1x32x1x1xf32>
// CHECK-NEXT:  %3 = relay.layout_transform %2 {src_layout = "NCHW", dst_layout = "NCHW16c"} : (tensor<1x32x1x1xf32>) -> tensor<1x2x1x1x16xf32>
// CHECK-NEXT:  %a = relay.add %y, %3 : (tensor<1x2x6x6x16xf32>, tensor<1x2x1x1x16xf32>) -> tensor<1x2x6x6x16xf32>
// CHECK-NEXT:  %r = relay.nn.relu %a : (tensor<1x2x6x6x16xf32>) -> tensor<1x2x6x6x16xf32>
// CHECK-NEXT:  %p = relay.nn.max_pool2d %r {pool_size = [2, 2], strides = [2, 2], layout = "NCHW16c"} : (tensor<1x2x6x6x16xf32>) -> tensor<1x2x3x3x16xf32>
// CHECK-NEXT:  %4 = relay.layout_transform %p {src_layout = "NCHW16c", dst_layout = "NCHW8c"} : (tensor<1x2x3x3x16xf32>) -> tensor<1x4x3x3x8xf32>
// CHECK-NEXT:  %5 = relay.layout_transform %w2 {src_layout = "OIHW", dst_layout = "OIHW8i12o"} : (tensor<24x32x1x1xf32>) -> tensor<2x4x1x1x8x12xf32>
// CHECK-NEXT:  %z = relay.nn.conv2d %4, %5 {channels = 24, data_layout = "NCHW8c", kernel_layout = "OIHW8i12o", out_layout = "NCHW12c"} : (tensor<1x4x3x3x8xf32>, tensor<2x4x1x1x8x12xf32>) -> tensor<1x2x3x3x12xf32>
// CHECK-NEXT:  %6 = relay.layout_transform %z {src_layout = "NCHW12c", dst_layout = "NCHW"} : (tensor<1x2x3x3x12xf32>) -> tensor<1x24x3x3xf32>
// CHECK-NEXT:  func.return %6 : tensor<1x24x3x3xf32>
// With block-lanes=8 (the C target's): 24 channels take blocks of 8 (a multiple of the lanes),
// not 12, and the second convolution reads its input in the 16-channel blocks the pool left
// (input blocks by the same rule, not at most the output's): no transform between them.
// LANES:  %y = relay.nn.conv2d %0, %1 {padding = [1, 1, 1, 1], channels = 32, data_layout = "NCHW8c", kernel_layout = "OIHW8i16o", out_layout = "NCHW16c"}
// LANES:  %p = relay.nn.max_pool2d %r {pool_size = [2, 2], strides = [2, 2], layout = "NCHW16c"} : (tensor<1x2x6x6x16xf32>) -> tensor<1x2x3x3x16xf32>
// LANES-NEXT:  %4 = relay.layout_transform %w2 {src_layout = "OIHW", dst_layout = "OIHW16i8o"} : (tensor<24x32x1x1xf32>) -> tensor<3x2x1x1x16x8xf32>
// LANES-NEXT:  %z = relay.nn.conv2d %p, %4 {channels = 24, data_layout = "NCHW16c", kernel_layout = "OIHW16i8o", out_layout = "NCHW8c"} : (tensor<1x2x3x3x16xf32>, tensor<3x2x1x1x16x8xf32>) -> tensor<1x3x3x3x8xf32>
// LANES-NEXT:  %5 = relay.layout_transform %z {src_layout = "NCHW8c", dst_layout = "NCHW"} : (tensor<1x3x3x3x8xf32>) -> tensor<1x24x3x3xf32>
func.func @main(%x: tensor<1x8x6x6xf32>, %w: tensor<32x8x3x3xf32>, %w2: tensor<24x32x1x1xf32>, %b: tensor<32xf32>) -> tensor<1x24x3x3xf32> {
  %y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]} : (tensor<1x8x6x6xf32>, tensor<32x8x3x3xf32>) -> tensor<1x32x6x6xf32>
  %e = relay.expand_dims %b {axis = 1, num_newaxis = 2} : (tensor<32xf32>) -> tensor<32x1x1xf32>
  %a = relay.add %y, %e : (tensor<1x32x6x6xf32>, tensor<32x1x1xf32>) -> tensor<1x32x6x6xf32>
  %r = relay.nn.relu %a : (tensor<1x32x6x6xf32>) -> tensor<1x32x6x6xf32>
  %p = relay.nn.max_pool2d %r {pool_size = [2, 2], strides = [2, 2]} : (tensor<1x32x6x6xf32>) -> tensor<1x32x3x3xf32>
  %z = relay.nn.conv2d %p, %w2 : (tensor<1x32x3x3xf32>, tensor<24x32x1x1xf32>) -> tensor<1x24x3x3xf32>
  func.return %z : tensor<1x24x3x3xf32>
}

// -----

// Depthwise: OIHW1i{oc}o; other grouped convolutions keep NCHW (TVM's x86 rule).
// AVX2:  %0 = relay.layout_transform %x {src_layout = "NCHW", dst_layout = "NCHW8c"} : (tensor<1x16x4x4xf32>) -> tensor<1x2x4x4x8xf32>
// AVX2-NEXT:  %1 = relay.layout_transform %dw {src_layout = "OIHW", dst_layout = "OIHW1i8o"} : (tensor<16x1x3x3xf32>) -> tensor<2x1x3x3x1x8xf32>
// AVX2-NEXT:  %y = relay.nn.conv2d %0, %1 {padding = [1, 1, 1, 1], groups = 16, channels = 16, data_layout = "NCHW8c", kernel_layout = "OIHW1i8o", out_layout = "NCHW8c"} : (tensor<1x2x4x4x8xf32>, tensor<2x1x3x3x1x8xf32>) -> tensor<1x2x4x4x8xf32>
// AVX2-NEXT:  %2 = relay.layout_transform %y {src_layout = "NCHW8c", dst_layout = "NCHW"} : (tensor<1x2x4x4x8xf32>) -> tensor<1x16x4x4xf32>
// AVX2-NEXT:  %z = relay.nn.conv2d %2, %g {groups = 2} : (tensor<1x16x4x4xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x4x4xf32>
// AVX2-NEXT:  func.return %z : tensor<1x16x4x4xf32>
// grouped=true (the C target's build): the groups=2 convolution stays in its neighbours'
// blocks (kernel OIHW), so no transform pair surrounds it.
// GROUPED-LABEL: func.func @depthwise_and_group(
// GROUPED:       %y = relay.nn.conv2d %0, %1 {{.*}}groups = 16
// GROUPED-NEXT:  %z = relay.nn.conv2d %y, %g {groups = 2, channels = 16, data_layout = "NCHW16c", out_layout = "NCHW16c"} : (tensor<1x1x4x4x16xf32>, tensor<16x8x1x1xf32>) -> tensor<1x1x4x4x16xf32>
// GROUPED-NEXT:  %2 = relay.layout_transform %z {src_layout = "NCHW16c", dst_layout = "NCHW"}
// GROUPED-NEXT:  func.return %2
func.func @depthwise_and_group(%x: tensor<1x16x4x4xf32>, %dw: tensor<16x1x3x3xf32>, %g: tensor<16x8x1x1xf32>) -> tensor<1x16x4x4xf32> {
  %y = relay.nn.conv2d %x, %dw {padding = [1, 1, 1, 1], groups = 16} : (tensor<1x16x4x4xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x4x4xf32>
  %z = relay.nn.conv2d %y, %g {groups = 2} : (tensor<1x16x4x4xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x4x4xf32>
  func.return %z : tensor<1x16x4x4xf32>
}

// -----

// 8-bit data (an integer convolution, as qnn canonicalizes to): NCHW data kept, the kernel in
// OHWI (one output channel's patch contiguous in the channels-last order); grouped ones stay.
// CHECK-LABEL: func.func @int8(
// CHECK-NEXT:  %0 = relay.layout_transform %w {src_layout = "OIHW", dst_layout = "OHWI"} : (tensor<8x4x3x3xi8>) -> tensor<8x3x3x4xi8>
// CHECK-NEXT:  %y = relay.nn.conv2d %x, %0 {padding = [1, 1, 1, 1], kernel_layout = "OHWI", out_dtype = "int32"} : (tensor<1x4x6x6xui8>, tensor<8x3x3x4xi8>) -> tensor<1x8x6x6xi32>
// CHECK-NEXT:  %z = relay.nn.conv2d %x, %g {padding = [1, 1, 1, 1], groups = 4, out_dtype = "int32"} : (tensor<1x4x6x6xui8>, tensor<4x1x3x3xi8>) -> tensor<1x4x6x6xi32>
// CHECK-NEXT:  func.return %y, %z
func.func @int8(%x: tensor<1x4x6x6xui8>, %w: tensor<8x4x3x3xi8>, %g: tensor<4x1x3x3xi8>) -> (tensor<1x8x6x6xi32>, tensor<1x4x6x6xi32>) {
  %y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1], out_dtype = "int32"} : (tensor<1x4x6x6xui8>, tensor<8x4x3x3xi8>) -> tensor<1x8x6x6xi32>
  %z = relay.nn.conv2d %x, %g {padding = [1, 1, 1, 1], groups = 4, out_dtype = "int32"} : (tensor<1x4x6x6xui8>, tensor<4x1x3x3xi8>) -> tensor<1x4x6x6xi32>
  func.return %y, %z : tensor<1x8x6x6xi32>, tensor<1x4x6x6xi32>
}

// -----

// x86=false (what the build runs): without Python-registered rules nothing is blocked.
// FAST-LABEL: func.func @main(
// FAST-NEXT:  %y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]}
// FAST-LABEL: func.func @depthwise_and_group(
// FAST-NEXT:  %y = relay.nn.conv2d %x, %dw {padding = [1, 1, 1, 1], groups = 16}
// FAST-LABEL: func.func @winograd_layers(
// FAST-NEXT:  %y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]} : (tensor<1x16x8x8xf32>, tensor<32x16x3x3xf32>) -> tensor<1x32x8x8xf32>
// FAST-NEXT:  func.return %y
func.func @winograd_layers(%x: tensor<1x16x8x8xf32>, %w: tensor<32x16x3x3xf32>) -> tensor<1x32x8x8xf32> {
  %y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]} : (tensor<1x16x8x8xf32>, tensor<32x16x3x3xf32>) -> tensor<1x32x8x8xf32>
  func.return %y : tensor<1x32x8x8xf32>
}
