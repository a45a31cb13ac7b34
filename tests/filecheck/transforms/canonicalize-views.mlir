// RUN: relay-opt %s -p 'canonicalize-views' --split-input-file | filecheck %s

// NoOpPad: a pad of zero widths (Swin's pad to a multiple of the window, at a multiple)
// is its input; a pad that widens an axis stays.
// CHECK-LABEL: func.func @zero_pad(
// CHECK-NOT: relay.nn.pad %x
// CHECK: %w = relay.nn.pad %y, %v {pad_width = {{\[\[}}0, 0], [1, 0]]}
// CHECK: func.return %x, %w
func.func @zero_pad(%x: tensor<4x6xf32>, %y: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x7xf32>) {
  %v = relay.constant dense<0.0> : tensor<f32>
  %p = relay.nn.pad %x, %v {pad_width = [[0, 0], [0, 0]]} : (tensor<4x6xf32>, tensor<f32>) -> tensor<4x6xf32>
  %w = relay.nn.pad %y, %v {pad_width = [[0, 0], [1, 0]]} : (tensor<4x6xf32>, tensor<f32>) -> tensor<4x7xf32>
  func.return %p, %w : tensor<4x6xf32>, tensor<4x7xf32>
}

// -----

// UnitTransposeToReshape: moving an axis of size 1 keeps the element order (ViT's
// sequence-first attention with one image); a transpose of two longer axes stays.
// CHECK-LABEL: func.func @unit_transpose(
// CHECK-NEXT{LITERAL}: %a = relay.reshape %x {newshape = [5, 1, 3]} : (tensor<1x5x3xf32>) -> tensor<5x1x3xf32>
// CHECK-NEXT{LITERAL}: %b = relay.reshape %y {newshape = [4, 5, 1]} : (tensor<4x1x5xf32>) -> tensor<4x5x1xf32>
// CHECK-NEXT{LITERAL}: %c = relay.transpose %x {axes = [0, 2, 1]} : (tensor<1x5x3xf32>) -> tensor<1x3x5xf32>
func.func @unit_transpose(%x: tensor<1x5x3xf32>, %y: tensor<4x1x5xf32>) -> (tensor<5x1x3xf32>, tensor<4x5x1xf32>, tensor<1x3x5xf32>) {
  %a = relay.transpose %x {axes = [1, 0, 2]} : (tensor<1x5x3xf32>) -> tensor<5x1x3xf32>
  %b = relay.transpose %y {axes = [0, 2, 1]} : (tensor<4x1x5xf32>) -> tensor<4x5x1xf32>
  %c = relay.transpose %x {axes = [0, 2, 1]} : (tensor<1x5x3xf32>) -> tensor<1x3x5xf32>
  func.return %a, %b, %c : tensor<5x1x3xf32>, tensor<4x5x1xf32>, tensor<1x3x5xf32>
}

// -----

// GatherNDToTake: torch's qkv[:, :, :, [-2]] (Falcon's key out of its fused projection) is a
// transpose bringing the axis first and a gather_nd of one index per tuple: a take of the
// first axis (-2 from the end: index 2), then a slice that moves before the transpose. A
// gather_nd of pairs of indices stays.
// CHECK-LABEL: func.func @gather_nd_one_index(
// CHECK-NOT: relay.gather_nd %t
// CHECK-NOT: relay.take
// CHECK{LITERAL}: relay.strided_slice %x {begin = [2], end = [3], strides = [1], axes = [2]} : (tensor<5x2x4x3xf32>) -> tensor<5x2x1x3xf32>
// CHECK: relay.gather_nd %x, %p
func.func @gather_nd_one_index(%x: tensor<5x2x4x3xf32>) -> (tensor<1x5x2x3xf32>, tensor<2x4x3xf32>) {
  %t = relay.transpose %x {axes = [2, 0, 1, 3]} : (tensor<5x2x4x3xf32>) -> tensor<4x5x2x3xf32>
  %i = relay.constant dense<[[-2]]> : tensor<1x1xi64>
  %y = relay.gather_nd %t, %i : (tensor<4x5x2x3xf32>, tensor<1x1xi64>) -> tensor<1x5x2x3xf32>
  %p = relay.constant dense<[[1, 0], [0, 1]]> : tensor<2x2xi64>
  %z = relay.gather_nd %x, %p : (tensor<5x2x4x3xf32>, tensor<2x2xi64>) -> tensor<2x4x3xf32>
  func.return %y, %z : tensor<1x5x2x3xf32>, tensor<2x4x3xf32>
}

// -----

// TakeToSlice: attention's split of its fused projection, take(qkv, 1) along the first axis,
// is the slice [1, 2) of that axis seen without it.
// CHECK-LABEL: func.func @take_scalar(
// CHECK-NEXT{LITERAL}: %0 = relay.strided_slice %x {begin = [1], end = [2], strides = [1], axes = [0]} : (tensor<3x4x5xf32>) -> tensor<1x4x5xf32>
// CHECK-NEXT{LITERAL}: %y = relay.reshape %0 {newshape = [4, 5]} : (tensor<1x4x5xf32>) -> tensor<4x5xf32>
// CHECK-NEXT{LITERAL}: func.return %y : tensor<4x5xf32>
func.func @take_scalar(%x: tensor<3x4x5xf32>) -> tensor<4x5xf32> {
  %i = relay.constant dense<1> : tensor<i64>
  %y = relay.take %x, %i {axis = 0} : (tensor<3x4x5xf32>, tensor<i64>) -> tensor<4x5xf32>
  func.return %y : tensor<4x5xf32>
}

// -----

// TakeToSlice: indices in ascending arithmetic sequence are a strided slice (no reshape
// needed for a 1-D index); each mode's reading of an index out of range is kept: clip
// clamps -1 to 0, wrap and fast count it from the end.
// CHECK-LABEL: func.func @take_sequence(
// CHECK-NEXT{LITERAL}: %a = relay.strided_slice %x {begin = [1], end = [6], strides = [2], axes = [1]} : (tensor<2x7xf32>) -> tensor<2x3xf32>
// CHECK-NEXT{LITERAL}: %0 = relay.strided_slice %x {begin = [0], end = [1], strides = [1], axes = [1]} : (tensor<2x7xf32>) -> tensor<2x1xf32>
// CHECK-NEXT{LITERAL}: %b = relay.reshape %0 {newshape = [2]} : (tensor<2x1xf32>) -> tensor<2xf32>
// CHECK-NEXT{LITERAL}: %1 = relay.strided_slice %x {begin = [6], end = [7], strides = [1], axes = [1]} : (tensor<2x7xf32>) -> tensor<2x1xf32>
// CHECK-NEXT{LITERAL}: %c = relay.reshape %1 {newshape = [2]} : (tensor<2x1xf32>) -> tensor<2xf32>
// CHECK-NEXT{LITERAL}: %2 = relay.strided_slice %x {begin = [6], end = [7], strides = [1], axes = [1]} : (tensor<2x7xf32>) -> tensor<2x1xf32>
// CHECK-NEXT{LITERAL}: %d = relay.reshape %2 {newshape = [2]} : (tensor<2x1xf32>) -> tensor<2xf32>
// CHECK-NEXT{LITERAL}: %3 = relay.strided_slice %x {begin = [2], end = [7], strides = [2], axes = [1]} : (tensor<2x7xf32>) -> tensor<2x3xf32>
// CHECK-NEXT{LITERAL}: %e = relay.reshape %3 {newshape = [2, 3, 1]} : (tensor<2x3xf32>) -> tensor<2x3x1xf32>
func.func @take_sequence(%x: tensor<2x7xf32>) -> (tensor<2x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2x3x1xf32>) {
  %s = relay.constant dense<[1, 3, 5]> : tensor<3xi32>
  %a = relay.take %x, %s {axis = 1} : (tensor<2x7xf32>, tensor<3xi32>) -> tensor<2x3xf32>
  %m = relay.constant dense<-1> : tensor<i64>
  %b = relay.take %x, %m {axis = 1, mode = "clip"} : (tensor<2x7xf32>, tensor<i64>) -> tensor<2xf32>
  %c = relay.take %x, %m {axis = -1, mode = "wrap"} : (tensor<2x7xf32>, tensor<i64>) -> tensor<2xf32>
  %d = relay.take %x, %m {axis = 1, mode = "fast"} : (tensor<2x7xf32>, tensor<i64>) -> tensor<2xf32>
  %t = relay.constant dense<[[2], [4], [6]]> : tensor<3x1xi64>
  %e = relay.take %x, %t {axis = 1} : (tensor<2x7xf32>, tensor<3x1xi64>) -> tensor<2x3x1xf32>
  func.return %a, %b, %c, %d, %e : tensor<2x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2x3x1xf32>
}

// -----

// TakeToSlice leaves gathers that are not slices: indices out of order, repeated or
// ascending by different steps, indices that are not constants, and a take of the
// flattened tensor.
// CHECK-LABEL: func.func @take_kept(
// CHECK-NOT: strided_slice
// CHECK-COUNT-5: relay.take
func.func @take_kept(%x: tensor<2x7xf32>, %j: tensor<i64>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<f32>, tensor<2x3xf32>) {
  %r = relay.constant dense<[3, 1]> : tensor<2xi64>
  %a = relay.take %x, %r {axis = 1} : (tensor<2x7xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  %q = relay.constant dense<[2, 2]> : tensor<2xi64>
  %b = relay.take %x, %q {axis = 1} : (tensor<2x7xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  %d = relay.take %x, %j {axis = 1} : (tensor<2x7xf32>, tensor<i64>) -> tensor<2xf32>
  %k = relay.constant dense<3> : tensor<i64>
  %e = relay.take %x, %k : (tensor<2x7xf32>, tensor<i64>) -> tensor<f32>
  %u = relay.constant dense<[0, 1, 3]> : tensor<3xi64>
  %f = relay.take %x, %u {axis = 1} : (tensor<2x7xf32>, tensor<3xi64>) -> tensor<2x3xf32>
  func.return %a, %b, %d, %e, %f : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<f32>, tensor<2x3xf32>
}

// -----

// TakeToSlice leaves an index out of range in fast mode: its error is the op's.
// CHECK-LABEL: func.func @take_fast_out_of_range(
// CHECK-NOT: strided_slice
// CHECK: relay.take %x, %o {axis = 1, mode = "fast"}
func.func @take_fast_out_of_range(%x: tensor<2x7xf32>) -> tensor<2xf32> {
  %o = relay.constant dense<9> : tensor<i64>
  %c = relay.take %x, %o {axis = 1, mode = "fast"} : (tensor<2x7xf32>, tensor<i64>) -> tensor<2xf32>
  func.return %c : tensor<2xf32>
}

// -----

// SliceBeforeReshape, SliceBeforeTranspose, SimplifyReshape: torchvision's
// MultiheadAttention splits its packed Q/K/V projection (one image, sequence first) by
// viewing it as (seq, 1, 3, width), permuting the 3 first and taking each index. Each of
// Q, K, V becomes a slice of the projection's last axis; the permuted copy is gone.
// CHECK-LABEL: func.func @packed_qkv(
// CHECK-NOT: relay.transpose
// CHECK-NOT: relay.take
// CHECK-DAG{LITERAL}: relay.strided_slice %x {begin = [0], end = [8], strides = [1], axes = [2]} : (tensor<5x1x24xf32>) -> tensor<5x1x8xf32>
// CHECK-DAG{LITERAL}: relay.strided_slice %x {begin = [8], end = [16], strides = [1], axes = [2]} : (tensor<5x1x24xf32>) -> tensor<5x1x8xf32>
// CHECK-DAG{LITERAL}: relay.strided_slice %x {begin = [16], end = [24], strides = [1], axes = [2]} : (tensor<5x1x24xf32>) -> tensor<5x1x8xf32>
// CHECK-NOT: relay.transpose
func.func @packed_qkv(%x: tensor<5x1x24xf32>) -> (tensor<5x1x8xf32>, tensor<5x1x8xf32>, tensor<5x1x8xf32>) {
  %r = relay.reshape %x {newshape = [5, 1, 3, 8]} : (tensor<5x1x24xf32>) -> tensor<5x1x3x8xf32>
  %e = relay.expand_dims %r {axis = 0} : (tensor<5x1x3x8xf32>) -> tensor<1x5x1x3x8xf32>
  %t = relay.transpose %e {axes = [3, 1, 2, 0, 4]} : (tensor<1x5x1x3x8xf32>) -> tensor<3x5x1x1x8xf32>
  %s = relay.squeeze %t {axis = [-2]} : (tensor<3x5x1x1x8xf32>) -> tensor<3x5x1x8xf32>
  %i0 = relay.constant dense<0> : tensor<i64>
  %i1 = relay.constant dense<1> : tensor<i64>
  %i2 = relay.constant dense<2> : tensor<i64>
  %q = relay.take %s, %i0 {axis = 0} : (tensor<3x5x1x8xf32>, tensor<i64>) -> tensor<5x1x8xf32>
  %k = relay.take %s, %i1 {axis = 0} : (tensor<3x5x1x8xf32>, tensor<i64>) -> tensor<5x1x8xf32>
  %v = relay.take %s, %i2 {axis = 0} : (tensor<3x5x1x8xf32>, tensor<i64>) -> tensor<5x1x8xf32>
  func.return %q, %k, %v : tensor<5x1x8xf32>, tensor<5x1x8xf32>, tensor<5x1x8xf32>
}

// -----

// SliceBeforeTranspose: any permutation and any sliced axes (two at once, with a step);
// the slices then run before the permutation, which keeps its axes.
// CHECK-LABEL: func.func @slice_of_transpose(
// CHECK-NEXT{LITERAL}: %0 = relay.strided_slice %x {begin = [1, 0], end = [3, 6], strides = [1, 2], axes = [0, 2]} : (tensor<4x5x6xf32>) -> tensor<2x5x3xf32>
// CHECK-NEXT{LITERAL}: %a = relay.transpose %0 {axes = [2, 0, 1]} : (tensor<2x5x3xf32>) -> tensor<3x2x5xf32>
// CHECK-NEXT{LITERAL}: %1 = relay.strided_slice %x {begin = [4], end = [5], strides = [1], axes = [1]} : (tensor<4x5x6xf32>) -> tensor<4x1x6xf32>
// CHECK-NEXT{LITERAL}: %b = relay.transpose %1 {axes = [2, 0, 1]} : (tensor<4x1x6xf32>) -> tensor<6x4x1xf32>
func.func @slice_of_transpose(%x: tensor<4x5x6xf32>) -> (tensor<3x2x5xf32>, tensor<6x4x1xf32>) {
  %t = relay.transpose %x {axes = [2, 0, 1]} : (tensor<4x5x6xf32>) -> tensor<6x4x5xf32>
  %a = relay.strided_slice %t {begin = [0, 1], end = [6, 3], strides = [2, 1], axes = [0, 1]} : (tensor<6x4x5xf32>) -> tensor<3x2x5xf32>
  %b = relay.strided_slice %t {begin = [-1], end = [5], strides = [1], axes = [2]} : (tensor<6x4x5xf32>) -> tensor<6x4x1xf32>
  func.return %a, %b : tensor<3x2x5xf32>, tensor<6x4x1xf32>
}

// -----

// SliceBeforeReshape: the sliced axis leads its group of a split (4x18 -> 4x3x6: rows
// 6..11 of the 18) or of a merge (6x4 -> 24: elements 8..15 are rows 2 and 3), and the
// slice is whole rows of the input's leading axis of the group.
// CHECK-LABEL: func.func @slice_of_reshape(
// CHECK-NEXT{LITERAL}: %0 = relay.strided_slice %x {begin = [6], end = [12], strides = [1], axes = [1]} : (tensor<4x18xf32>) -> tensor<4x6xf32>
// CHECK-NEXT{LITERAL}: %a = relay.reshape %0 {newshape = [4, 1, 6]} : (tensor<4x6xf32>) -> tensor<4x1x6xf32>
// CHECK-NEXT{LITERAL}: %1 = relay.strided_slice %y {begin = [2], end = [4], strides = [1], axes = [0]} : (tensor<6x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT{LITERAL}: %b = relay.reshape %1 {newshape = [8]} : (tensor<2x4xf32>) -> tensor<8xf32>
func.func @slice_of_reshape(%x: tensor<4x18xf32>, %y: tensor<6x4xf32>) -> (tensor<4x1x6xf32>, tensor<8xf32>) {
  %r = relay.reshape %x {newshape = [4, 3, 6]} : (tensor<4x18xf32>) -> tensor<4x3x6xf32>
  %a = relay.strided_slice %r {begin = [1], end = [2], strides = [1], axes = [1]} : (tensor<4x3x6xf32>) -> tensor<4x1x6xf32>
  %m = relay.reshape %y {newshape = [24]} : (tensor<6x4xf32>) -> tensor<24xf32>
  %b = relay.strided_slice %m {begin = [8], end = [16], strides = [1], axes = [0]} : (tensor<24xf32>) -> tensor<8xf32>
  func.return %a, %b : tensor<4x1x6xf32>, tensor<8xf32>
}

// -----

// Slices that stay after their view: an inner axis of a split group (no one slice of the
// input holds it), a range that is not whole input rows, a step across a merged group, a
// negative step, and a view that another op reads too (it would stay and the slice would
// copy twice).
// CHECK-LABEL: func.func @slice_kept(
// CHECK-COUNT-5: relay.strided_slice %{{[rmtu]}} {
func.func @slice_kept(%x: tensor<4x18xf32>, %y: tensor<6x4xf32>) -> (tensor<4x3x2xf32>, tensor<6xf32>, tensor<12xf32>, tensor<4x3x1xf32>, tensor<5x4xf32>, tensor<18x4xf32>) {
  %r = relay.reshape %x {newshape = [4, 3, 6]} : (tensor<4x18xf32>) -> tensor<4x3x6xf32>
  %a = relay.strided_slice %r {begin = [0], end = [2], strides = [1], axes = [2]} : (tensor<4x3x6xf32>) -> tensor<4x3x2xf32>
  %m = relay.reshape %y {newshape = [24]} : (tensor<6x4xf32>) -> tensor<24xf32>
  %b = relay.strided_slice %m {begin = [2], end = [8], strides = [1], axes = [0]} : (tensor<24xf32>) -> tensor<6xf32>
  %c = relay.strided_slice %m {begin = [0], end = [24], strides = [2], axes = [0]} : (tensor<24xf32>) -> tensor<12xf32>
  %z = relay.reshape %x {newshape = [4, 3, 6]} : (tensor<4x18xf32>) -> tensor<4x3x6xf32>
  %t = relay.transpose %z {axes = [0, 2, 1]} : (tensor<4x3x6xf32>) -> tensor<4x6x3xf32>
  %d = relay.strided_slice %t {begin = [5, 2], end = [0, 3], strides = [-2, 1], axes = [1, 2]} : (tensor<4x6x3xf32>) -> tensor<4x3x1xf32>
  %u = relay.transpose %x {axes = [1, 0]} : (tensor<4x18xf32>) -> tensor<18x4xf32>
  %e = relay.strided_slice %u {begin = [0], end = [5], strides = [1], axes = [0]} : (tensor<18x4xf32>) -> tensor<5x4xf32>
  %f = relay.nn.relu %u : (tensor<18x4xf32>) -> tensor<18x4xf32>
  func.return %a, %b, %c, %d, %e, %f : tensor<4x3x2xf32>, tensor<6xf32>, tensor<12xf32>, tensor<4x3x1xf32>, tensor<5x4xf32>, tensor<18x4xf32>
}

// -----

// BroadcastIntoElementwise: a channel gate expanded to the tensor's shape (torch's
// x * g.expand_as(x)) is read as it is by the multiply and the add, which broadcast it;
// the subtract of two smaller operands would shrink and the transpose does not broadcast:
// they keep the broadcast_to.
// CHECK-LABEL: func.func @broadcast_gate(
// CHECK-NEXT:  %e = relay.broadcast_to %g {shape = [1, 8, 4, 4]}
// CHECK-NEXT:  %y = relay.multiply %x, %g : (tensor<1x8x4x4xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x4x4xf32>
// CHECK-NEXT:  %z = relay.add %g, %y : (tensor<1x8x1x1xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
// CHECK-NEXT:  %s = relay.subtract %e, %h : (tensor<1x8x4x4xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x4x4xf32>
// CHECK-NEXT:  %t = relay.transpose %e {axes = [0, 2, 3, 1]}
func.func @broadcast_gate(%x: tensor<1x8x4x4xf32>, %g: tensor<1x8x1x1xf32>, %h: tensor<1x8x1x1xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x4x4x8xf32>) {
  %e = relay.broadcast_to %g {shape = [1, 8, 4, 4]} : (tensor<1x8x1x1xf32>) -> tensor<1x8x4x4xf32>
  %y = relay.multiply %x, %e : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %z = relay.add %e, %y : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %s = relay.subtract %e, %h : (tensor<1x8x4x4xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x4x4xf32>
  %t = relay.transpose %e {axes = [0, 2, 3, 1]} : (tensor<1x8x4x4xf32>) -> tensor<1x4x4x8xf32>
  func.return %z, %s, %t : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x4x4x8xf32>
}
