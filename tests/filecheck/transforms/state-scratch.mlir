// RUN: relay-opt %s -p state-scratch | filecheck %s
// RUN: relay-opt %s -p state-scratch,lower-to-memory | filecheck %s --check-prefix=LOWER

// The native kernels' part of each fused function's workspace, stated before lower-to-memory.

func.func private @fused_conv(%p0: tensor<1x3x8x8xf32>, %p1: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> attributes {relay.primitive = 1 : i64} {
  %y = relay.nn.conv2d %p0, %p1 {padding = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return %y : tensor<1x4x8x8xf32>
}

// im2col of one group: 8*8 outputs x 3 channels x 3*3 taps x 4 bytes
// CHECK:      func.func private @fused_conv({{.*}} attributes {relay.primitive = 1 : i64, relay.kernel_scratch_bytes = 6912 : i64}
// CHECK-NEXT:   %y = relay.nn.conv2d %p0, %p1 {padding = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>

func.func private @fused_wino(%p0: tensor<1x16x28x28xf32>, %p1: tensor<64x16x3x3xf32>) -> tensor<1x64x28x28xf32> attributes {relay.primitive = 1 : i64} {
  %y = relay.nn.conv2d %p0, %p1 {padding = [1, 1, 1, 1]} : (tensor<1x16x28x28xf32>, tensor<64x16x3x3xf32>) -> tensor<1x64x28x28xf32>
  func.return %y : tensor<1x64x28x28xf32>
}

// Winograd F(4x4, 3x3) (28x28 outputs): 36 matrices of 16 x 49 tiles (3136 bytes: 49 lines)
// and 36 of 64 x 49 (12544 bytes: 196 lines, spaced 197), larger than im2col (451584)
// CHECK:      func.func private @fused_wino({{.*}} attributes {relay.primitive = 1 : i64, relay.kernel_scratch_bytes = 566784 : i64}
// CHECK-NEXT:   %y = relay.nn.conv2d %p0, %p1 {padding = [1, 1, 1, 1]} attributes {relay.winograd_tile = 4 : i64}

func.func private @fused_wino2(%p0: tensor<1x16x8x8xf32>, %p1: tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32> attributes {relay.primitive = 1 : i64} {
  %y = relay.nn.conv2d %p0, %p1 {padding = [1, 1, 1, 1]} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  func.return %y : tensor<1x16x8x8xf32>
}

// F(2x2, 3x3) (16 blocks of 2x2): 16 x (1088 + 1088) bytes, smaller than im2col (36864)
// CHECK:      func.func private @fused_wino2({{.*}} attributes {relay.primitive = 1 : i64, relay.kernel_scratch_bytes = 36864 : i64}
// CHECK-NEXT:   %y = relay.nn.conv2d %p0, %p1 {padding = [1, 1, 1, 1]} attributes {relay.winograd_tile = 2 : i64}

func.func private @fused_sigmoid(%p0: tensor<1x64x28x28xf32>) -> tensor<1x64x28x28xf32> attributes {relay.primitive = 1 : i64} {
  %y = relay.sigmoid %p0 : (tensor<1x64x28x28xf32>) -> tensor<1x64x28x28xf32>
  func.return %y : tensor<1x64x28x28xf32>
}

// one chunk of 4096 values and its mask
// CHECK:      func.func private @fused_sigmoid({{.*}} attributes {relay.primitive = 1 : i64, relay.kernel_scratch_bytes = 20480 : i64}

func.func private @fused_pointwise(%p0: tensor<1x16x8x8xf32>, %p1: tensor<16x16x1x1xf32>) -> tensor<1x16x8x8xf32> attributes {relay.primitive = 1 : i64} {
  %y = relay.nn.conv2d %p0, %p1 : (tensor<1x16x8x8xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x8x8xf32>
  func.return %y : tensor<1x16x8x8xf32>
}

// a pointwise convolution multiplies its input: nothing stated
// CHECK:      func.func private @fused_pointwise({{.*}} attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT:   %y = relay.nn.conv2d %p0, %p1 : (

func.func private @fused_stated(%p0: tensor<1x3x8x8xf32>, %p1: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> attributes {relay.primitive = 1 : i64, relay.scratch_bytes = 128 : i64} {
  %y = relay.nn.conv2d %p0, %p1 {padding = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return %y : tensor<1x4x8x8xf32>
}

// a code generator stated the whole workspace: left as it is
// CHECK:      func.func private @fused_stated({{.*}} attributes {relay.primitive = 1 : i64, relay.scratch_bytes = 128 : i64} {

func.func private @fused_resize(%p0: tensor<1x3x24x24xf32>) -> tensor<1x3x22x20xf32> attributes {relay.primitive = 1 : i64} {
  %y = relay.image.resize2d %p0 {size = [22, 20], method = "cubic", cubic_alpha = -0.75} : (tensor<1x3x24x24xf32>) -> tensor<1x3x22x20xf32>
  func.return %y : tensor<1x3x22x20xf32>
}

// a cubic resize runs as two products: x . A_w^T (1 x 3 x 24 x 20 x 4 bytes = 5760) first
// CHECK:      func.func private @fused_resize({{.*}} attributes {relay.primitive = 1 : i64, relay.kernel_scratch_bytes = 5760 : i64}

func.func private @fused_nearest(%p0: tensor<1x3x24x24xf32>) -> tensor<1x3x48x48xf32> attributes {relay.primitive = 1 : i64} {
  %y = relay.image.resize2d %p0 {size = [48, 48], method = "nearest_neighbor"} : (tensor<1x3x24x24xf32>) -> tensor<1x3x48x48xf32>
  func.return %y : tensor<1x3x48x48xf32>
}

// a nearest resize copies: nothing stated
// CHECK:      func.func private @fused_nearest({{.*}} attributes {relay.primitive = 1 : i64} {

func.func private @fused_dft(%p0: tensor<3x10xf32>, %p1: tensor<3x10xf32>) -> (tensor<3x10xf32>, tensor<3x10xf32>) attributes {relay.primitive = 1 : i64} {
  %re, %im = relay.dft %p0, %p1 {inverse = false} : (tensor<3x10xf32>, tensor<3x10xf32>) -> (tensor<3x10xf32>, tensor<3x10xf32>)
  func.return %re, %im : tensor<3x10xf32>, tensor<3x10xf32>
}

// a DFT: the complex128 signal, then the spectrum (3 x 10 x 16 bytes = 480, 512 each)
// CHECK:      func.func private @fused_dft({{.*}} attributes {relay.primitive = 1 : i64, relay.kernel_scratch_bytes = 1024 : i64}

func.func @main(%x: tensor<1x16x28x28xf32>) -> tensor<1x64x28x28xf32> {
  %w = relay.constant dense<1.0> : tensor<64x16x3x3xf32>
  %y = func.call @fused_wino(%x, %w) : (tensor<1x16x28x28xf32>, tensor<64x16x3x3xf32>) -> tensor<1x64x28x28xf32>
  %s = func.call @fused_sigmoid(%y) : (tensor<1x64x28x28xf32>) -> tensor<1x64x28x28xf32>
  func.return %s : tensor<1x64x28x28xf32>
}

// LOWER:      %fused_wino_ws = memory.alloc_storage {size = 566784, alignment = 64, kind = "workspace", lifetime = [0, 0]}
// LOWER:      memory.invoke @fused_wino({{.*}} workspace(%fused_wino_ws) {step = 0}
// LOWER:      %fused_sigmoid_ws = memory.alloc_storage {size = 20480, alignment = 64, kind = "workspace", lifetime = [1, 1]}
// LOWER:      memory.invoke @fused_sigmoid({{.*}} workspace(%fused_sigmoid_ws) {step = 1}
