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
