// RUN: RELAY_ROUNDTRIP
// RUN: RELAY_GENERIC_ROUNDTRIP

// Every qnn op prints in the custom syntax (defaults omitted) and round-trips through both
// the custom and the generic form. The examples are the ops' docstring examples.

// qnn.add
  %a = "test.op"() : () -> tensor<1x8xui8>
  %b = "test.op"() : () -> tensor<1x8xui8>
  %sa = "test.op"() : () -> tensor<f32>
  %zpa = "test.op"() : () -> tensor<i32>
  %sb = "test.op"() : () -> tensor<f32>
  %zpb = "test.op"() : () -> tensor<i32>
  %so = "test.op"() : () -> tensor<f32>
  %zpo = "test.op"() : () -> tensor<i32>
  %z = qnn.add %a, %b, %sa, %zpa, %sb, %zpb, %so, %zpo : (tensor<1x8xui8>, tensor<1x8xui8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x8xui8>
// CHECK{LITERAL}: %z = qnn.add %a, %b, %sa, %zpa, %sb, %zpb, %so, %zpo : (tensor<1x8xui8>, tensor<1x8xui8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x8xui8>
// -----

// qnn.avg_pool2d
  %x = "test.op"() : () -> tensor<1x8x8x4xi8>
  %s = "test.op"() : () -> tensor<f32>
  %zp = "test.op"() : () -> tensor<i32>
  %so = "test.op"() : () -> tensor<f32>
  %zpo = "test.op"() : () -> tensor<i32>
  %y = qnn.avg_pool2d %x, %s, %zp, %so, %zpo {pool_size = [2, 2], strides = [2, 2], layout = "NHWC"} : (tensor<1x8x8x4xi8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x4x4x4xi8>
// CHECK{LITERAL}: %y = qnn.avg_pool2d %x, %s, %zp, %so, %zpo {pool_size = [2, 2], strides = [2, 2], layout = "NHWC"} : (tensor<1x8x8x4xi8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x4x4x4xi8>
// -----

// qnn.batch_matmul
  %x = "test.op"() : () -> tensor<2x4x8xi8>
  %y = "test.op"() : () -> tensor<2x3x8xi8>
  %zp_x = "test.op"() : () -> tensor<i32>
  %zp_y = "test.op"() : () -> tensor<i32>
  %s_x = "test.op"() : () -> tensor<f32>
  %s_y = "test.op"() : () -> tensor<f32>
  %z = qnn.batch_matmul %x, %y, %zp_x, %zp_y, %s_x, %s_y : (tensor<2x4x8xi8>, tensor<2x3x8xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<2x4x3xi32>
// CHECK{LITERAL}: %z = qnn.batch_matmul %x, %y, %zp_x, %zp_y, %s_x, %s_y : (tensor<2x4x8xi8>, tensor<2x3x8xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<2x4x3xi32>
// -----

// qnn.concatenate
  %a = "test.op"() : () -> tensor<1x2xi8>
  %b = "test.op"() : () -> tensor<1x3xi8>
  %sa = "test.op"() : () -> tensor<f32>
  %sb = "test.op"() : () -> tensor<f32>
  %zpa = "test.op"() : () -> tensor<i32>
  %zpb = "test.op"() : () -> tensor<i32>
  %so = "test.op"() : () -> tensor<f32>
  %zpo = "test.op"() : () -> tensor<i32>
  %y = qnn.concatenate %a, %b, %sa, %sb, %zpa, %zpb, %so, %zpo {axis = 1} : (tensor<1x2xi8>, tensor<1x3xi8>, tensor<f32>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x5xi8>
// CHECK{LITERAL}: %y = qnn.concatenate %a, %b, %sa, %sb, %zpa, %zpb, %so, %zpo {axis = 1} : (tensor<1x2xi8>, tensor<1x3xi8>, tensor<f32>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x5xi8>
// -----

// qnn.conv2d
  %x = "test.op"() : () -> tensor<1x4x8x8xui8>
  %w = "test.op"() : () -> tensor<8x4x3x3xi8>
  %zp_x = "test.op"() : () -> tensor<i32>
  %zp_w = "test.op"() : () -> tensor<i32>
  %s_x = "test.op"() : () -> tensor<f32>
  %s_w = "test.op"() : () -> tensor<8xf32>
  %y = qnn.conv2d %x, %w, %zp_x, %zp_w, %s_x, %s_w {padding = [1, 1, 1, 1], channels = 8, kernel_size = [3, 3]} : (tensor<1x4x8x8xui8>, tensor<8x4x3x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<8xf32>) -> tensor<1x8x8x8xi32>
// CHECK{LITERAL}: %y = qnn.conv2d %x, %w, %zp_x, %zp_w, %s_x, %s_w {padding = [1, 1, 1, 1], channels = 8, kernel_size = [3, 3]} : (tensor<1x4x8x8xui8>, tensor<8x4x3x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<8xf32>) -> tensor<1x8x8x8xi32>
// -----

// qnn.conv2d_transpose
  %x = "test.op"() : () -> tensor<1x8x4x4xi8>
  %w = "test.op"() : () -> tensor<8x4x3x3xi8>
  %zp_x = "test.op"() : () -> tensor<i32>
  %zp_w = "test.op"() : () -> tensor<i32>
  %s_x = "test.op"() : () -> tensor<f32>
  %s_w = "test.op"() : () -> tensor<f32>
  %y = qnn.conv2d_transpose %x, %w, %zp_x, %zp_w, %s_x, %s_w {strides = [2, 2]} : (tensor<1x8x4x4xi8>, tensor<8x4x3x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<1x4x9x9xi32>
// CHECK{LITERAL}: %y = qnn.conv2d_transpose %x, %w, %zp_x, %zp_w, %s_x, %s_w {strides = [2, 2]} : (tensor<1x8x4x4xi8>, tensor<8x4x3x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<1x4x9x9xi32>
// -----

// qnn.dense
  %x = "test.op"() : () -> tensor<1x64xi8>
  %w = "test.op"() : () -> tensor<10x64xi8>
  %zp_x = "test.op"() : () -> tensor<i32>
  %zp_w = "test.op"() : () -> tensor<i32>
  %s_x = "test.op"() : () -> tensor<f32>
  %s_w = "test.op"() : () -> tensor<10xf32>
  %y = qnn.dense %x, %w, %zp_x, %zp_w, %s_x, %s_w {units = 10} : (tensor<1x64xi8>, tensor<10x64xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<10xf32>) -> tensor<1x10xi32>
// CHECK{LITERAL}: %y = qnn.dense %x, %w, %zp_x, %zp_w, %s_x, %s_w {units = 10} : (tensor<1x64xi8>, tensor<10x64xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<10xf32>) -> tensor<1x10xi32>
// -----

// qnn.dequantize
  %q = "test.op"() : () -> tensor<1x8xui8>
  %scale = "test.op"() : () -> tensor<f32>
  %zp = "test.op"() : () -> tensor<i32>
  %x = qnn.dequantize %q, %scale, %zp : (tensor<1x8xui8>, tensor<f32>, tensor<i32>) -> tensor<1x8xf32>
// CHECK{LITERAL}: %x = qnn.dequantize %q, %scale, %zp : (tensor<1x8xui8>, tensor<f32>, tensor<i32>) -> tensor<1x8xf32>
// -----

// qnn.mul
  %a = "test.op"() : () -> tensor<1x8xui8>
  %b = "test.op"() : () -> tensor<1x8xui8>
  %sa = "test.op"() : () -> tensor<f32>
  %zpa = "test.op"() : () -> tensor<i32>
  %sb = "test.op"() : () -> tensor<f32>
  %zpb = "test.op"() : () -> tensor<i32>
  %so = "test.op"() : () -> tensor<f32>
  %zpo = "test.op"() : () -> tensor<i32>
  %z = qnn.mul %a, %b, %sa, %zpa, %sb, %zpb, %so, %zpo : (tensor<1x8xui8>, tensor<1x8xui8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x8xui8>
// CHECK{LITERAL}: %z = qnn.mul %a, %b, %sa, %zpa, %sb, %zpb, %so, %zpo : (tensor<1x8xui8>, tensor<1x8xui8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x8xui8>
// -----

// qnn.quantize
  %x = "test.op"() : () -> tensor<1x8xf32>
  %scale = "test.op"() : () -> tensor<f32>
  %zp = "test.op"() : () -> tensor<i32>
  %q = qnn.quantize %x, %scale, %zp {out_dtype = "uint8"} : (tensor<1x8xf32>, tensor<f32>, tensor<i32>) -> tensor<1x8xui8>
// CHECK{LITERAL}: %q = qnn.quantize %x, %scale, %zp {out_dtype = "uint8"} : (tensor<1x8xf32>, tensor<f32>, tensor<i32>) -> tensor<1x8xui8>
// -----

// qnn.requantize
  %acc = "test.op"() : () -> tensor<1x16xi32>
  %s_in = "test.op"() : () -> tensor<16xf32>
  %zp_in = "test.op"() : () -> tensor<i32>
  %s_out = "test.op"() : () -> tensor<f32>
  %zp_out = "test.op"() : () -> tensor<i32>
  %y = qnn.requantize %acc, %s_in, %zp_in, %s_out, %zp_out {out_dtype = "uint8"} : (tensor<1x16xi32>, tensor<16xf32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x16xui8>
// CHECK{LITERAL}: %y = qnn.requantize %acc, %s_in, %zp_in, %s_out, %zp_out {out_dtype = "uint8"} : (tensor<1x16xi32>, tensor<16xf32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x16xui8>
// -----

// qnn.simulated_dequantize
  %x = "test.op"() : () -> tensor<4x8xf32>
  %code = "test.op"() : () -> tensor<i32>
  %s = "test.op"() : () -> tensor<1xf32>
  %zp = "test.op"() : () -> tensor<1xi32>
  %y = qnn.simulated_dequantize %x, %code, %s, %zp : (tensor<4x8xf32>, tensor<i32>, tensor<1xf32>, tensor<1xi32>) -> tensor<4x8xf32>
// CHECK{LITERAL}: %y = qnn.simulated_dequantize %x, %code, %s, %zp : (tensor<4x8xf32>, tensor<i32>, tensor<1xf32>, tensor<1xi32>) -> tensor<4x8xf32>
// -----

// qnn.simulated_quantize
  %x = "test.op"() : () -> tensor<4x8xf32>
  %code = "test.op"() : () -> tensor<i32>
  %s = "test.op"() : () -> tensor<1xf32>
  %zp = "test.op"() : () -> tensor<1xi32>
  %y = qnn.simulated_quantize %x, %code, %s, %zp : (tensor<4x8xf32>, tensor<i32>, tensor<1xf32>, tensor<1xi32>) -> tensor<4x8xf32>
// CHECK{LITERAL}: %y = qnn.simulated_quantize %x, %code, %s, %zp : (tensor<4x8xf32>, tensor<i32>, tensor<1xf32>, tensor<1xi32>) -> tensor<4x8xf32>
// -----

// qnn.subtract
  %a = "test.op"() : () -> tensor<1x8xi8>
  %b = "test.op"() : () -> tensor<1x8xi8>
  %sa = "test.op"() : () -> tensor<f32>
  %zpa = "test.op"() : () -> tensor<i32>
  %sb = "test.op"() : () -> tensor<f32>
  %zpb = "test.op"() : () -> tensor<i32>
  %so = "test.op"() : () -> tensor<f32>
  %zpo = "test.op"() : () -> tensor<i32>
  %z = qnn.subtract %a, %b, %sa, %zpa, %sb, %zpb, %so, %zpo : (tensor<1x8xi8>, tensor<1x8xi8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x8xi8>
// CHECK{LITERAL}: %z = qnn.subtract %a, %b, %sa, %zpa, %sb, %zpb, %so, %zpo : (tensor<1x8xi8>, tensor<1x8xi8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x8xi8>
