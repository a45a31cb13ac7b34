// RUN: relay-opt %s -p qnn-canonicalize-ops --split-input-file | filecheck %s

// UPWARD (the default): one fixed_point_multiply (0.25 = 2**30 * 2**(-1-31)); zero point, clip, cast.
// CHECK-LABEL: func.func @requantize(%x: tensor<4xi32>) -> tensor<4xi8> {
// CHECK-NEXT: %0 = relay.fixed_point_multiply %x {multiplier = 1073741824, shift = -1} : (tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT: %1 = relay.constant dense<3> : tensor<i32>
// CHECK-NEXT: %2 = relay.add %1, %0 : (tensor<i32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT: %3 = relay.clip %2 {a_min = -128.0, a_max = 127.0} : (tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT: %y = relay.cast %3 {dtype = "int8"} : (tensor<4xi32>) -> tensor<4xi8>
// CHECK-NEXT: func.return %y : tensor<4xi8>
func.func @requantize(%x: tensor<4xi32>) -> tensor<4xi8> {
  %s1 = relay.constant dense<0.5> : tensor<f32>
  %z1 = relay.constant dense<0> : tensor<i32>
  %s2 = relay.constant dense<2.0> : tensor<f32>
  %z2 = relay.constant dense<3> : tensor<i32>
  %y = qnn.requantize %x, %s1, %z1, %s2, %z2 : (tensor<4xi32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<4xi8>
  func.return %y : tensor<4xi8>
}

// -----

// TONEAREST: the int64 multiply, a sign-dependent rounding add and an arithmetic right shift.
// CHECK-LABEL: func.func @tonearest(%x: tensor<4xi32>) -> tensor<4xi32> {
// CHECK-NEXT: %0 = relay.cast %x {dtype = "int64"} : (tensor<4xi32>) -> tensor<4xi64>
// CHECK-NEXT: %1 = relay.constant dense<1073741824> : tensor<i64>
// CHECK-NEXT: %2 = relay.multiply %0, %1 : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
// CHECK-NEXT: %3 = relay.constant dense<0> : tensor<i64>
// CHECK-NEXT: %4 = relay.greater_equal %2, %3 : (tensor<4xi64>, tensor<i64>) -> tensor<4xi1>
// CHECK-NEXT: %5 = relay.constant dense<2147483648> : tensor<i64>
// CHECK-NEXT: %6 = relay.constant dense<2147483647> : tensor<i64>
// CHECK-NEXT: %7 = relay.where %4, %5, %6 : (tensor<4xi1>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
// CHECK-NEXT: %8 = relay.add %2, %7 : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
// CHECK-NEXT: %9 = relay.constant dense<32> : tensor<i64>
// CHECK-NEXT: %10 = relay.right_shift %8, %9 : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
// CHECK-NEXT: %y = relay.cast %10 {dtype = "int32"} : (tensor<4xi64>) -> tensor<4xi32>
// CHECK-NEXT: func.return %y : tensor<4xi32>
func.func @tonearest(%x: tensor<4xi32>) -> tensor<4xi32> {
  %s1 = relay.constant dense<0.5> : tensor<f32>
  %z1 = relay.constant dense<0> : tensor<i32>
  %s2 = relay.constant dense<2.0> : tensor<f32>
  %y = qnn.requantize %x, %s1, %z1, %s2, %z1 {rounding = "TONEAREST", out_dtype = "int32"} : (tensor<4xi32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<4xi32>
  func.return %y : tensor<4xi32>
}

// -----

// Per-channel scales: fixed_point_multiply_per_axis with one multiplier and shift per channel.
// CHECK-LABEL: func.func @per_channel(%x: tensor<1x2x4xi32>) -> tensor<1x2x4xui8> {
// CHECK-NEXT: %0 = relay.constant dense<1073741824> : tensor<2xi32>
// CHECK-NEXT: %1 = relay.constant dense<0> : tensor<2xi32>
// CHECK-NEXT: %2 = relay.constant dense<[0, 1]> : tensor<2xi32>
// CHECK-NEXT: %3 = relay.fixed_point_multiply_per_axis %x, %0, %1, %2 {is_lshift_required = false, is_rshift_required = true, axes = [1]} : (tensor<1x2x4xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<1x2x4xi32>
// CHECK-NEXT: %4 = relay.clip %3 {a_min = 0.0, a_max = 255.0} : (tensor<1x2x4xi32>) -> tensor<1x2x4xi32>
// CHECK-NEXT: %y = relay.cast %4 {dtype = "uint8"} : (tensor<1x2x4xi32>) -> tensor<1x2x4xui8>
// CHECK-NEXT: func.return %y : tensor<1x2x4xui8>
func.func @per_channel(%x: tensor<1x2x4xi32>) -> tensor<1x2x4xui8> {
  %s1 = relay.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %z1 = relay.constant dense<0> : tensor<i32>
  %s2 = relay.constant dense<1.0> : tensor<f32>
  %y = qnn.requantize %x, %s1, %z1, %s2, %z1 {axis = 1, out_dtype = "uint8"} : (tensor<1x2x4xi32>, tensor<2xf32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x2x4xui8>
  func.return %y : tensor<1x2x4xui8>
}

// -----

// qnn.dense: term1 - kzp * sum(x) - (izp * sum(w) - izp * kzp * K).
// CHECK-LABEL: func.func @dense(%x: tensor<2x8xui8>, %w: tensor<4x8xi8>) -> tensor<2x4xi32> {
// CHECK-NEXT: %0 = relay.nn.dense %x, %w {units = 4, out_dtype = "int32"} : (tensor<2x8xui8>, tensor<4x8xi8>) -> tensor<2x4xi32>
// CHECK-NEXT: %1 = relay.cast %x {dtype = "int32"} : (tensor<2x8xui8>) -> tensor<2x8xi32>
// CHECK-NEXT: %2 = relay.sum %1 {axis = [1], keepdims = true} : (tensor<2x8xi32>) -> tensor<2x1xi32>
// CHECK-NEXT: %3 = relay.constant dense<2> : tensor<i32>
// CHECK-NEXT: %4 = relay.multiply %3, %2 : (tensor<i32>, tensor<2x1xi32>) -> tensor<2x1xi32>
// CHECK-NEXT: %5 = relay.cast %w {dtype = "int32"} : (tensor<4x8xi8>) -> tensor<4x8xi32>
// CHECK-NEXT: %6 = relay.sum %5 {axis = [1]} : (tensor<4x8xi32>) -> tensor<4xi32>
// CHECK-NEXT: %7 = relay.constant dense<3> : tensor<i32>
// CHECK-NEXT: %8 = relay.multiply %7, %6 : (tensor<i32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT: %9 = relay.constant dense<48> : tensor<i32>
// CHECK-NEXT: %10 = relay.subtract %0, %4 : (tensor<2x4xi32>, tensor<2x1xi32>) -> tensor<2x4xi32>
// CHECK-NEXT: %11 = relay.subtract %9, %8 : (tensor<i32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT: %y = relay.add %10, %11 : (tensor<2x4xi32>, tensor<4xi32>) -> tensor<2x4xi32>
// CHECK-NEXT: func.return %y : tensor<2x4xi32>
func.func @dense(%x: tensor<2x8xui8>, %w: tensor<4x8xi8>) -> tensor<2x4xi32> {
  %zx = relay.constant dense<3> : tensor<i32>
  %zw = relay.constant dense<2> : tensor<i32>
  %s = relay.constant dense<0.1> : tensor<f32>
  %y = qnn.dense %x, %w, %zx, %zw, %s, %s {units = 4} : (tensor<2x8xui8>, tensor<4x8xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<2x4xi32>
  func.return %y : tensor<2x4xi32>
}

// -----

// quantize: cast(clip(round(x / s) + zp)); dequantize: (cast(q) - zp) * s.
// CHECK-LABEL: func.func @quantize(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: %0 = relay.constant dense<1.000000e-01> : tensor<f32>
// CHECK-NEXT: %1 = relay.constant dense<5.000000e+00> : tensor<f32>
// CHECK-NEXT: %2 = relay.divide %x, %0 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT: %3 = relay.round %2 : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %4 = relay.add %3, %1 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT: %5 = relay.clip %4 {a_min = 0.0, a_max = 255.0} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %q = relay.cast %5 {dtype = "uint8"} : (tensor<4xf32>) -> tensor<4xui8>
// CHECK-NEXT: %6 = relay.constant dense<1.000000e-01> : tensor<f32>
// CHECK-NEXT: %7 = relay.constant dense<5> : tensor<i32>
// CHECK-NEXT: %8 = relay.cast %q {dtype = "int32"} : (tensor<4xui8>) -> tensor<4xi32>
// CHECK-NEXT: %9 = relay.subtract %8, %7 : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
// CHECK-NEXT: %10 = relay.cast %9 {dtype = "float32"} : (tensor<4xi32>) -> tensor<4xf32>
// CHECK-NEXT: %y = relay.multiply %10, %6 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT: func.return %y : tensor<4xf32>
func.func @quantize(%x: tensor<4xf32>) -> tensor<4xf32> {
  %s = relay.constant dense<0.1> : tensor<f32>
  %z = relay.constant dense<5> : tensor<i32>
  %q = qnn.quantize %x, %s, %z {out_dtype = "uint8"} : (tensor<4xf32>, tensor<f32>, tensor<i32>) -> tensor<4xui8>
  %y = qnn.dequantize %q, %s, %z : (tensor<4xui8>, tensor<f32>, tensor<i32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
