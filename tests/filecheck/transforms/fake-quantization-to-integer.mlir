// RUN: relay-opt %s -p fake-quantization-to-integer | filecheck %s
// RUN: relay-opt %s -p 'fake-quantization-to-integer{onnxruntime=true}' | filecheck %s --check-prefix=ORT

// onnxruntime=true: the same qnn.conv2d, then onnxruntime's requantize in relay ops -- the
// accumulator times float32(s_x * s_w / s_y), clamped to the output range minus the zero point
// (0 here), rounded half to even (+1.5 * 2**23, -1.5 * 2**23 in float32), converted and cast.
// ORT-LABEL: func.func @conv(
// ORT:      %4 = qnn.conv2d %q, %wq
// ORT:      %8 = relay.maximum %6, %7
// ORT-NEXT: %9 = relay.cast %8 {dtype = "float32"}
// ORT-NEXT: %10 = relay.constant dense<[[[[0.00399999972]], [[0.00799999945]], [[0.0119999992]], [[0.0159999989]]]]> : tensor<1x4x1x1xf32>
// ORT-NEXT: %11 = relay.multiply %9, %10
// ORT-NEXT: %12 = relay.clip %11 {a_min = 0.0, a_max = 255.0} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
// ORT-NEXT: %13 = relay.constant dense<0x4B400000> : tensor<f32>
// ORT-NEXT: %14 = relay.add %12, %13
// ORT-NEXT: %15 = relay.constant dense<0x4B400000> : tensor<f32>
// ORT-NEXT: %16 = relay.subtract %14, %15
// ORT-NEXT: %17 = relay.cast %16 {dtype = "int32"}
// ORT-NEXT: %y = relay.cast %17 {dtype = "uint8"}
// ORT-NOT:  qnn.requantize

// dequantize -> conv2d (+ dequantized int32 bias) -> relu -> quantize becomes qnn.conv2d with the
// bias added in int32, relu as maximum(acc, 0), and qnn.requantize from s_x * s_w per channel;
// the float ops and the dequantizes die.
// CHECK-LABEL: func.func @conv(%q: tensor<1x3x6x6xui8>) -> tensor<1x4x6x6xui8> {
// CHECK-NEXT: %wq = relay.constant dense<3> : tensor<4x3x3x3xi8>
// CHECK-NEXT: %0 = relay.constant dense<128> : tensor<i32>
// CHECK-NEXT: %1 = relay.constant dense<0> : tensor<i32>
// CHECK-NEXT: %2 = relay.constant dense<2.000000e-02> : tensor<f32>
// CHECK-NEXT: %3 = relay.constant dense<[1.000000e-02, 2.000000e-02, 3.000000e-02, 4.000000e-02]> : tensor<4xf32>
// CHECK-NEXT: %4 = qnn.conv2d %q, %wq, %0, %1, %2, %3 {padding = [1, 1, 1, 1], channels = 4, kernel_size = [3, 3]} : (tensor<1x3x6x6xui8>, tensor<4x3x3x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<4xf32>) -> tensor<1x4x6x6xi32>
// CHECK-NEXT: %5 = relay.constant dense<[[[[10]], [[-20]], [[30]], [[-40]]]]> : tensor<1x4x1x1xi32>
// CHECK-NEXT: %6 = relay.add %4, %5 : (tensor<1x4x6x6xi32>, tensor<1x4x1x1xi32>) -> tensor<1x4x6x6xi32>
// CHECK-NEXT: %7 = relay.constant dense<0> : tensor<i32>
// CHECK-NEXT: %8 = relay.maximum %6, %7 : (tensor<1x4x6x6xi32>, tensor<i32>) -> tensor<1x4x6x6xi32>
// CHECK-NEXT: %9 = relay.constant dense<[2.000000e-04, 4.000000e-04, 0.00059999997, 8.000000e-04]> : tensor<4xf32>
// CHECK-NEXT: %10 = relay.constant dense<0> : tensor<i32>
// CHECK-NEXT: %11 = relay.constant dense<5.000000e-02> : tensor<f32>
// CHECK-NEXT: %12 = relay.constant dense<0> : tensor<i32>
// CHECK-NEXT: %y = qnn.requantize %8, %9, %10, %11, %12 {axis = 1, out_dtype = "uint8"} : (tensor<1x4x6x6xi32>, tensor<4xf32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x4x6x6xui8>
// CHECK-NEXT: func.return %y : tensor<1x4x6x6xui8>
func.func @conv(%q: tensor<1x3x6x6xui8>) -> tensor<1x4x6x6xui8> {
  %sx = relay.constant dense<0.02> : tensor<f32>
  %zx = relay.constant dense<128> : tensor<i32>
  %wq = relay.constant dense<3> : tensor<4x3x3x3xi8>
  %sw = relay.constant dense<[0.01, 0.02, 0.03, 0.04]> : tensor<4xf32>
  %zw = relay.constant dense<0> : tensor<i32>
  %bq = relay.constant dense<[10, -20, 30, -40]> : tensor<4xi32>
  %sb = relay.constant dense<[2.0e-04, 4.0e-04, 6.0e-04, 8.0e-04]> : tensor<4xf32>
  %sy = relay.constant dense<0.05> : tensor<f32>
  %zy = relay.constant dense<0> : tensor<i32>
  %x = qnn.dequantize %q, %sx, %zx : (tensor<1x3x6x6xui8>, tensor<f32>, tensor<i32>) -> tensor<1x3x6x6xf32>
  %w = qnn.dequantize %wq, %sw, %zw {axis = 0} : (tensor<4x3x3x3xi8>, tensor<4xf32>, tensor<i32>) -> tensor<4x3x3x3xf32>
  %b = qnn.dequantize %bq, %sb, %zw {axis = 0} : (tensor<4xi32>, tensor<4xf32>, tensor<i32>) -> tensor<4xf32>
  %c = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1], channels = 4, kernel_size = [3, 3]} : (tensor<1x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %cb = relay.nn.bias_add %c, %b : (tensor<1x4x6x6xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %r = relay.nn.relu %cb : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %y = qnn.quantize %r, %sy, %zy {out_dtype = "uint8"} : (tensor<1x4x6x6xf32>, tensor<f32>, tensor<i32>) -> tensor<1x4x6x6xui8>
  func.return %y : tensor<1x4x6x6xui8>
}
