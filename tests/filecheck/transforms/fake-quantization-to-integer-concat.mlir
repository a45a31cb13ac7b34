// RUN: relay-opt %s -p 'fake-quantization-to-integer{onnxruntime=true}' | filecheck %s
// RUN: relay-opt %s -p fake-quantization-to-integer | filecheck %s --check-prefix=RELAY

// onnxruntime=true: a QuantizeLinear after a Concat of dequantized values (QLinearConcat) is
// each input's quantize, then a concatenation of 8-bit values. %a has the output's parameters
// and passes as it is; %b is quantized from its dequantized value with the quantize's float
// ops (a byte function: a table at run time); the max-pooled %c is dequantized again from the
// integer max pool, so no float op is left before the join.
// CHECK-LABEL: func.func @concat(
// CHECK-NEXT:  %sb = relay.constant dense<3.000000e-02> : tensor<f32>
// CHECK-NEXT:  %zb = relay.constant dense<0> : tensor<i32>
// CHECK-NEXT:  %xb = qnn.dequantize %b, %sb, %zb
// CHECK-NEXT:  %0 = relay.nn.max_pool2d %c {pool_size = [2, 2], strides = [2, 2]} : (tensor<1x1x8x8xui8>) -> tensor<1x1x4x4xui8>
// CHECK-NEXT:  %1 = relay.constant dense<5.000000e-02> : tensor<f32>
// CHECK-NEXT:  %2 = relay.divide %xb, %1
// CHECK-NEXT:  %3 = relay.clip %2 {a_min = -3.0, a_max = 252.0}
// CHECK:       %11 = relay.cast %10 {dtype = "uint8"} : (tensor<1x3x4x4xi32>) -> tensor<1x3x4x4xui8>
// CHECK:       %14 = qnn.dequantize %0, %12, %13 : (tensor<1x1x4x4xui8>, tensor<f32>, tensor<i32>) -> tensor<1x1x4x4xf32>
// CHECK:       %16 = relay.divide %14, %15
// CHECK:       %25 = relay.cast %24 {dtype = "uint8"} : (tensor<1x1x4x4xi32>) -> tensor<1x1x4x4xui8>
// CHECK-NEXT:  %y = relay.concatenate %a, %11, %25 {axis = 1} : (tensor<1x2x4x4xui8>, tensor<1x3x4x4xui8>, tensor<1x1x4x4xui8>) -> tensor<1x6x4x4xui8>
// CHECK-NEXT:  func.return %y : tensor<1x6x4x4xui8>
// CHECK-NOT:   relay.nn.max_pool2d %{{.*}} : (tensor<1x1x8x8xf32>)
// CHECK-NOT:   qnn.quantize

// Relay's rule: qnn.concatenate of the integer inputs with their parameters and the output's.
// RELAY-LABEL: func.func @concat(
// RELAY:       %0 = relay.nn.max_pool2d %c {pool_size = [2, 2], strides = [2, 2]} : (tensor<1x1x8x8xui8>) -> tensor<1x1x4x4xui8>
// RELAY:       %y = qnn.concatenate %a, %b, %0, %1, %2, %3, %4, %5, %6, %7, %8 {axis = 1} : (tensor<1x2x4x4xui8>, tensor<1x3x4x4xui8>, tensor<1x1x4x4xui8>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x6x4x4xui8>
// RELAY-NEXT:  func.return %y
// RELAY-NOT:   qnn.dequantize
func.func @concat(%a: tensor<1x2x4x4xui8>, %b: tensor<1x3x4x4xui8>, %c: tensor<1x1x8x8xui8>) -> tensor<1x6x4x4xui8> {
  %sa = relay.constant dense<0.05> : tensor<f32>
  %za = relay.constant dense<3> : tensor<i32>
  %sb = relay.constant dense<0.03> : tensor<f32>
  %zb = relay.constant dense<0> : tensor<i32>
  %sc = relay.constant dense<0.07> : tensor<f32>
  %zc = relay.constant dense<128> : tensor<i32>
  %xa = qnn.dequantize %a, %sa, %za : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<i32>) -> tensor<1x2x4x4xf32>
  %xb = qnn.dequantize %b, %sb, %zb : (tensor<1x3x4x4xui8>, tensor<f32>, tensor<i32>) -> tensor<1x3x4x4xf32>
  %xc = qnn.dequantize %c, %sc, %zc : (tensor<1x1x8x8xui8>, tensor<f32>, tensor<i32>) -> tensor<1x1x8x8xf32>
  %pc = relay.nn.max_pool2d %xc {pool_size = [2, 2], strides = [2, 2]} : (tensor<1x1x8x8xf32>) -> tensor<1x1x4x4xf32>
  %j = relay.concatenate %xa, %xb, %pc {axis = 1} : (tensor<1x2x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x6x4x4xf32>
  %y = qnn.quantize %j, %sa, %za {out_dtype = "uint8"} : (tensor<1x6x4x4xf32>, tensor<f32>, tensor<i32>) -> tensor<1x6x4x4xui8>
  func.return %y : tensor<1x6x4x4xui8>
}

// A concatenation read by something else than the quantize stays float.
// CHECK-LABEL: func.func @used_twice(
// CHECK:       relay.concatenate %xa, %xb {axis = 1} : (tensor<1x2x4x4xf32>, tensor<1x3x4x4xf32>) -> tensor<1x5x4x4xf32>
// RELAY-LABEL: func.func @used_twice(
// RELAY-NOT:   qnn.concatenate
func.func @used_twice(%a: tensor<1x2x4x4xui8>, %b: tensor<1x3x4x4xui8>) -> (tensor<1x5x4x4xui8>, tensor<1x5x4x4xf32>) {
  %sa = relay.constant dense<0.05> : tensor<f32>
  %za = relay.constant dense<3> : tensor<i32>
  %sb = relay.constant dense<0.03> : tensor<f32>
  %xa = qnn.dequantize %a, %sa, %za : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<i32>) -> tensor<1x2x4x4xf32>
  %xb = qnn.dequantize %b, %sb, %za : (tensor<1x3x4x4xui8>, tensor<f32>, tensor<i32>) -> tensor<1x3x4x4xf32>
  %j = relay.concatenate %xa, %xb {axis = 1} : (tensor<1x2x4x4xf32>, tensor<1x3x4x4xf32>) -> tensor<1x5x4x4xf32>
  %y = qnn.quantize %j, %sa, %za {out_dtype = "uint8"} : (tensor<1x5x4x4xf32>, tensor<f32>, tensor<i32>) -> tensor<1x5x4x4xui8>
  func.return %y, %j : tensor<1x5x4x4xui8>, tensor<1x5x4x4xf32>
}
