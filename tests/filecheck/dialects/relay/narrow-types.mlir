// RUN: RELAY_ROUNDTRIP
// RUN: RELAY_GENERIC_ROUNDTRIP

// The narrow element types (float8, float4, int4/int2: ml_dtypes' arrays, one byte per
// element) print and parse as builtin types; constants holding NaN or infinity print their
// bytes as a hex blob, which parses back bit for bit; a hex element in a float list is its
// bits, as in MLIR (0x7fc00000 is NaN in f32).

// float8 constants with special values
  %a = relay.constant dense<"0x387FFE"> : tensor<3xf8E4M3FN>
  %b = relay.constant dense<"0x7CFC7E"> : tensor<3xf8E5M2>
  %c = relay.constant dense<"0x80"> : tensor<1xf8E4M3FNUZ>
  %d = relay.constant dense<"0x7FFF"> : tensor<2xf8E8M0FNU>
  %n = relay.constant dense<[1.0, 0x7fc00000]> : tensor<2xf32>
// CHECK{LITERAL}: %a = relay.constant dense<"0x387FFE"> : tensor<3xf8E4M3FN>
// CHECK{LITERAL}: %b = relay.constant dense<"0x7CFC7E"> : tensor<3xf8E5M2>
// CHECK{LITERAL}: %c = relay.constant dense<"0x80"> : tensor<1xf8E4M3FNUZ>
// CHECK{LITERAL}: %d = relay.constant dense<"0x7FFF"> : tensor<2xf8E8M0FNU>
// CHECK{LITERAL}: %n = relay.constant dense<"0x0000803F0000C07F"> : tensor<2xf32>
// -----

// finite narrow constants print their values; i4/i2 are signed, ui4/ui2 unsigned
  %a = relay.constant dense<[1.0, -448.0, 0.015625]> : tensor<3xf8E4M3FN>
  %b = relay.constant dense<[57344.0, -1.5]> : tensor<2xf8E5M2FNUZ>
  %c = relay.constant dense<[-6.0, 0.5, -0.0]> : tensor<3xf4E2M1FN>
  %d = relay.constant dense<[-8, 7, -1]> : tensor<3xi4>
  %e = relay.constant dense<[0, 15]> : tensor<2xui4>
  %f = relay.constant dense<[-2, 1]> : tensor<2xi2>
  %g = relay.constant dense<3> : tensor<4xui2>
// CHECK{LITERAL}: %a = relay.constant dense<[1.000000e+00, -4.480000e+02, 1.562500e-02]> : tensor<3xf8E4M3FN>
// CHECK{LITERAL}: %b = relay.constant dense<[5.734400e+04, -1.500000e+00]> : tensor<2xf8E5M2FNUZ>
// CHECK{LITERAL}: %c = relay.constant dense<[-6.000000e+00, 5.000000e-01, -0.000000e+00]> : tensor<3xf4E2M1FN>
// CHECK{LITERAL}: %d = relay.constant dense<[-8, 7, -1]> : tensor<3xi4>
// CHECK{LITERAL}: %e = relay.constant dense<[0, 15]> : tensor<2xui4>
// CHECK{LITERAL}: %f = relay.constant dense<[-2, 1]> : tensor<2xi2>
// CHECK{LITERAL}: %g = relay.constant dense<3> : tensor<4xui2>
// -----

// casts name the types by TVM's dtype strings
  %x = "test.op"() : () -> tensor<4xf32>
  %a = relay.cast %x {dtype = "float8_e4m3fn"} : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
  %b = relay.cast %a {dtype = "float8_e5m2fnuz"} : (tensor<4xf8E4M3FN>) -> tensor<4xf8E5M2FNUZ>
  %c = relay.cast %x {dtype = "int4"} : (tensor<4xf32>) -> tensor<4xi4>
  %d = relay.cast %c {dtype = "uint2"} : (tensor<4xi4>) -> tensor<4xui2>
  %e = relay.cast %x {dtype = "float4_e2m1fn"} : (tensor<4xf32>) -> tensor<4xf4E2M1FN>
// CHECK{LITERAL}: %a = relay.cast %x {dtype = "float8_e4m3fn"} : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
// CHECK{LITERAL}: %b = relay.cast %a {dtype = "float8_e5m2fnuz"} : (tensor<4xf8E4M3FN>) -> tensor<4xf8E5M2FNUZ>
// CHECK{LITERAL}: %c = relay.cast %x {dtype = "int4"} : (tensor<4xf32>) -> tensor<4xi4>
// CHECK{LITERAL}: %d = relay.cast %c {dtype = "uint2"} : (tensor<4xi4>) -> tensor<4xui2>
// CHECK{LITERAL}: %e = relay.cast %x {dtype = "float4_e2m1fn"} : (tensor<4xf32>) -> tensor<4xf4E2M1FN>
// -----

// float8_e8m0fnu is a reinterpreted exponent byte (how ONNX's cast to it is imported)
  %u = "test.op"() : () -> tensor<4xui8>
  %e = relay.reinterpret %u {dtype = "float8_e8m0fnu"} : (tensor<4xui8>) -> tensor<4xf8E8M0FNU>
// CHECK{LITERAL}: %e = relay.reinterpret %u {dtype = "float8_e8m0fnu"} : (tensor<4xui8>) -> tensor<4xf8E8M0FNU>
