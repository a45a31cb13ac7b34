// RUN: relay-opt %s -p 'simplify-expr' --split-input-file | filecheck %s

// ConcretizeLike: zeros_like and ones_like with static shapes become zeros/ones.
// CHECK-LABEL: func.func @concretize_zeros_ones(
// CHECK-NEXT{LITERAL}: %0 = relay.zeros {shape = [2, 3], dtype = "float32"} : () -> tensor<2x3xf32>
// CHECK-NEXT{LITERAL}: %1 = relay.ones {shape = [2, 3], dtype = "float32"} : () -> tensor<2x3xf32>
// CHECK-NEXT{LITERAL}: func.return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
func.func @concretize_zeros_ones(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = relay.zeros_like %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = relay.ones_like %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// ConcretizeLike: full_like, reshape_like, broadcast_to_like, collapse_sum_like.
// CHECK-LABEL: func.func @concretize_shapes(
// CHECK-NEXT{LITERAL}: %0 = relay.full %v {shape = [2, 6], dtype = "float32"} : (tensor<f32>) -> tensor<2x6xf32>
// CHECK-NEXT{LITERAL}: %1 = relay.reshape %x {newshape = [3, 4]} : (tensor<2x6xf32>) -> tensor<3x4xf32>
// CHECK-NEXT{LITERAL}: %2 = relay.broadcast_to %b {shape = [2, 6]} : (tensor<1x6xf32>) -> tensor<2x6xf32>
// CHECK-NEXT{LITERAL}: %3 = relay.constant dense<6> : tensor<1xi32>
// CHECK-NEXT{LITERAL}: %4 = relay.collapse_sum_to %x, %3 {shape = [6]} : (tensor<2x6xf32>, tensor<1xi32>) -> tensor<6xf32>
// CHECK-NEXT{LITERAL}: func.return %0, %1, %2, %4 : tensor<2x6xf32>, tensor<3x4xf32>, tensor<2x6xf32>, tensor<6xf32>
func.func @concretize_shapes(%x: tensor<2x6xf32>, %l: tensor<3x4xf32>, %v: tensor<f32>, %b: tensor<1x6xf32>, %c: tensor<6xf32>) -> (tensor<2x6xf32>, tensor<3x4xf32>, tensor<2x6xf32>, tensor<6xf32>) {
  %0 = relay.full_like %x, %v : (tensor<2x6xf32>, tensor<f32>) -> tensor<2x6xf32>
  %1 = relay.reshape_like %x, %l : (tensor<2x6xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %2 = relay.broadcast_to_like %b, %x : (tensor<1x6xf32>, tensor<2x6xf32>) -> tensor<2x6xf32>
  %3 = relay.collapse_sum_like %x, %c : (tensor<2x6xf32>, tensor<6xf32>) -> tensor<6xf32>
  func.return %0, %1, %2, %3 : tensor<2x6xf32>, tensor<3x4xf32>, tensor<2x6xf32>, tensor<6xf32>
}

// -----

// ConcretizeLike leaves dynamic shapes; ConcretizeCastLike works with any shape.
// CHECK-LABEL: func.func @dynamic(
// CHECK-NEXT{LITERAL}: %0 = relay.zeros_like %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT{LITERAL}: %1 = relay.cast %x {dtype = "int32"} : (tensor<?x3xf32>) -> tensor<?x3xi32>
// CHECK-NEXT{LITERAL}: func.return %0, %1 : tensor<?x3xf32>, tensor<?x3xi32>
func.func @dynamic(%x: tensor<?x3xf32>, %i: tensor<?xi32>) -> (tensor<?x3xf32>, tensor<?x3xi32>) {
  %0 = relay.zeros_like %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %1 = relay.cast_like %x, %i : (tensor<?x3xf32>, tensor<?xi32>) -> tensor<?x3xi32>
  func.return %0, %1 : tensor<?x3xf32>, tensor<?x3xi32>
}

// -----

// SimplifyAdd: x + x -> x * 2.
// CHECK-LABEL: func.func @add_self(
// CHECK-NEXT{LITERAL}: %0 = relay.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT{LITERAL}: %1 = relay.multiply %x, %0 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: func.return %1 : tensor<4xf32>
func.func @add_self(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// SimplifyRSqrt: n / sqrt(x) -> n * rsqrt(x).
// CHECK-LABEL: func.func @rsqrt(
// CHECK-NEXT{LITERAL}: %0 = relay.rsqrt %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: %1 = relay.multiply %n, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: func.return %1 : tensor<4xf32>
func.func @rsqrt(%n: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.sqrt %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.divide %n, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// -----

// EliminateIdentity: 0 + x, x * 1 (scalar constants) and x - zeros(...) go; a zeros that
// would broadcast x to a larger shape stays.
// CHECK-LABEL: func.func @identity(
// CHECK-NEXT{LITERAL}: %zb = relay.zeros {shape = [4, 2, 3], dtype = "float32"} : () -> tensor<4x2x3xf32>
// CHECK-NEXT{LITERAL}: %0 = relay.add %x, %zb : (tensor<2x3xf32>, tensor<4x2x3xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT{LITERAL}: func.return %x, %x, %x, %0 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4x2x3xf32>
func.func @identity(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4x2x3xf32>) {
  %z = relay.constant dense<0.0> : tensor<f32>
  %o = relay.constant dense<1.0> : tensor<f32>
  %0 = relay.add %z, %x : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = relay.multiply %x, %o : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %zs = relay.zeros {shape = [3], dtype = "float32"} : () -> tensor<3xf32>
  %2 = relay.subtract %x, %zs : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %zb = relay.zeros {shape = [4, 2, 3], dtype = "float32"} : () -> tensor<4x2x3xf32>
  %3 = relay.add %x, %zb : (tensor<2x3xf32>, tensor<4x2x3xf32>) -> tensor<4x2x3xf32>
  func.return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4x2x3xf32>
}

// -----

// SwitchAddMultiply: (x + c1) * c2 -> x * c2 + (c1 * c2), the constant folded.
// CHECK-LABEL: func.func @switch_add_mul(
// CHECK-NEXT{LITERAL}: %c2 = relay.constant dense<3.000000e+00> : tensor<f32>
// CHECK-NEXT{LITERAL}: %0 = relay.constant dense<[3.000000e+00, 6.000000e+00]> : tensor<2xf32>
// CHECK-NEXT{LITERAL}: %1 = relay.multiply %x, %c2 : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK-NEXT{LITERAL}: %2 = relay.add %1, %0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT{LITERAL}: func.return %2 : tensor<2xf32>
func.func @switch_add_mul(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c1 = relay.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %c2 = relay.constant dense<3.0> : tensor<f32>
  %0 = relay.add %x, %c1 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = relay.multiply %c2, %0 : (tensor<f32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %1 : tensor<2xf32>
}

// -----

// SimplifyAdjacentMultiplyOrAdd: (x * c1) * c2 -> x * (c1 * c2); (c1 + x) + c2 -> x + (c1 + c2).
// CHECK-LABEL: func.func @adjacent(
// CHECK-NEXT{LITERAL}: %0 = relay.constant dense<[6.000000e+00, 8.000000e+00]> : tensor<2xf32>
// CHECK-NEXT{LITERAL}: %1 = relay.multiply %x, %0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT{LITERAL}: %2 = relay.constant dense<[5.000000e+00, 6.000000e+00]> : tensor<2xf32>
// CHECK-NEXT{LITERAL}: %3 = relay.add %x, %2 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT{LITERAL}: func.return %1, %3 : tensor<2xf32>, tensor<2xf32>
func.func @adjacent(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %c1 = relay.constant dense<2.0> : tensor<f32>
  %c2 = relay.constant dense<[3.0, 4.0]> : tensor<2xf32>
  %0 = relay.multiply %x, %c1 : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %1 = relay.multiply %0, %c2 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %2 = relay.add %c1, %x : (tensor<f32>, tensor<2xf32>) -> tensor<2xf32>
  %3 = relay.add %2, %c2 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %1, %3 : tensor<2xf32>, tensor<2xf32>
}

// -----

// SimplifyBinomial: x*x + 2*x*y + y*y -> (x + y*1)^2 (the multiply by 1 then removed).
// CHECK-LABEL: func.func @binomial(
// CHECK-NEXT{LITERAL}: %0 = relay.add %x, %y : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT{LITERAL}: %1 = relay.multiply %0, %0 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT{LITERAL}: func.return %1 : tensor<3xf32>
func.func @binomial(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %two = relay.constant dense<2.0> : tensor<f32>
  %0 = relay.multiply %x, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = relay.multiply %two, %x : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  %2 = relay.multiply %1, %y : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %3 = relay.add %0, %2 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %4 = relay.multiply %y, %y : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %5 = relay.add %3, %4 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %5 : tensor<3xf32>
}

// -----

// SimplifyReshape: reshape, reshape, reverse_reshape -> one reshape to the static shape.
// CHECK-LABEL: func.func @reshapes(
// CHECK-NEXT{LITERAL}: %0 = relay.reshape %x {newshape = [4, 4, 16]} : (tensor<1x16x4x4xf32>) -> tensor<4x4x16xf32>
// CHECK-NEXT{LITERAL}: func.return %0 : tensor<4x4x16xf32>
func.func @reshapes(%x: tensor<1x16x4x4xf32>) -> tensor<4x4x16xf32> {
  %0 = relay.reshape %x {newshape = [1, 16, -1]} : (tensor<1x16x4x4xf32>) -> tensor<1x16x16xf32>
  %1 = relay.reshape %0 {newshape = [4, 4, -1]} : (tensor<1x16x16xf32>) -> tensor<4x4x16xf32>
  %2 = relay.contrib_reverse_reshape %1 {newshape = [4, 0, -1]} : (tensor<4x4x16xf32>) -> tensor<4x4x16xf32>
  func.return %2 : tensor<4x4x16xf32>
}

// -----

// SimplifyTranspose: transpose + layout_transform + transpose compose into one transpose.
// CHECK-LABEL: func.func @transposes(
// CHECK-NEXT{LITERAL}: %0 = relay.transpose %x {axes = [0, 2, 3, 1]} : (tensor<1x3x4x5xf32>) -> tensor<1x4x5x3xf32>
// CHECK-NEXT{LITERAL}: func.return %0 : tensor<1x4x5x3xf32>
func.func @transposes(%x: tensor<1x3x4x5xf32>) -> tensor<1x4x5x3xf32> {
  %0 = relay.transpose %x {axes = [0, 2, 3, 1]} : (tensor<1x3x4x5xf32>) -> tensor<1x4x5x3xf32>
  %1 = relay.layout_transform %0 {src_layout = "NHWC", dst_layout = "HWCN"} : (tensor<1x4x5x3xf32>) -> tensor<4x5x3x1xf32>
  %2 = relay.transpose %1 {axes = [3, 0, 1, 2]} : (tensor<4x5x3x1xf32>) -> tensor<1x4x5x3xf32>
  func.return %2 : tensor<1x4x5x3xf32>
}

// -----

// SimplifyTranspose with rank-changing layout_transforms: NHWC -> NCHW -> NCHW4c becomes
// NHWC -> NCHW4c, and back.
// CHECK-LABEL: func.func @rank_changing(
// CHECK-NEXT{LITERAL}: %0 = relay.layout_transform %x {src_layout = "NHWC", dst_layout = "NCHW4c"} : (tensor<1x4x4x8xf32>) -> tensor<1x2x4x4x4xf32>
// CHECK-NEXT{LITERAL}: %1 = relay.nn.relu %0 : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x4x4x4xf32>
// CHECK-NEXT{LITERAL}: %2 = relay.layout_transform %1 {src_layout = "NCHW4c", dst_layout = "NHWC"} : (tensor<1x2x4x4x4xf32>) -> tensor<1x4x4x8xf32>
// CHECK-NEXT{LITERAL}: func.return %2 : tensor<1x4x4x8xf32>
func.func @rank_changing(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %0 = relay.transpose %x {axes = [0, 3, 1, 2]} : (tensor<1x4x4x8xf32>) -> tensor<1x8x4x4xf32>
  %1 = relay.layout_transform %0 {src_layout = "NCHW", dst_layout = "NCHW4c"} : (tensor<1x8x4x4xf32>) -> tensor<1x2x4x4x4xf32>
  %2 = relay.nn.relu %1 : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x4x4x4xf32>
  %3 = relay.layout_transform %2 {src_layout = "NCHW4c", dst_layout = "NCHW"} : (tensor<1x2x4x4x4xf32>) -> tensor<1x8x4x4xf32>
  %4 = relay.transpose %3 {axes = [0, 2, 3, 1]} : (tensor<1x8x4x4xf32>) -> tensor<1x4x4x8xf32>
  func.return %4 : tensor<1x4x4x8xf32>
}

// -----

// SimplifyNoOpTranspose: the identity transpose and a layout_transform to the same layout go.
// CHECK-LABEL: func.func @noop(
// CHECK-NEXT{LITERAL}: %0 = relay.nn.relu %x : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT{LITERAL}: func.return %0 : tensor<2x3x4xf32>
func.func @noop(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = relay.transpose %x {axes = [0, 1, 2]} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %1 = relay.nn.relu %0 : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %2 = relay.layout_transform %1 {src_layout = "NCW", dst_layout = "NCW"} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return %2 : tensor<2x3x4xf32>
}

// -----

// SimplifySameCast and SimplifyConsecutiveCast: a cast to the same dtype goes; int8 -> int16
// -> int32 widens, so it is one cast; float32 -> int32 -> float32 narrows first, so it stays.
// CHECK-LABEL: func.func @casts(
// CHECK-NEXT{LITERAL}: %0 = relay.cast %x {dtype = "int32"} : (tensor<4xi8>) -> tensor<4xi32>
// CHECK-NEXT{LITERAL}: %1 = relay.cast %f {dtype = "int32"} : (tensor<4xf32>) -> tensor<4xi32>
// CHECK-NEXT{LITERAL}: %2 = relay.cast %1 {dtype = "float32"} : (tensor<4xi32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: func.return %0, %2 : tensor<4xi32>, tensor<4xf32>
func.func @casts(%x: tensor<4xi8>, %f: tensor<4xf32>) -> (tensor<4xi32>, tensor<4xf32>) {
  %0 = relay.cast %x {dtype = "int8"} : (tensor<4xi8>) -> tensor<4xi8>
  %1 = relay.cast %0 {dtype = "int16"} : (tensor<4xi8>) -> tensor<4xi16>
  %2 = relay.cast %1 {dtype = "int32"} : (tensor<4xi16>) -> tensor<4xi32>
  %3 = relay.cast %f {dtype = "int32"} : (tensor<4xf32>) -> tensor<4xi32>
  %4 = relay.cast %3 {dtype = "float32"} : (tensor<4xi32>) -> tensor<4xf32>
  func.return %2, %4 : tensor<4xi32>, tensor<4xf32>
}

// -----

// SimplifyClipAndConsecutiveCast: clip to [0, 255] then uint8 then int32: both casts go.
// CHECK-LABEL: func.func @clip_casts(
// CHECK-NEXT{LITERAL}: %0 = relay.clip %x {a_min = 0.0, a_max = 255.0} : (tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT{LITERAL}: func.return %0 : tensor<4xi32>
func.func @clip_casts(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = relay.clip %x {a_min = 0.0, a_max = 255.0} : (tensor<4xi32>) -> tensor<4xi32>
  %1 = relay.cast %0 {dtype = "uint8"} : (tensor<4xi32>) -> tensor<4xui8>
  %2 = relay.cast %1 {dtype = "int32"} : (tensor<4xui8>) -> tensor<4xi32>
  func.return %2 : tensor<4xi32>
}

// -----

// SimplifyClip: a clip covering all of uint8 goes.
// CHECK-LABEL: func.func @clip(
// CHECK-NEXT{LITERAL}: %0 = relay.cast %x {dtype = "uint8"} : (tensor<4xi32>) -> tensor<4xui8>
// CHECK-NEXT{LITERAL}: func.return %0 : tensor<4xui8>
func.func @clip(%x: tensor<4xi32>) -> tensor<4xui8> {
  %0 = relay.cast %x {dtype = "uint8"} : (tensor<4xi32>) -> tensor<4xui8>
  %1 = relay.clip %0 {a_min = 0.0, a_max = 255.0} : (tensor<4xui8>) -> tensor<4xui8>
  func.return %1 : tensor<4xui8>
}

// -----

// FullElementwise: full(c) feeding a broadcast op becomes the scalar c.
// CHECK-LABEL: func.func @full_elementwise(
// CHECK-NEXT{LITERAL}: %c = relay.constant dense<2.500000e+00> : tensor<f32>
// CHECK-NEXT{LITERAL}: %0 = relay.subtract %c, %x : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT{LITERAL}: func.return %0 : tensor<2x3xf32>
func.func @full_elementwise(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = relay.constant dense<2.5> : tensor<f32>
  %f = relay.full %c {shape = [2, 3]} : (tensor<f32>) -> tensor<2x3xf32>
  %0 = relay.subtract %f, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

// SimplifyDQArg: argmax of a dequantize reads the integers.
// CHECK-LABEL: func.func @dq_argmax(
// CHECK-NEXT{LITERAL}: %0 = relay.argmax %x {axis = [1]} : (tensor<2x8xi8>) -> tensor<2xi32>
// CHECK-NEXT{LITERAL}: func.return %0 : tensor<2xi32>
func.func @dq_argmax(%x: tensor<2x8xi8>) -> tensor<2xi32> {
  %s = relay.constant dense<0.5> : tensor<f32>
  %z = relay.constant dense<0> : tensor<i32>
  %0 = qnn.dequantize %x, %s, %z : (tensor<2x8xi8>, tensor<f32>, tensor<i32>) -> tensor<2x8xf32>
  %1 = relay.argmax %0 {axis = [1]} : (tensor<2x8xf32>) -> tensor<2xi32>
  func.return %1 : tensor<2xi32>
}
