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
