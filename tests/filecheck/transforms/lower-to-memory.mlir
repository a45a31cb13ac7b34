// RUN: relay-opt %s -p lower-to-memory --split-input-file --verify-diagnostics | filecheck %s
// RUN: relay-opt %s -p 'lower-to-memory{inputs-in-arena=false outputs-in-arena=false workspace=false alignment=16}' --split-input-file --verify-diagnostics | filecheck %s --check-prefix=EXT

// A fused chain: conv (with a workspace) -> relu -> reshape-only (an alias, no step). The
// conv's workspace is what its engine stated (state-scratch: the native kernels' im2col, 8*8
// outputs x 3 channels x 3*3 taps x 4 bytes); lower-to-memory only reads it.

func.func private @fused_conv(%p0: tensor<1x3x8x8xf32>, %p1: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> attributes {relay.kernel_scratch_bytes = 6912 : i64, relay.primitive = 1 : i64} {
  %y = relay.nn.conv2d %p0, %p1 {padding = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return %y : tensor<1x4x8x8xf32>
}
func.func private @fused_relu(%p0: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.nn.relu %p0 : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return %r : tensor<1x4x8x8xf32>
}
func.func private @fused_reshape(%p0: tensor<1x4x8x8xf32>) -> tensor<1x256xf32> attributes {relay.primitive = 1 : i64, relay.reshape_only = 1 : i64} {
  %s = relay.reshape %p0 {newshape = [1, 256]} : (tensor<1x4x8x8xf32>) -> tensor<1x256xf32>
  func.return %s : tensor<1x256xf32>
}
func.func @main(%x: tensor<1x3x8x8xf32>) -> tensor<1x256xf32> {
  %w = relay.constant dense<1.0> : tensor<4x3x3x3xf32>
  %y = func.call @fused_conv(%x, %w) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %r = func.call @fused_relu(%y) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %s = func.call @fused_reshape(%r) : (tensor<1x4x8x8xf32>) -> tensor<1x256xf32>
  func.return %s : tensor<1x256xf32>
}

// CHECK-LABEL: func.func @main(%x: tensor<1x3x8x8xf32>) -> tensor<1x256xf32> {
// CHECK-NEXT:    %x_storage = memory.alloc_storage {size = 768, alignment = 64, kind = "input", lifetime = [0, 0]}
// CHECK-NEXT:    %x_in = memory.alloc_tensor %x_storage {offset = 0} : tensor<1x3x8x8xf32>
// CHECK-NEXT:    memory.copy %x to %x_in : tensor<1x3x8x8xf32>
// CHECK-NEXT:    %w = relay.constant dense<1.000000e+00> : tensor<4x3x3x3xf32>
// CHECK-NEXT:    %y_storage = memory.alloc_storage {size = 1024, alignment = 64, kind = "intermediate", lifetime = [0, 1]}
// CHECK-NEXT:    %y = memory.alloc_tensor %y_storage {offset = 0} : tensor<1x4x8x8xf32>
// CHECK-NEXT:    %fused_conv_ws = memory.alloc_storage {size = 6912, alignment = 64, kind = "workspace", lifetime = [0, 0]}
// CHECK-NEXT:    memory.invoke @fused_conv(%x_in, %w) outs(%y) workspace(%fused_conv_ws) {step = 0} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> (tensor<1x4x8x8xf32>)
// CHECK-NEXT:    memory.kill %x_storage : !memory.storage
// CHECK-NEXT:    memory.kill %fused_conv_ws : !memory.storage
// CHECK-NEXT:    %r_storage = memory.alloc_storage {size = 1024, alignment = 64, kind = "output", lifetime = [1, 1]}
// CHECK-NEXT:    %r = memory.alloc_tensor %r_storage {offset = 0} : tensor<1x4x8x8xf32>
// CHECK-NEXT:    memory.invoke @fused_relu(%y) outs(%r) {step = 1} : (tensor<1x4x8x8xf32>) -> (tensor<1x4x8x8xf32>)
// CHECK-NEXT:    memory.kill %y_storage : !memory.storage
// CHECK-NEXT:    %s = memory.alias %r : tensor<1x4x8x8xf32> to tensor<1x256xf32>
// CHECK-NEXT:    func.return %s : tensor<1x256xf32>
// CHECK-NEXT:  }

// EXT-LABEL: func.func @main(%x: tensor<1x3x8x8xf32>) -> tensor<1x256xf32> {
// EXT-NEXT:    %w = relay.constant
// EXT-NEXT:    %y_storage = memory.alloc_storage {size = 1024, alignment = 16, kind = "intermediate", lifetime = [0, 1]}
// EXT-NEXT:    %y = memory.alloc_tensor %y_storage {offset = 0} : tensor<1x4x8x8xf32>
// EXT-NEXT:    memory.invoke @fused_conv(%x, %w) outs(%y) {step = 0}
// EXT-NEXT:    %r_storage = memory.alloc_storage {size = 1024, alignment = 16, kind = "output", lifetime = [1, 1], external = true}
// EXT-NEXT:    %r = memory.alloc_tensor %r_storage {offset = 0} : tensor<1x4x8x8xf32>
// EXT-NEXT:    memory.invoke @fused_relu(%y) outs(%r) {step = 1}
// EXT-NEXT:    memory.kill %y_storage : !memory.storage
// EXT-NEXT:    %s = memory.alias %r : tensor<1x4x8x8xf32> to tensor<1x256xf32>
// EXT-NEXT:    func.return %s : tensor<1x256xf32>

// -----

// Unfused: every relay op is outlined into its own primitive function, one step each;
// a multi-result op gets one storage per result.

func.func @main(%x: tensor<2x4xf32>) -> (tensor<1x4xf32>, tensor<2x4xf32>) {
  %n = relay.negative %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %a, %b = relay.split %n {indices_or_sections = 2} : (tensor<2x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>)
  %c = relay.add %a, %b : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %c, %n : tensor<1x4xf32>, tensor<2x4xf32>
}

// CHECK-LABEL: func.func @main
// CHECK:         %n_storage = memory.alloc_storage {size = 32, alignment = 64, kind = "output", lifetime = [0, 2]}
// CHECK:         memory.invoke @negative_0(%x_in) outs(%n) {step = 0}
// CHECK:         %a_storage = memory.alloc_storage {size = 16, alignment = 64, kind = "intermediate", lifetime = [1, 2]}
// CHECK:         %b_storage = memory.alloc_storage {size = 16, alignment = 64, kind = "intermediate", lifetime = [1, 2]}
// CHECK:         memory.invoke @split_0(%n) outs(%a, %b) {step = 1} : (tensor<2x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>)
// CHECK:         %c_storage = memory.alloc_storage {size = 16, alignment = 64, kind = "output", lifetime = [2, 2]}
// CHECK:         memory.invoke @add_0(%a, %b) outs(%c) {step = 2}
// CHECK-NEXT:    memory.kill %a_storage : !memory.storage
// CHECK-NEXT:    memory.kill %b_storage : !memory.storage
// CHECK-NEXT:    func.return %c, %n : tensor<1x4xf32>, tensor<2x4xf32>
// CHECK:       func.func private @negative_0(%0: tensor<2x4xf32>) -> tensor<2x4xf32> attributes {relay.primitive = 1 : i64}
// CHECK:       func.func private @split_0
// CHECK:       func.func private @add_0

// -----

func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// CHECK: lower-to-memory: @main calls @g, which is not primitive (run fuse-ops, or inline it first)

// -----

func.func @main(%d: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %n = relay.negative %d : (tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %n : tensor<?x4xf32>
}

// CHECK: lower-to-memory does not support dynamic shapes: %d has type tensor<?x4xf32>
