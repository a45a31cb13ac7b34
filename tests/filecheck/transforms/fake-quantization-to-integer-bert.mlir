// RUN: relay-opt %s -p 'fake-quantization-to-integer{onnxruntime=true}' | filecheck %s
// RUN: relay-opt %s -p fake-quantization-to-integer | filecheck %s --check-prefix=RELAY

// onnxruntime=true: a float layer norm over rows of a multiple of 8 values is onnxruntime's
// kernel (qnn.ort_layer_norm); rows of 12 keep nn.layer_norm (that kernel's tail order is not
// measured); Relay's mode leaves both.
// CHECK-LABEL: func.func @layer_norm(
// CHECK:       %[[Y:.*]] = qnn.ort_layer_norm %x, %g, %b {epsilon = 1.0e-12} : (tensor<2x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x16xf32>
// CHECK-NEXT:  func.return %[[Y]]
// RELAY-LABEL: func.func @layer_norm(
// RELAY-NEXT:  relay.nn.layer_norm
func.func @layer_norm(%x: tensor<2x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<2x16xf32> {
  %y = relay.nn.layer_norm %x, %g, %b {epsilon = 1.0e-12} : (tensor<2x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x16xf32>
  func.return %y : tensor<2x16xf32>
}

// CHECK-LABEL: func.func @layer_norm_tail(
// CHECK-NEXT:  relay.nn.layer_norm
func.func @layer_norm_tail(%x: tensor<2x12xf32>, %g: tensor<12xf32>, %b: tensor<12xf32>) -> tensor<2x12xf32> {
  %y = relay.nn.layer_norm %x, %g, %b : (tensor<2x12xf32>, tensor<12xf32>, tensor<12xf32>) -> tensor<2x12xf32>
  func.return %y : tensor<2x12xf32>
}

// ONNX's Gelu as imported: (x * 0.5) * (1 + erf(x * 0.70710677)) is one qnn.ort_gelu.
// CHECK-LABEL: func.func @gelu_imported(
// CHECK:       %[[G:.*]] = qnn.ort_gelu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:  func.return %[[G]]
// RELAY-LABEL: func.func @gelu_imported(
// RELAY:       relay.erf
func.func @gelu_imported(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = relay.constant dense<0.707106769> : tensor<f32>
  %h = relay.constant dense<0.5> : tensor<f32>
  %o = relay.constant dense<1.0> : tensor<f32>
  %t = relay.multiply %x, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %e = relay.erf %t : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %half = relay.multiply %x, %h : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %a = relay.add %o, %e : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = relay.multiply %half, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// The exporters' form: (x * (erf(x / 1.4142135) + 1)) * 0.5.
// CHECK-LABEL: func.func @gelu_decomposed(
// CHECK:       %[[G:.*]] = qnn.ort_gelu %x
// CHECK-NEXT:  func.return %[[G]]
func.func @gelu_decomposed(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = relay.constant dense<1.41421354> : tensor<f32>
  %h = relay.constant dense<0.5> : tensor<f32>
  %o = relay.constant dense<1.0> : tensor<f32>
  %t = relay.divide %x, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %e = relay.erf %t : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = relay.add %e, %o : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %m = relay.multiply %x, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = relay.multiply %m, %h : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// Not a GELU: the erf's sum is used twice, so onnxruntime would not fuse it either.
// CHECK-LABEL: func.func @erf_shared(
// CHECK:       relay.erf
// CHECK-NOT:   qnn.ort_gelu
func.func @erf_shared(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c = relay.constant dense<0.707106769> : tensor<f32>
  %h = relay.constant dense<0.5> : tensor<f32>
  %o = relay.constant dense<1.0> : tensor<f32>
  %t = relay.multiply %x, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %e = relay.erf %t : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %half = relay.multiply %x, %h : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %a = relay.add %o, %e : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = relay.multiply %half, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %y, %a : tensor<4x8xf32>, tensor<4x8xf32>
}

// A gather of a dequantized table (an embedding) gathers the bytes; the quantize with the
// table's own scale and zero point is then the gathered bytes themselves.
// CHECK-LABEL: func.func @embedding(
// CHECK:       %[[G:.*]] = relay.take %t, %ids {axis = 0} : (tensor<50x16xui8>, tensor<1x7xi64>) -> tensor<1x7x16xui8>
// CHECK-NEXT:  func.return %[[G]]
// RELAY-LABEL: func.func @embedding(
// RELAY:       relay.take %t, %ids
func.func @embedding(%t: tensor<50x16xui8>, %ids: tensor<1x7xi64>) -> tensor<1x7x16xui8> {
  %s = relay.constant dense<0.02> : tensor<f32>
  %z = relay.constant dense<131> : tensor<i32>
  %f = qnn.dequantize %t, %s, %z : (tensor<50x16xui8>, tensor<f32>, tensor<i32>) -> tensor<50x16xf32>
  %g = relay.take %f, %ids {axis = 0} : (tensor<50x16xf32>, tensor<1x7xi64>) -> tensor<1x7x16xf32>
  %q = qnn.quantize %g, %s, %z {out_dtype = "uint8"} : (tensor<1x7x16xf32>, tensor<f32>, tensor<i32>) -> tensor<1x7x16xui8>
  func.return %q : tensor<1x7x16xui8>
}

// A uint8 softmax quantized to uint8 is onnxruntime's QLinearSoftmax: one qnn.ort_softmax
// (input scale, output scale and zero point as operands); quantized to int8 it stays a float
// softmax and a quantize (onnxruntime has no kernel for it); Relay's mode leaves it float.
// CHECK-LABEL: func.func @softmax(
// CHECK-NOT:   relay.nn.softmax
// CHECK:       %[[S:.*]] = qnn.ort_softmax %q, %{{.*}}, %{{.*}}, %{{.*}} {axis = 1} : (tensor<4x16xui8>, tensor<f32>, tensor<f32>, tensor<i32>) -> tensor<4x16xui8>
// CHECK-NEXT:  func.return %[[S]]
// RELAY-LABEL: func.func @softmax(
// RELAY:       relay.nn.softmax
func.func @softmax(%q: tensor<4x16xui8>) -> tensor<4x16xui8> {
  %s = relay.constant dense<0.05> : tensor<f32>
  %z = relay.constant dense<120> : tensor<i32>
  %so = relay.constant dense<0.00390625> : tensor<f32>
  %zo = relay.constant dense<0> : tensor<i32>
  %f = qnn.dequantize %q, %s, %z : (tensor<4x16xui8>, tensor<f32>, tensor<i32>) -> tensor<4x16xf32>
  %p = relay.nn.softmax %f {axis = 1} : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = qnn.quantize %p, %so, %zo {out_dtype = "uint8"} : (tensor<4x16xf32>, tensor<f32>, tensor<i32>) -> tensor<4x16xui8>
  func.return %y : tensor<4x16xui8>
}

// CHECK-LABEL: func.func @softmax_to_int8(
// CHECK-NOT:   qnn.ort_softmax
// CHECK:       relay.nn.softmax
func.func @softmax_to_int8(%q: tensor<4x16xui8>) -> tensor<4x16xi8> {
  %s = relay.constant dense<0.05> : tensor<f32>
  %z = relay.constant dense<120> : tensor<i32>
  %so = relay.constant dense<0.00390625> : tensor<f32>
  %zo = relay.constant dense<-128> : tensor<i32>
  %f = qnn.dequantize %q, %s, %z : (tensor<4x16xui8>, tensor<f32>, tensor<i32>) -> tensor<4x16xf32>
  %p = relay.nn.softmax %f {axis = 1} : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = qnn.quantize %p, %so, %zo {out_dtype = "int8"} : (tensor<4x16xf32>, tensor<f32>, tensor<i32>) -> tensor<4x16xi8>
  func.return %y : tensor<4x16xi8>
}
