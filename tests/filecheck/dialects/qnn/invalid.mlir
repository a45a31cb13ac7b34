// RUN: relay-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// The qnn type relations (Relay's QuantizeRel, RequantizeRel, QnnConv2DRel, QnnBroadcastRel, ...):
// each message names the op and the mismatch.

%x = "test.op"() : () -> tensor<4xi32>
%s = "test.op"() : () -> tensor<f32>
%z = "test.op"() : () -> tensor<i32>
%v = "test.op"() : () -> tensor<2xf32>
%r = qnn.requantize %x, %s, %z, %v, %z : (tensor<4xi32>, tensor<f32>, tensor<i32>, tensor<2xf32>, tensor<i32>) -> tensor<4xi8>
// CHECK{LITERAL}: qnn.requantize: output_scale must be a scalar tensor<f32>, got tensor<2xf32>

// -----

%x = "test.op"() : () -> tensor<2x4xi32>
%s = "test.op"() : () -> tensor<3xf32>
%z = "test.op"() : () -> tensor<i32>
%r = qnn.requantize %x, %s, %z, %s, %z : (tensor<2x4xi32>, tensor<3xf32>, tensor<i32>, tensor<3xf32>, tensor<i32>) -> tensor<2x4xi8>
// CHECK{LITERAL}: qnn.requantize: input_scale must be a scalar or a vector of 4 values of float32, got tensor<3xf32>

// -----

%x = "test.op"() : () -> tensor<4xi32>
%s = "test.op"() : () -> tensor<f32>
%z = "test.op"() : () -> tensor<i32>
%r = qnn.requantize %x, %s, %z, %s, %z {out_dtype = "float32"} : (tensor<4xi32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<4xf32>
// CHECK{LITERAL}: qnn.requantize: out_dtype must be one of [int8, uint8, int16, int32], got 'float32'

// -----

%x = "test.op"() : () -> tensor<4xi32>
%s = "test.op"() : () -> tensor<f32>
%z = "test.op"() : () -> tensor<i32>
%r = qnn.requantize %x, %s, %z, %s, %z {rounding = "DOWN"} : (tensor<4xi32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<4xi8>
// CHECK{LITERAL}: qnn.requantize: rounding must be one of None, UPWARD, TONEAREST, got 'DOWN'

// -----

%x = "test.op"() : () -> tensor<4xi8>
%s = "test.op"() : () -> tensor<f32>
%z = "test.op"() : () -> tensor<i32>
%r = qnn.quantize %x, %s, %z : (tensor<4xi8>, tensor<f32>, tensor<i32>) -> tensor<4xi8>
// CHECK{LITERAL}: qnn.quantize: data must be one of [float32], got tensor<4xi8>

// -----

%x = "test.op"() : () -> tensor<4xi8>
%s = "test.op"() : () -> tensor<f32>
%z = "test.op"() : () -> tensor<i8>
%r = qnn.dequantize %x, %s, %z : (tensor<4xi8>, tensor<f32>, tensor<i8>) -> tensor<4xf32>
// CHECK{LITERAL}: qnn.dequantize: input_zero_point must be a scalar or a vector of 4 values of int32, got tensor<i8>

// -----

%x = "test.op"() : () -> tensor<1x4x8x8xf32>
%w = "test.op"() : () -> tensor<8x4x3x3xi8>
%z = "test.op"() : () -> tensor<i32>
%s = "test.op"() : () -> tensor<f32>
%r = qnn.conv2d %x, %w, %z, %z, %s, %s : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<1x8x6x6xi32>
// CHECK{LITERAL}: qnn.conv2d: data must be one of [int8, uint8, int16], got tensor<1x4x8x8xf32>

// -----

%x = "test.op"() : () -> tensor<1x4x8x8xi8>
%w = "test.op"() : () -> tensor<8x4x3x3xi8>
%z = "test.op"() : () -> tensor<i32>
%s = "test.op"() : () -> tensor<f32>
%k = "test.op"() : () -> tensor<4xf32>
%r = qnn.conv2d %x, %w, %z, %z, %s, %k : (tensor<1x4x8x8xi8>, tensor<8x4x3x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<4xf32>) -> tensor<1x8x6x6xi32>
// CHECK{LITERAL}: qnn.conv2d: kernel_scale must be a scalar or a vector of 8 values of float32, got tensor<4xf32>

// -----

%x = "test.op"() : () -> tensor<1x4x8x8xi8>
%w = "test.op"() : () -> tensor<8x5x3x3xi8>
%z = "test.op"() : () -> tensor<i32>
%s = "test.op"() : () -> tensor<f32>
%r = qnn.conv2d %x, %w, %z, %z, %s, %s : (tensor<1x4x8x8xi8>, tensor<8x5x3x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<1x8x6x6xi32>
// CHECK{LITERAL}: qnn.conv2d: data tensor<1x4x8x8xi8> has 4 input channels but weight tensor<8x5x3x3xi8> expects 5 x groups 1 = 5

// -----

%x = "test.op"() : () -> tensor<2x4x8xi8>
%y = "test.op"() : () -> tensor<2x3x8xi8>
%z = "test.op"() : () -> tensor<i32>
%s = "test.op"() : () -> tensor<f32>
%r = qnn.batch_matmul %x, %y, %z, %z, %s, %s {transpose_b = false} : (tensor<2x4x8xi8>, tensor<2x3x8xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<2x4x3xi32>
// CHECK{LITERAL}: qnn.batch_matmul: only transpose_a = false, transpose_b = true is supported (as in Relay)

// -----

%a = "test.op"() : () -> tensor<1x8xi8>
%b = "test.op"() : () -> tensor<1x8xui8>
%s = "test.op"() : () -> tensor<f32>
%z = "test.op"() : () -> tensor<i32>
%r = qnn.add %a, %b, %s, %z, %s, %z, %s, %z : (tensor<1x8xi8>, tensor<1x8xui8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x8xi8>
// CHECK{LITERAL}: qnn.add: lhs and rhs dtypes differ: tensor<1x8xi8>, tensor<1x8xui8>

// -----

%a = "test.op"() : () -> tensor<1x2xi8>
%s = "test.op"() : () -> tensor<f32>
%z = "test.op"() : () -> tensor<i32>
%r = qnn.concatenate %a, %a, %s, %s, %z, %s, %z {axis = 1} : (tensor<1x2xi8>, tensor<1x2xi8>, tensor<f32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x4xi8>
// CHECK{LITERAL}: qnn.concatenate: expects N tensors, N scales and N zero points, got 5 operands

// -----

%x = "test.op"() : () -> tensor<1x16xi32>
%r = relay.fixed_point_multiply %x {multiplier = 4294967296, shift = 0} : (tensor<1x16xi32>) -> tensor<1x16xi32>
// CHECK{LITERAL}: relay.fixed_point_multiply: multiplier 4294967296 does not fit in int32
