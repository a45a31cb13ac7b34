// RUN: relay-opt %s -p 'canonicalize-arith' --split-input-file | filecheck %s

// DivideByConstant: x / sqrt(2) becomes x * (1 / sqrt(2)).
// CHECK-LABEL: func.func @divide_by_constant(
// CHECK-NEXT{LITERAL}: %0 = relay.constant dense<0.707106769> : tensor<f32>
// CHECK-NEXT{LITERAL}: %y = relay.multiply %x, %0 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: func.return %y : tensor<4xf32>
func.func @divide_by_constant(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = relay.constant dense<1.41421354> : tensor<f32>
  %y = relay.divide %x, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// DivideByConstant keeps a division by zero, by a tensor that is not constant, and integer
// divisions (their meaning is not a product).
// CHECK-LABEL: func.func @divide_kept(
// CHECK: relay.divide %x, %y
// CHECK: relay.divide %i, %two
func.func @divide_kept(%x: tensor<4xf32>, %y: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %b = relay.divide %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %two = relay.constant dense<2> : tensor<i32>
  %c = relay.divide %i, %two : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  func.return %b, %c : tensor<4xf32>, tensor<4xi32>
}

// -----

// A division by zero has no finite reciprocal: kept (its meaning, +-inf, is checked apart).
// CHECK-LABEL: func.func @divide_by_zero_kept(
// CHECK: relay.divide %x, %z
func.func @divide_by_zero_kept(%x: tensor<4xf32>) -> tensor<4xf32> {
  %z = relay.constant dense<0.0> : tensor<f32>
  %a = relay.divide %x, %z : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}

// -----

// Integer arithmetic is left alone: x / 2 truncates in int32 (x * 0.5 has no int32 form), and
// x ** 2 stays a power (the patterns' forms are for floats).
// CHECK-LABEL: func.func @integer_arith_kept(
// CHECK: relay.divide %x, %c
// CHECK: relay.power %a, %c
// CHECK-NOT: relay.multiply
func.func @integer_arith_kept(%x: tensor<4xi32>) -> tensor<4xi32> {
  %c = relay.constant dense<2> : tensor<i32>
  %a = relay.divide %x, %c : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  %p = relay.power %a, %c : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  func.return %p : tensor<4xi32>
}

// -----

// ConstantLast and ScalarFactorLast: GELU as the ONNX importer writes it,
// (x * 0.5) * (1 + erf(x * 0.7071)), becomes (x * (erf(x * 0.7071) + 1)) * 0.5, the form
// Relay's torch-exported GELU has.
// CHECK-LABEL: func.func @gelu_importer_form(
// CHECK-NEXT{LITERAL}: %r = relay.constant dense<0.707106769> : tensor<f32>
// CHECK-NEXT{LITERAL}: %0 = relay.multiply %x, %r : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: %1 = relay.erf %0 : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: %half = relay.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT{LITERAL}: %one = relay.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT{LITERAL}: %2 = relay.add %1, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: %3 = relay.multiply %x, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: %4 = relay.multiply %3, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: func.return %4 : tensor<4xf32>
func.func @gelu_importer_form(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = relay.constant dense<0.707106769> : tensor<f32>
  %0 = relay.multiply %x, %r : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = relay.erf %0 : (tensor<4xf32>) -> tensor<4xf32>
  %half = relay.constant dense<0.5> : tensor<f32>
  %2 = relay.multiply %x, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %one = relay.constant dense<1.0> : tensor<f32>
  %3 = relay.add %one, %1 : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = relay.multiply %2, %3 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %4 : tensor<4xf32>
}

// -----

// ScalarFactorLast leaves a product whose scaled operand has another use, and a
// factor with more than one element.
// CHECK-LABEL: func.func @scalar_factor_kept(
// CHECK-NEXT{LITERAL}: %half = relay.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT{LITERAL}: %0 = relay.multiply %x, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: %1 = relay.multiply %0, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: %v = relay.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK-NEXT{LITERAL}: %2 = relay.multiply %x, %v : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: %3 = relay.multiply %2, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: func.return %0, %1, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
func.func @scalar_factor_kept(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %half = relay.constant dense<0.5> : tensor<f32>
  %0 = relay.multiply %x, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = relay.multiply %0, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %v = relay.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %2 = relay.multiply %x, %v : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = relay.multiply %2, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0, %1, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// SmallPower: x^3 (GPT-2's tanh-GELU), x^2, x^0.5, x^-1; x^2.5 stays a power.
// CHECK-LABEL: func.func @small_powers(
// CHECK-NEXT{LITERAL}: %0 = relay.multiply %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: %1 = relay.multiply %0, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: %2 = relay.multiply %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: %3 = relay.sqrt %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: %4 = relay.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT{LITERAL}: %5 = relay.divide %4, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: %e = relay.constant dense<2.500000e+00> : tensor<f32>
// CHECK-NEXT{LITERAL}: %6 = relay.power %x, %e : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: func.return %1, %2, %3, %5, %6 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
func.func @small_powers(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %three = relay.constant dense<3.0> : tensor<f32>
  %0 = relay.power %x, %three : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %two = relay.constant dense<2.0> : tensor<f32>
  %1 = relay.power %x, %two : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %half = relay.constant dense<0.5> : tensor<f32>
  %2 = relay.power %x, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %m1 = relay.constant dense<-1.0> : tensor<f32>
  %3 = relay.power %x, %m1 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e = relay.constant dense<2.5> : tensor<f32>
  %4 = relay.power %x, %e : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// ScalarOutOfMatmul: torch's scaled-dot-product attention scales q and k by sqrt(scale)
// each, through the reshapes and the transpose of k; both factors leave the matmul and meet
// after it as one (0.353553385 * 0.353553385 in float32).
// CHECK-LABEL: func.func @sdpa_scales(
// CHECK-NEXT{LITERAL}: %kt = relay.transpose %k {axes = [0, 1, 3, 2]} : (tensor<1x2x4x8xf32>) -> tensor<1x2x8x4xf32>
// CHECK-NEXT{LITERAL}: %q3 = relay.reshape %q {newshape = [2, 4, 8]} : (tensor<1x2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT{LITERAL}: %k3 = relay.reshape %kt {newshape = [2, 8, 4]} : (tensor<1x2x8x4xf32>) -> tensor<2x8x4xf32>
// CHECK-NEXT{LITERAL}: %y = relay.nn.batch_matmul %q3, %k3 : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
// CHECK-NEXT{LITERAL}: %0 = relay.constant dense<0.124999993> : tensor<1xf32>
// CHECK-NEXT{LITERAL}: %y_1 = relay.multiply %y, %0 : (tensor<2x4x4xf32>, tensor<1xf32>) -> tensor<2x4x4xf32>
// CHECK-NEXT{LITERAL}: func.return %y_1 : tensor<2x4x4xf32>
func.func @sdpa_scales(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>) -> tensor<2x4x4xf32> {
  %s = relay.constant dense<0.353553385> : tensor<1xf32>
  %qs = relay.multiply %q, %s : (tensor<1x2x4x8xf32>, tensor<1xf32>) -> tensor<1x2x4x8xf32>
  %kt = relay.transpose %k {axes = [0, 1, 3, 2]} : (tensor<1x2x4x8xf32>) -> tensor<1x2x8x4xf32>
  %ks = relay.multiply %kt, %s : (tensor<1x2x8x4xf32>, tensor<1xf32>) -> tensor<1x2x8x4xf32>
  %q3 = relay.reshape %qs {newshape = [2, 4, 8]} : (tensor<1x2x4x8xf32>) -> tensor<2x4x8xf32>
  %k3 = relay.reshape %ks {newshape = [2, 8, 4]} : (tensor<1x2x8x4xf32>) -> tensor<2x8x4xf32>
  %y = relay.nn.batch_matmul %q3, %k3 {transpose_a = false, transpose_b = false} : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  func.return %y : tensor<2x4x4xf32>
}

// -----

// ScalarOutOfMatmul keeps a matmul with a constant weight (a GELU's last 0.5 stays in the
// GELU), a product with another use (it is computed anyway), a factor that
// is not one element, and one that broadcasts x to more dims (its product is not x scaled).
// CHECK-LABEL: func.func @matmul_scales_kept(
// CHECK: %xs = relay.multiply %x, %s
// CHECK: relay.nn.matmul %xs, %y
// CHECK: %xv = relay.multiply %x, %v
// CHECK: relay.nn.matmul %xv, %y
// CHECK: %x4 = relay.multiply %x, %s4
// CHECK: %x2 = relay.reshape %x4
// CHECK: relay.nn.matmul %x2, %y
// CHECK: %xw = relay.multiply %x, %s
// CHECK: relay.nn.matmul %xw, %w
func.func @matmul_scales_kept(%x: tensor<4x8xf32>, %y: tensor<8x3xf32>) -> (tensor<4x3xf32>, tensor<4x8xf32>, tensor<4x3xf32>, tensor<1x1x4x3xf32>, tensor<4x2xf32>) {
  %s = relay.constant dense<0.5> : tensor<f32>
  %xs = relay.multiply %x, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %a = relay.nn.matmul %xs, %y : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %v = relay.constant dense<[0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]> : tensor<8xf32>
  %xv = relay.multiply %x, %v : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %b = relay.nn.matmul %xv, %y : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %s4 = relay.constant dense<0.5> : tensor<1x1x1x1xf32>
  %x4 = relay.multiply %x, %s4 : (tensor<4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x4x8xf32>
  %x2 = relay.reshape %x4 {newshape = [4, 8]} : (tensor<1x1x4x8xf32>) -> tensor<4x8xf32>
  %c = relay.nn.matmul %x2, %y : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %c4 = relay.reshape %c {newshape = [1, 1, 4, 3]} : (tensor<4x3xf32>) -> tensor<1x1x4x3xf32>
  %w = relay.constant dense<0.25> : tensor<8x2xf32>
  %xw = relay.multiply %x, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %d = relay.nn.matmul %xw, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  func.return %a, %xs, %b, %c4, %d : tensor<4x3xf32>, tensor<4x8xf32>, tensor<4x3xf32>, tensor<1x1x4x3xf32>, tensor<4x2xf32>
}

// -----

// ScalarOutOfMatmul keeps a product whose view has another use (moving it would compute the
// view twice).
// CHECK-LABEL: func.func @scaled_view_kept(
// CHECK: %xs = relay.multiply %x, %s
// CHECK: %t = relay.transpose %xs
// CHECK: relay.nn.matmul %t, %y
func.func @scaled_view_kept(%x: tensor<8x4xf32>, %y: tensor<8x3xf32>) -> (tensor<4x3xf32>, tensor<4x8xf32>) {
  %s = relay.constant dense<0.5> : tensor<f32>
  %xs = relay.multiply %x, %s : (tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xf32>
  %t = relay.transpose %xs {axes = [1, 0]} : (tensor<8x4xf32>) -> tensor<4x8xf32>
  %a = relay.nn.matmul %t, %y : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  func.return %a, %t : tensor<4x3xf32>, tensor<4x8xf32>
}

// -----

// FoldAdjacentConstants: (x * 0.5) * s is x * (0.5 * s) when nothing else reads x * 0.5.
// CHECK-LABEL: func.func @adjacent_constants_folded(
// CHECK-NEXT{LITERAL}: %0 = relay.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK-NEXT{LITERAL}: %y = relay.multiply %x, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: func.return %y : tensor<4xf32>
func.func @adjacent_constants_folded(%x: tensor<4xf32>) -> tensor<4xf32> {
  %half = relay.constant dense<0.5> : tensor<f32>
  %s = relay.constant dense<[2.0, 4.0, 6.0, 8.0]> : tensor<4xf32>
  %a = relay.multiply %x, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %y = relay.multiply %a, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// A shared x * 0.5 stays whole (FastViT's GELU, its factor last, read by a batch norm's
// scale and a residual): folding it into one reader would split the activation.
// CHECK-LABEL: func.func @adjacent_constants_shared(
// CHECK: %a = relay.multiply %x, %half
// CHECK: %y = relay.multiply %a, %s
// CHECK: %z = relay.add %a, %x
func.func @adjacent_constants_shared(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %half = relay.constant dense<0.5> : tensor<f32>
  %s = relay.constant dense<[2.0, 4.0, 6.0, 8.0]> : tensor<4xf32>
  %a = relay.multiply %x, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %y = relay.multiply %a, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %z = relay.add %a, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y, %z : tensor<4xf32>, tensor<4xf32>
}

// -----

// MergeClips: torch's clamp(x, 0, 6) decomposed into clamp_min then clamp_max is one clip; a
// ReLU then a clip too. (-1.0e+309 is -inf: the parser does not read the printer's -inf.)
// CHECK-LABEL: func.func @merge_clips(
// CHECK-NEXT{LITERAL}: %b = relay.clip %x {a_min = 0.0, a_max = 6.0} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: %c = relay.clip %x {a_min = 0.0, a_max = 2.0} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: func.return %b, %c : tensor<4xf32>, tensor<4xf32>
func.func @merge_clips(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = relay.clip %x {a_min = 0.0, a_max = inf} : (tensor<4xf32>) -> tensor<4xf32>
  %b = relay.clip %a {a_min = -1.0e+309, a_max = 6.0} : (tensor<4xf32>) -> tensor<4xf32>
  %r = relay.nn.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %c = relay.clip %r {a_min = -1.0, a_max = 2.0} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %b, %c : tensor<4xf32>, tensor<4xf32>
}

// -----

// MergeClips keeps clips whose ranges do not overlap (the result is a bound, not a clip of x).
// CHECK-LABEL: func.func @disjoint_clips_kept(
// CHECK: %a = relay.clip %x {a_min = -2.0, a_max = -1.0}
// CHECK: %b = relay.clip %a {a_min = 1.0, a_max = 2.0}
func.func @disjoint_clips_kept(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = relay.clip %x {a_min = -2.0, a_max = -1.0} : (tensor<4xf32>) -> tensor<4xf32>
  %b = relay.clip %a {a_min = 1.0, a_max = 2.0} : (tensor<4xf32>) -> tensor<4xf32>
  %y = relay.add %b, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// ScaleIntoClip: hard-swish as torch decomposes it, x * clamp(clamp(x + 3, min=0), max=6) / 6,
// becomes ONNX's HardSwish, x * clip(x * 1/6 + 0.5, 0, 1).
// CHECK-LABEL: func.func @hardswish_torch_form(
// CHECK-NEXT{LITERAL}: %0 = relay.constant dense<0.166666672> : tensor<f32>
// CHECK-NEXT{LITERAL}: %1 = relay.multiply %x, %0 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: %2 = relay.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT{LITERAL}: %3 = relay.add %1, %2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: %4 = relay.clip %3 {a_min = 0.0, a_max = 1.0} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: %y = relay.multiply %x, %4 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT{LITERAL}: func.return %y : tensor<4xf32>
func.func @hardswish_torch_form(%x: tensor<4xf32>) -> tensor<4xf32> {
  %three = relay.constant dense<3.0> : tensor<f32>
  %a = relay.add %x, %three : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %b = relay.clip %a {a_min = 0.0, a_max = inf} : (tensor<4xf32>) -> tensor<4xf32>
  %c = relay.clip %b {a_min = -1.0e+309, a_max = 6.0} : (tensor<4xf32>) -> tensor<4xf32>
  %p = relay.multiply %x, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %six = relay.constant dense<6.0> : tensor<f32>
  %y = relay.divide %p, %six : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// ScaleIntoClip: hard-sigmoid as relu6(z + b) / 6 with a per-channel b (a bias that took the
// 3): the product goes inside the clip, the bias stays whole.
// CHECK-LABEL: func.func @hardsigmoid_after_bias(
// CHECK: %a = relay.add %x, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT{LITERAL}: %s = relay.constant dense<0.166666672> : tensor<f32>
// CHECK-NEXT{LITERAL}: %0 = relay.multiply %a, %s : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
// CHECK-NEXT{LITERAL}: %y = relay.clip %0 {a_min = 0.0, a_max = 1.0} : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT{LITERAL}: func.return %y : tensor<2x4xf32>
func.func @hardsigmoid_after_bias(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %b = relay.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %a = relay.add %x, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %c = relay.clip %a {a_min = 0.0, a_max = 6.0} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = relay.constant dense<0.166666672> : tensor<f32>
  %y = relay.multiply %s, %c : (tensor<f32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// -----

// ScaleIntoClip leaves a clip whose scaled range is not [0, 1] (a ReLU6 times 0.5 keeps its
// clip, which a convolution takes as a post-op), and a negative factor.
// CHECK-LABEL: func.func @scaled_clip_kept(
// CHECK: %c = relay.clip %x {a_min = 0.0, a_max = 6.0}
// CHECK: relay.multiply %c, %half
// CHECK: %d = relay.clip %x {a_min = -6.0, a_max = 0.0}
// CHECK: relay.multiply %d, %m
func.func @scaled_clip_kept(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = relay.clip %x {a_min = 0.0, a_max = 6.0} : (tensor<4xf32>) -> tensor<4xf32>
  %half = relay.constant dense<0.5> : tensor<f32>
  %y = relay.multiply %c, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %d = relay.clip %x {a_min = -6.0, a_max = 0.0} : (tensor<4xf32>) -> tensor<4xf32>
  %m = relay.constant dense<-0.166666672> : tensor<f32>
  %z = relay.multiply %d, %m : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %y, %z : tensor<4xf32>, tensor<4xf32>
}

// -----

// L2Normalize: torch's F.normalize as ONNX writes it (ReduceL2, a Clip to [eps, inf], an
// Expand, a Div) becomes Relay's l2_normalize with eps squared.
// CHECK-LABEL: func.func @l2_normalize_clip(
// CHECK-NEXT{LITERAL}: %y = relay.nn.l2_normalize %x {eps = 1.0e-24, axis = [-1]} : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT{LITERAL}: func.return %y : tensor<2x3x8xf32>
func.func @l2_normalize_clip(%x: tensor<2x3x8xf32>) -> tensor<2x3x8xf32> {
  %m = relay.multiply %x, %x : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %s = relay.sum %m {axis = [-1], keepdims = true} : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32>
  %n = relay.sqrt %s : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %c = relay.clip %n {a_min = 1.0e-12, a_max = inf} : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %e = relay.broadcast_to %c {shape = [2, 3, 8]} : (tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %y = relay.divide %x, %e : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  func.return %y : tensor<2x3x8xf32>
}

// -----

// The bound as a maximum with a scalar (either side), over two axes.
// CHECK-LABEL: func.func @l2_normalize_maximum(
// CHECK-NEXT{LITERAL}: %y = relay.nn.l2_normalize %x {eps = 0.25, axis = [1, 2]} : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
func.func @l2_normalize_maximum(%x: tensor<2x3x8xf32>) -> tensor<2x3x8xf32> {
  %m = relay.multiply %x, %x : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %s = relay.sum %m {axis = [1, 2], keepdims = true} : (tensor<2x3x8xf32>) -> tensor<2x1x1xf32>
  %n = relay.sqrt %s : (tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %eps = relay.constant dense<0.5> : tensor<f32>
  %c = relay.maximum %eps, %n : (tensor<f32>, tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %y = relay.divide %x, %c : (tensor<2x3x8xf32>, tensor<2x1x1xf32>) -> tensor<2x3x8xf32>
  func.return %y : tensor<2x3x8xf32>
}

// -----

// Kept: a clip with a finite upper bound, no lower bound (eps 0: 0 / 0 stays NaN), a sum of
// another tensor's squares, and a sum without its kept dimensions.
// CHECK-LABEL: func.func @l2_normalize_kept(
// CHECK-NOT: l2_normalize
// CHECK: func.return
func.func @l2_normalize_kept(%x: tensor<2x8xf32>, %z: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %m = relay.multiply %x, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %s = relay.sum %m {axis = [-1], keepdims = true} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %n = relay.sqrt %s : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %c = relay.clip %n {a_min = 1.0e-12, a_max = 6.0} : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %a = relay.divide %x, %c : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %c0 = relay.clip %n {a_min = 0.0, a_max = inf} : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %b = relay.divide %x, %c0 : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %cz = relay.clip %n {a_min = 1.0e-12, a_max = inf} : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %c2 = relay.divide %z, %cz : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %s2 = relay.sum %m {axis = [-1]} : (tensor<2x8xf32>) -> tensor<2xf32>
  %n2 = relay.sqrt %s2 : (tensor<2xf32>) -> tensor<2xf32>
  %k2 = relay.clip %n2 {a_min = 1.0e-12, a_max = inf} : (tensor<2xf32>) -> tensor<2xf32>
  %e2 = relay.expand_dims %k2 {axis = 1} : (tensor<2xf32>) -> tensor<2x1xf32>
  %d = relay.divide %x, %e2 : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  func.return %a, %b, %c2, %d : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// Kept in 16 bits: the written form rounds each step to bfloat16 or float16 (Relay's op would
// differ by an ulp of the result), and in float16 eps squared underflows to 0 (a zero vector
// would become 0 / 0). (bfloat16 crashed the pass: numpy's finfo does not know it.)
// CHECK-LABEL: func.func @l2_normalize_narrow(
// CHECK-NOT: l2_normalize
// CHECK: relay.divide %x
// CHECK: relay.divide %h
func.func @l2_normalize_narrow(%x: tensor<2x8xbf16>, %h: tensor<2x8xf16>) -> (tensor<2x8xbf16>, tensor<2x8xf16>) {
  %m = relay.multiply %x, %x : (tensor<2x8xbf16>, tensor<2x8xbf16>) -> tensor<2x8xbf16>
  %s = relay.sum %m {axis = [-1], keepdims = true} : (tensor<2x8xbf16>) -> tensor<2x1xbf16>
  %n = relay.sqrt %s : (tensor<2x1xbf16>) -> tensor<2x1xbf16>
  %c = relay.clip %n {a_min = 1.0e-12, a_max = inf} : (tensor<2x1xbf16>) -> tensor<2x1xbf16>
  %y = relay.divide %x, %c : (tensor<2x8xbf16>, tensor<2x1xbf16>) -> tensor<2x8xbf16>
  %hm = relay.multiply %h, %h : (tensor<2x8xf16>, tensor<2x8xf16>) -> tensor<2x8xf16>
  %hs = relay.sum %hm {axis = [-1], keepdims = true} : (tensor<2x8xf16>) -> tensor<2x1xf16>
  %hn = relay.sqrt %hs : (tensor<2x1xf16>) -> tensor<2x1xf16>
  %hc = relay.clip %hn {a_min = 1.0e-12, a_max = inf} : (tensor<2x1xf16>) -> tensor<2x1xf16>
  %hy = relay.divide %h, %hc : (tensor<2x8xf16>, tensor<2x1xf16>) -> tensor<2x8xf16>
  func.return %y, %hy : tensor<2x8xbf16>, tensor<2x8xf16>
}
