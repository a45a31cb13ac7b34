// RUN: relay-opt %s -p fuse-ops,lower-to-memory,alias-slices --split-input-file | filecheck %s
// RUN: relay-opt %s -p fuse-ops,lower-to-memory,alias-slices,plan-memory,verify-memory-plan --split-input-file | filecheck %s --check-prefix=PLAN

// A slice of the outer axis (attention's qkv[1], a reshape after it) and one part of a split
// along it are byte ranges of the softmax's result: each is a tensor in its storage, and
// their steps (and the split's workspace for the parts nobody reads) are gone. A slice of
// the inner axis is strided: its step stays.
func.func @main(%x: tensor<3x4x16xf32>) -> (tensor<4x16xf32>, tensor<1x4x16xf32>, tensor<3x4x8xf32>) {
  %p = relay.nn.softmax %x {axis = -1} : (tensor<3x4x16xf32>) -> tensor<3x4x16xf32>
  %k0 = relay.strided_slice %p {begin = [1], end = [2], strides = [1], axes = [0]} : (tensor<3x4x16xf32>) -> tensor<1x4x16xf32>
  %k = relay.reshape %k0 {newshape = [4, 16]} : (tensor<1x4x16xf32>) -> tensor<4x16xf32>
  %a = relay.nn.softmax %k {axis = -1} : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %parts:3 = relay.split %p {indices_or_sections = 3, axis = 0} : (tensor<3x4x16xf32>) -> (tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>)
  %b = relay.nn.softmax %parts#2 {axis = -1} : (tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %h = relay.strided_slice %p {begin = [0], end = [8], strides = [1], axes = [2]} : (tensor<3x4x16xf32>) -> tensor<3x4x8xf32>
  %c = relay.nn.softmax %h {axis = -1} : (tensor<3x4x8xf32>) -> tensor<3x4x8xf32>
  func.return %a, %b, %c : tensor<4x16xf32>, tensor<1x4x16xf32>, tensor<3x4x8xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK:         %p_storage = memory.alloc_storage {size = 768, alignment = 64, kind = "intermediate", lifetime = [0, 3]}
// CHECK-NEXT:    %p = memory.alloc_tensor %p_storage {offset = 0} : tensor<3x4x16xf32>
// CHECK-NEXT:    memory.invoke @fused_nn_softmax(%x_in) outs(%p) {step = 0}
// CHECK:         %k = memory.alloc_tensor %p_storage {offset = 256} : tensor<4x16xf32>
// CHECK-NOT:     memory.invoke @fused_strided_slice_reshape
// CHECK:         memory.invoke @fused_nn_softmax_1(%k) outs(%a) {step = 1}
// CHECK-NEXT:    %parts = memory.alloc_tensor %p_storage {offset = 512} : tensor<1x4x16xf32>
// CHECK-NOT:     memory.invoke @fused_split
// CHECK-NOT:     kind = "workspace"
// CHECK:         memory.invoke @fused_nn_softmax_2(%parts) outs(%b) {step = 2}
// CHECK:         %h = memory.alloc_tensor %h_storage {offset = 0} : tensor<3x4x8xf32>
// CHECK-NEXT:    memory.invoke @fused_strided_slice(%p) outs(%h) {step = 3}
// CHECK-NEXT:    memory.kill %p_storage
// (the plan: as small as without the pass here)
// PLAN: memory.pool @global {alignment = 16, size = 2048}

// -----

// Kept: a slice whose offset is not a multiple of the storage's alignment (20 bytes), and a
// slice that is the function's result (its storage is the caller's output).
func.func @main(%x: tensor<3x5xf32>) -> (tensor<5xf32>, tensor<1x5xf32>) {
  %p = relay.nn.softmax %x {axis = -1} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %s0 = relay.strided_slice %p {begin = [1], end = [2], strides = [1], axes = [0]} : (tensor<3x5xf32>) -> tensor<1x5xf32>
  %s = relay.reshape %s0 {newshape = [5]} : (tensor<1x5xf32>) -> tensor<5xf32>
  %a = relay.nn.softmax %s {axis = -1} : (tensor<5xf32>) -> tensor<5xf32>
  %o = relay.strided_slice %p {begin = [0], end = [1], strides = [1], axes = [0]} : (tensor<3x5xf32>) -> tensor<1x5xf32>
  func.return %a, %o : tensor<5xf32>, tensor<1x5xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK:         memory.invoke @fused_strided_slice_reshape(%p)
// CHECK:         memory.invoke @fused_strided_slice(%p)

// -----

// Kept: the slice is read after a large tensor is computed, so holding its whole source
// until then would raise the most bytes live at once (1024 + 4096 against 256 + 4096).
func.func @main(%x: tensor<4x64xf32>, %y: tensor<16x64xf32>) -> (tensor<16x64xf32>, tensor<64xf32>) {
  %p = relay.nn.softmax %x {axis = -1} : (tensor<4x64xf32>) -> tensor<4x64xf32>
  %s0 = relay.strided_slice %p {begin = [0], end = [1], strides = [1], axes = [0]} : (tensor<4x64xf32>) -> tensor<1x64xf32>
  %s = relay.reshape %s0 {newshape = [64]} : (tensor<1x64xf32>) -> tensor<64xf32>
  %big = relay.nn.softmax %y {axis = -1} : (tensor<16x64xf32>) -> tensor<16x64xf32>
  %big2 = relay.nn.softmax %big {axis = -1} : (tensor<16x64xf32>) -> tensor<16x64xf32>
  %e = relay.nn.softmax %s {axis = -1} : (tensor<64xf32>) -> tensor<64xf32>
  func.return %big2, %e : tensor<16x64xf32>, tensor<64xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK:         memory.invoke @fused_strided_slice_reshape(%p)
