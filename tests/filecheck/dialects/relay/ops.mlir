// RUN: RELAY_ROUNDTRIP
// RUN: RELAY_GENERIC_ROUNDTRIP

// Every relay op prints in the custom syntax (defaults omitted) and round-trips through
// both the custom and the generic form. The examples are the ops' docstring examples.


// abs
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.abs %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.abs %x : (tensor<4xf32>) -> tensor<4xf32>
// -----

// add
  %x = "test.op"() : () -> tensor<2x3xf32>
  %y = "test.op"() : () -> tensor<3xf32>
  %z = relay.add %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK{LITERAL}: %z = relay.add %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// -----

// annotation.compiler_begin
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.annotation.compiler_begin %x {compiler = "dnnl"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.annotation.compiler_begin %x {compiler = "dnnl"} : (tensor<4xf32>) -> tensor<4xf32>
// -----

// annotation.compiler_end
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.annotation.compiler_end %x {compiler = "dnnl"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.annotation.compiler_end %x {compiler = "dnnl"} : (tensor<4xf32>) -> tensor<4xf32>
// -----

// annotation.stop_fusion
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.annotation.stop_fusion %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.annotation.stop_fusion %x : (tensor<4xf32>) -> tensor<4xf32>
// -----

// argmax
  %x = "test.op"() : () -> tensor<2x3xf32>
  %y = relay.argmax %x {axis = [1]} : (tensor<2x3xf32>) -> tensor<2xi32>
// CHECK{LITERAL}: %y = relay.argmax %x {axis = [1]} : (tensor<2x3xf32>) -> tensor<2xi32>
// -----

// argmin
  %x = "test.op"() : () -> tensor<2x3xf32>
  %y = relay.argmin %x {axis = [1]} : (tensor<2x3xf32>) -> tensor<2xi32>
// CHECK{LITERAL}: %y = relay.argmin %x {axis = [1]} : (tensor<2x3xf32>) -> tensor<2xi32>
// -----

// broadcast_to
  %x = "test.op"() : () -> tensor<1x3xf32>
  %y = relay.broadcast_to %x {shape = [4, 3]} : (tensor<1x3xf32>) -> tensor<4x3xf32>
// CHECK{LITERAL}: %y = relay.broadcast_to %x {shape = [4, 3]} : (tensor<1x3xf32>) -> tensor<4x3xf32>
// -----

// cast
  %x = "test.op"() : () -> tensor<1x2xi16>
  %y = relay.cast %x {dtype = "uint32"} : (tensor<1x2xi16>) -> tensor<1x2xui32>
// CHECK{LITERAL}: %y = relay.cast %x {dtype = "uint32"} : (tensor<1x2xi16>) -> tensor<1x2xui32>
// -----

// ceil
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.ceil %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.ceil %x : (tensor<4xf32>) -> tensor<4xf32>
// -----

// clip
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.clip %x {a_min = 0.0, a_max = 6.0} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.clip %x {a_min = 0.0, a_max = 6.0} : (tensor<4xf32>) -> tensor<4xf32>
// -----

// concatenate
  %a = "test.op"() : () -> tensor<1x2xf32>
  %b = "test.op"() : () -> tensor<1x3xf32>
  %y = relay.concatenate %a, %b {axis = 1} : (tensor<1x2xf32>, tensor<1x3xf32>) -> tensor<1x5xf32>
// CHECK{LITERAL}: %y = relay.concatenate %a, %b {axis = 1} : (tensor<1x2xf32>, tensor<1x3xf32>) -> tensor<1x5xf32>
// -----

// copy
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.copy %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.copy %x : (tensor<4xf32>) -> tensor<4xf32>
// -----

// device_copy
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.device_copy %x {src_virtual_device = #relay.virtual_device<cpu(0)>, dst_virtual_device = #relay.virtual_device<cuda(0)>} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.device_copy %x {src_virtual_device = #relay.virtual_device<cpu(0)>, dst_virtual_device = #relay.virtual_device<cuda(0)>} : (tensor<4xf32>) -> tensor<4xf32>
// -----

// divide
  %x = "test.op"() : () -> tensor<2x3xf32>
  %y = "test.op"() : () -> tensor<3xf32>
  %z = relay.divide %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK{LITERAL}: %z = relay.divide %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// -----

// equal
  %x = "test.op"() : () -> tensor<2x3xf32>
  %y = "test.op"() : () -> tensor<3xf32>
  %z = relay.equal %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK{LITERAL}: %z = relay.equal %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// -----

// erf
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.erf %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.erf %x : (tensor<4xf32>) -> tensor<4xf32>
// -----

// exp
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.exp %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.exp %x : (tensor<4xf32>) -> tensor<4xf32>
// -----

// expand_dims
  %x = "test.op"() : () -> tensor<64xf32>
  %y = relay.expand_dims %x {axis = 1, num_newaxis = 2} : (tensor<64xf32>) -> tensor<64x1x1xf32>
// CHECK{LITERAL}: %y = relay.expand_dims %x {axis = 1, num_newaxis = 2} : (tensor<64xf32>) -> tensor<64x1x1xf32>
// -----

// fixed_point_multiply
  %x = "test.op"() : () -> tensor<1x16xi32>
  %y = relay.fixed_point_multiply %x {multiplier = 1395864371, shift = -5} : (tensor<1x16xi32>) -> tensor<1x16xi32>
// CHECK{LITERAL}: %y = relay.fixed_point_multiply %x {multiplier = 1395864371, shift = -5} : (tensor<1x16xi32>) -> tensor<1x16xi32>
// -----

// fixed_point_multiply_per_axis
  %x = "test.op"() : () -> tensor<1x8x4x4xi32>
  %m = "test.op"() : () -> tensor<8xi32>
  %ls = "test.op"() : () -> tensor<8xi32>
  %rs = "test.op"() : () -> tensor<8xi32>
  %y = relay.fixed_point_multiply_per_axis %x, %m, %ls, %rs {is_lshift_required = false, is_rshift_required = true, axes = [1]} : (tensor<1x8x4x4xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>) -> tensor<1x8x4x4xi32>
// CHECK{LITERAL}: %y = relay.fixed_point_multiply_per_axis %x, %m, %ls, %rs {is_lshift_required = false, is_rshift_required = true, axes = [1]} : (tensor<1x8x4x4xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>) -> tensor<1x8x4x4xi32>
// -----

// floor
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.floor %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.floor %x : (tensor<4xf32>) -> tensor<4xf32>
// -----

// greater
  %x = "test.op"() : () -> tensor<2x3xf32>
  %y = "test.op"() : () -> tensor<3xf32>
  %z = relay.greater %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK{LITERAL}: %z = relay.greater %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// -----

// greater_equal
  %x = "test.op"() : () -> tensor<2x3xf32>
  %y = "test.op"() : () -> tensor<3xf32>
  %z = relay.greater_equal %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK{LITERAL}: %z = relay.greater_equal %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// -----

// layout_transform
  %x = "test.op"() : () -> tensor<1x8x2x2xf32>
  %y = relay.layout_transform %x {src_layout = "NCHW", dst_layout = "NCHW4c"} : (tensor<1x8x2x2xf32>) -> tensor<1x2x2x2x4xf32>
// CHECK{LITERAL}: %y = relay.layout_transform %x {src_layout = "NCHW", dst_layout = "NCHW4c"} : (tensor<1x8x2x2xf32>) -> tensor<1x2x2x2x4xf32>
// -----

// left_shift
  %x = "test.op"() : () -> tensor<4xi64>
  %s = "test.op"() : () -> tensor<i64>
  %y = relay.left_shift %x, %s : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
// CHECK{LITERAL}: %y = relay.left_shift %x, %s : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
// -----

// less
  %x = "test.op"() : () -> tensor<2x3xf32>
  %y = "test.op"() : () -> tensor<3xf32>
  %z = relay.less %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK{LITERAL}: %z = relay.less %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// -----

// less_equal
  %x = "test.op"() : () -> tensor<2x3xf32>
  %y = "test.op"() : () -> tensor<3xf32>
  %z = relay.less_equal %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK{LITERAL}: %z = relay.less_equal %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// -----

// log
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.log %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.log %x : (tensor<4xf32>) -> tensor<4xf32>
// -----

// max
  %x = "test.op"() : () -> tensor<2x3xf32>
  %y = relay.max %x {axis = [1]} : (tensor<2x3xf32>) -> tensor<2xf32>
// CHECK{LITERAL}: %y = relay.max %x {axis = [1]} : (tensor<2x3xf32>) -> tensor<2xf32>
// -----

// maximum
  %x = "test.op"() : () -> tensor<2x3xf32>
  %y = "test.op"() : () -> tensor<3xf32>
  %z = relay.maximum %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK{LITERAL}: %z = relay.maximum %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// -----

// mean
  %x = "test.op"() : () -> tensor<2x3xf32>
  %y = relay.mean %x {axis = [1]} : (tensor<2x3xf32>) -> tensor<2xf32>
// CHECK{LITERAL}: %y = relay.mean %x {axis = [1]} : (tensor<2x3xf32>) -> tensor<2xf32>
// -----

// memory.alloc_storage
  %size = relay.constant dense<256> : tensor<i64>
  %shape = relay.constant dense<[64, 2]> : tensor<2xi64>
  %align = relay.constant dense<64> : tensor<i64>
  %s = relay.memory.alloc_storage %size, %shape, %align {virtual_device = #relay.virtual_device<cpu(0)>, dtype = "int8"} : (tensor<i64>, tensor<2xi64>, tensor<i64>) -> !relay.storage
// CHECK{LITERAL}: %s = relay.memory.alloc_storage %size, %shape, %align {virtual_device = #relay.virtual_device<cpu(0)>, dtype = "int8"} : (tensor<i64>, tensor<2xi64>, tensor<i64>) -> !relay.storage
// -----

// memory.kill
  %size = relay.constant dense<256> : tensor<i64>
  %shape = relay.constant dense<[64, 2]> : tensor<2xi64>
  %align = relay.constant dense<64> : tensor<i64>
  %s = relay.memory.alloc_storage %size, %shape, %align : (tensor<i64>, tensor<2xi64>, tensor<i64>) -> !relay.storage
  relay.memory.kill %s : (!relay.storage) -> ()
  %x = "test.op"() : () -> tensor<4xf32>
  relay.memory.kill %x : (tensor<4xf32>) -> ()
// CHECK{LITERAL}: relay.memory.kill %s : (!relay.storage) -> ()
// CHECK{LITERAL}: relay.memory.kill %x : (tensor<4xf32>) -> ()
// -----

// min
  %x = "test.op"() : () -> tensor<2x3xf32>
  %y = relay.min %x {axis = [1]} : (tensor<2x3xf32>) -> tensor<2xf32>
// CHECK{LITERAL}: %y = relay.min %x {axis = [1]} : (tensor<2x3xf32>) -> tensor<2xf32>
// -----

// minimum
  %x = "test.op"() : () -> tensor<2x3xf32>
  %y = "test.op"() : () -> tensor<3xf32>
  %z = relay.minimum %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK{LITERAL}: %z = relay.minimum %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// -----

// multiply
  %x = "test.op"() : () -> tensor<2x3xf32>
  %y = "test.op"() : () -> tensor<3xf32>
  %z = relay.multiply %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK{LITERAL}: %z = relay.multiply %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// -----

// negative
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.negative %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.negative %x : (tensor<4xf32>) -> tensor<4xf32>
// -----

// nn.adaptive_avg_pool2d
  %x = "test.op"() : () -> tensor<1x8x7x7xf32>
  %y = relay.nn.adaptive_avg_pool2d %x {output_size = [1, 1]} : (tensor<1x8x7x7xf32>) -> tensor<1x8x1x1xf32>
// CHECK{LITERAL}: %y = relay.nn.adaptive_avg_pool2d %x {output_size = [1, 1]} : (tensor<1x8x7x7xf32>) -> tensor<1x8x1x1xf32>
// -----

// nn.avg_pool2d
  %x = "test.op"() : () -> tensor<1x4x8x8xf32>
  %y = relay.nn.avg_pool2d %x {pool_size = [2, 2], strides = [2, 2]} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
// CHECK{LITERAL}: %y = relay.nn.avg_pool2d %x {pool_size = [2, 2], strides = [2, 2]} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
// -----

// nn.batch_flatten
  %x = "test.op"() : () -> tensor<1x512x1x1xf32>
  %y = relay.nn.batch_flatten %x : (tensor<1x512x1x1xf32>) -> tensor<1x512xf32>
// CHECK{LITERAL}: %y = relay.nn.batch_flatten %x : (tensor<1x512x1x1xf32>) -> tensor<1x512xf32>
// -----

// nn.batch_matmul
  %a = "test.op"() : () -> tensor<2x4x8xf32>
  %b = "test.op"() : () -> tensor<2x3x8xf32>
  %y = relay.nn.batch_matmul %a, %b {transpose_b = true} : (tensor<2x4x8xf32>, tensor<2x3x8xf32>) -> tensor<2x4x3xf32>
// CHECK{LITERAL}: %y = relay.nn.batch_matmul %a, %b {transpose_b = true} : (tensor<2x4x8xf32>, tensor<2x3x8xf32>) -> tensor<2x4x3xf32>
// -----

// nn.batch_norm
  %x = "test.op"() : () -> tensor<1x64x56x56xf32>
  %gamma = "test.op"() : () -> tensor<64xf32>
  %beta = "test.op"() : () -> tensor<64xf32>
  %mean = "test.op"() : () -> tensor<64xf32>
  %var = "test.op"() : () -> tensor<64xf32>
  %y:3 = relay.nn.batch_norm %x, %gamma, %beta, %mean, %var {epsilon = 2.0e-05} : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>)
// CHECK{LITERAL}: %y, %y_1, %y_2 = relay.nn.batch_norm %x, %gamma, %beta, %mean, %var {epsilon = 2.0e-05} : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>)
// -----

// nn.bias_add
  %x = "test.op"() : () -> tensor<1x10xf32>
  %b = "test.op"() : () -> tensor<10xf32>
  %y = relay.nn.bias_add %x, %b {axis = -1} : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
// CHECK{LITERAL}: %y = relay.nn.bias_add %x, %b {axis = -1} : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
// -----

// nn.conv2d
  %x = "test.op"() : () -> tensor<1x3x224x224xf32>
  %w = "test.op"() : () -> tensor<64x3x7x7xf32>
  %y = relay.nn.conv2d %x, %w {strides = [2, 2], padding = [3, 3, 3, 3], channels = 64, kernel_size = [7, 7]} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>) -> tensor<1x64x112x112xf32>
// CHECK{LITERAL}: %y = relay.nn.conv2d %x, %w {strides = [2, 2], padding = [3, 3, 3, 3], channels = 64, kernel_size = [7, 7]} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>) -> tensor<1x64x112x112xf32>
// -----

// nn.contrib_conv2d_winograd_without_weight_transform
  %x = "test.op"() : () -> tensor<1x2x28x28x8xf32>
  %w = "test.op"() : () -> tensor<6x6x2x16x8xf32>
  %y = relay.nn.contrib_conv2d_winograd_without_weight_transform %x, %w {tile_size = 4, padding = [1, 1, 1, 1], channels = 16, kernel_size = [3, 3], data_layout = "NCHW8c"} : (tensor<1x2x28x28x8xf32>, tensor<6x6x2x16x8xf32>) -> tensor<1x2x28x28x8xf32>
// CHECK{LITERAL}: %y = relay.nn.contrib_conv2d_winograd_without_weight_transform %x, %w {padding = [1, 1, 1, 1], channels = 16, kernel_size = [3, 3], data_layout = "NCHW8c"} : (tensor<1x2x28x28x8xf32>, tensor<6x6x2x16x8xf32>) -> tensor<1x2x28x28x8xf32>
// -----

// nn.conv2d_transpose
  %x = "test.op"() : () -> tensor<1x8x4x4xf32>
  %w = "test.op"() : () -> tensor<8x4x3x3xf32>
  %y = relay.nn.conv2d_transpose %x, %w {strides = [2, 2]} : (tensor<1x8x4x4xf32>, tensor<8x4x3x3xf32>) -> tensor<1x4x9x9xf32>
// CHECK{LITERAL}: %y = relay.nn.conv2d_transpose %x, %w {strides = [2, 2]} : (tensor<1x8x4x4xf32>, tensor<8x4x3x3xf32>) -> tensor<1x4x9x9xf32>
// -----

// nn.dense
  %x = "test.op"() : () -> tensor<1x64xf32>
  %w = "test.op"() : () -> tensor<10x64xf32>
  %y = relay.nn.dense %x, %w {units = 10} : (tensor<1x64xf32>, tensor<10x64xf32>) -> tensor<1x10xf32>
// CHECK{LITERAL}: %y = relay.nn.dense %x, %w {units = 10} : (tensor<1x64xf32>, tensor<10x64xf32>) -> tensor<1x10xf32>
// -----

// nn.dropout
  %x = "test.op"() : () -> tensor<1x8xf32>
  %y:2 = relay.nn.dropout %x {rate = 0.1} : (tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>)
// CHECK{LITERAL}: %y, %y_1 = relay.nn.dropout %x {rate = 0.1} : (tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>)
// -----

// nn.global_avg_pool2d
  %x = "test.op"() : () -> tensor<1x512x7x7xf32>
  %y = relay.nn.global_avg_pool2d %x : (tensor<1x512x7x7xf32>) -> tensor<1x512x1x1xf32>
// CHECK{LITERAL}: %y = relay.nn.global_avg_pool2d %x : (tensor<1x512x7x7xf32>) -> tensor<1x512x1x1xf32>
// -----

// nn.global_max_pool2d
  %x = "test.op"() : () -> tensor<1x512x7x7xf32>
  %y = relay.nn.global_max_pool2d %x : (tensor<1x512x7x7xf32>) -> tensor<1x512x1x1xf32>
// CHECK{LITERAL}: %y = relay.nn.global_max_pool2d %x : (tensor<1x512x7x7xf32>) -> tensor<1x512x1x1xf32>
// -----

// nn.layer_norm
  %x = "test.op"() : () -> tensor<1x8x16xf32>
  %gamma = "test.op"() : () -> tensor<16xf32>
  %beta = "test.op"() : () -> tensor<16xf32>
  %y = relay.nn.layer_norm %x, %gamma, %beta : (tensor<1x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x8x16xf32>
// CHECK{LITERAL}: %y = relay.nn.layer_norm %x, %gamma, %beta : (tensor<1x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x8x16xf32>
// -----

// nn.leaky_relu
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.nn.leaky_relu %x {alpha = 0.1} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.nn.leaky_relu %x {alpha = 0.1} : (tensor<4xf32>) -> tensor<4xf32>
// -----

// nn.log_softmax
  %x = "test.op"() : () -> tensor<2x10xf32>
  %y = relay.nn.log_softmax %x {axis = 1} : (tensor<2x10xf32>) -> tensor<2x10xf32>
// CHECK{LITERAL}: %y = relay.nn.log_softmax %x {axis = 1} : (tensor<2x10xf32>) -> tensor<2x10xf32>
// -----

// nn.matmul
  %a = "test.op"() : () -> tensor<4x8xf32>
  %b = "test.op"() : () -> tensor<8x3xf32>
  %y = relay.nn.matmul %a, %b : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
// CHECK{LITERAL}: %y = relay.nn.matmul %a, %b : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
// -----

// nn.max_pool2d
  %x = "test.op"() : () -> tensor<1x64x112x112xf32>
  %y = relay.nn.max_pool2d %x {pool_size = [3, 3], strides = [2, 2], padding = [1, 1, 1, 1]} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
// CHECK{LITERAL}: %y = relay.nn.max_pool2d %x {pool_size = [3, 3], strides = [2, 2], padding = [1, 1, 1, 1]} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
// -----

// nn.pad
  %x = "test.op"() : () -> tensor<1x3x4x4xf32>
  %v = "test.op"() : () -> tensor<f32>
  %y = relay.nn.pad %x, %v {pad_width = [[0, 0], [0, 0], [1, 1], [1, 1]]} : (tensor<1x3x4x4xf32>, tensor<f32>) -> tensor<1x3x6x6xf32>
// CHECK{LITERAL}: %y = relay.nn.pad %x, %v {pad_width = [[0, 0], [0, 0], [1, 1], [1, 1]]} : (tensor<1x3x4x4xf32>, tensor<f32>) -> tensor<1x3x6x6xf32>
// -----

// nn.prelu
  %x = "test.op"() : () -> tensor<1x4x8x8xf32>
  %alpha = "test.op"() : () -> tensor<4xf32>
  %y = relay.nn.prelu %x, %alpha : (tensor<1x4x8x8xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
// CHECK{LITERAL}: %y = relay.nn.prelu %x, %alpha : (tensor<1x4x8x8xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
// -----

// nn.relu
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.nn.relu %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.nn.relu %x : (tensor<4xf32>) -> tensor<4xf32>
// -----

// nn.softmax
  %x = "test.op"() : () -> tensor<1x1000xf32>
  %y = relay.nn.softmax %x : (tensor<1x1000xf32>) -> tensor<1x1000xf32>
// CHECK{LITERAL}: %y = relay.nn.softmax %x : (tensor<1x1000xf32>) -> tensor<1x1000xf32>
// -----

// not_equal
  %x = "test.op"() : () -> tensor<2x3xf32>
  %y = "test.op"() : () -> tensor<3xf32>
  %z = relay.not_equal %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK{LITERAL}: %z = relay.not_equal %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// -----

// on_device
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.on_device %x {virtual_device = #relay.virtual_device<cpu(0)>} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.on_device %x {virtual_device = #relay.virtual_device<cpu(0)>} : (tensor<4xf32>) -> tensor<4xf32>
// -----

// on_device with a memory scope, both constraints; a device name is read as that device
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.on_device %x {virtual_device = #relay.virtual_device<cpu(1), target = "llvm", memory_scope = "sram">, constrain_result = true} : (tensor<4xf32>) -> tensor<4xf32>
  %z = relay.on_device %x {virtual_device = "cuda", constrain_body = false} : (tensor<4xf32>) -> tensor<4xf32>
  %w = relay.device_copy %x {src_virtual_device = #relay.virtual_device<?>, dst_virtual_device = #relay.virtual_device<cuda>} : (tensor<4xf32>) -> tensor<4xf32>
  %v = relay.on_device %x {virtual_device = #relay.virtual_device<?>} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.on_device %x {virtual_device = #relay.virtual_device<cpu(1), target = "llvm", memory_scope = "sram">, constrain_result = true} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %z = relay.on_device %x {virtual_device = #relay.virtual_device<cuda(0)>, constrain_body = false} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %w = relay.device_copy %x {src_virtual_device = #relay.virtual_device<?>, dst_virtual_device = #relay.virtual_device<cuda>} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %v = relay.on_device %x : (tensor<4xf32>) -> tensor<4xf32>
// -----

// ones_like
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.ones_like %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.ones_like %x : (tensor<4xf32>) -> tensor<4xf32>
// -----

// power
  %x = "test.op"() : () -> tensor<2x3xf32>
  %y = "test.op"() : () -> tensor<3xf32>
  %z = relay.power %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK{LITERAL}: %z = relay.power %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// -----

// prod
  %x = "test.op"() : () -> tensor<2x3xf32>
  %y = relay.prod %x {axis = [1]} : (tensor<2x3xf32>) -> tensor<2xf32>
// CHECK{LITERAL}: %y = relay.prod %x {axis = [1]} : (tensor<2x3xf32>) -> tensor<2xf32>
// -----

// reshape
  %x = "test.op"() : () -> tensor<1x4x5x6xf32>
  %y = relay.reshape %x {newshape = [0, -1]} : (tensor<1x4x5x6xf32>) -> tensor<1x120xf32>
// CHECK{LITERAL}: %y = relay.reshape %x {newshape = [0, -1]} : (tensor<1x4x5x6xf32>) -> tensor<1x120xf32>
// -----

// right_shift
  %x = "test.op"() : () -> tensor<4xi64>
  %s = "test.op"() : () -> tensor<i64>
  %y = relay.right_shift %x, %s : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
// CHECK{LITERAL}: %y = relay.right_shift %x, %s : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
// -----

// round
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.round %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.round %x : (tensor<4xf32>) -> tensor<4xf32>
// -----

// rsqrt
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.rsqrt %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.rsqrt %x : (tensor<4xf32>) -> tensor<4xf32>
// -----

// shape_of
  %x = "test.op"() : () -> tensor<1x3x4xf32>
  %s = relay.shape_of %x : (tensor<1x3x4xf32>) -> tensor<3xi32>
// CHECK{LITERAL}: %s = relay.shape_of %x : (tensor<1x3x4xf32>) -> tensor<3xi32>
// -----

// sigmoid
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.sigmoid %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.sigmoid %x : (tensor<4xf32>) -> tensor<4xf32>
// -----

// split
  %x = "test.op"() : () -> tensor<1x4xf32>
  %y:2 = relay.split %x {indices_or_sections = 2, axis = 1} : (tensor<1x4xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
// CHECK{LITERAL}: %y, %y_1 = relay.split %x {indices_or_sections = 2, axis = 1} : (tensor<1x4xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
// -----

// sqrt
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.sqrt %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.sqrt %x : (tensor<4xf32>) -> tensor<4xf32>
// -----

// squeeze
  %x = "test.op"() : () -> tensor<1x8x1x1xf32>
  %y = relay.squeeze %x {axis = [2, 3]} : (tensor<1x8x1x1xf32>) -> tensor<1x8xf32>
// CHECK{LITERAL}: %y = relay.squeeze %x {axis = [2, 3]} : (tensor<1x8x1x1xf32>) -> tensor<1x8xf32>
// -----

// stack
  %a = "test.op"() : () -> tensor<3xf32>
  %b = "test.op"() : () -> tensor<3xf32>
  %y = relay.stack %a, %b {axis = 0} : (tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK{LITERAL}: %y = relay.stack %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// -----

// strided_slice
  %x = "test.op"() : () -> tensor<4x4xf32>
  %y = relay.strided_slice %x {begin = [0, 1], end = [2, 3]} : (tensor<4x4xf32>) -> tensor<2x2xf32>
// CHECK{LITERAL}: %y = relay.strided_slice %x {begin = [0, 1], end = [2, 3]} : (tensor<4x4xf32>) -> tensor<2x2xf32>
// -----

// subtract
  %x = "test.op"() : () -> tensor<2x3xf32>
  %y = "test.op"() : () -> tensor<3xf32>
  %z = relay.subtract %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK{LITERAL}: %z = relay.subtract %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// -----

// sum
  %x = "test.op"() : () -> tensor<2x3xf32>
  %y = relay.sum %x {axis = [1]} : (tensor<2x3xf32>) -> tensor<2xf32>
// CHECK{LITERAL}: %y = relay.sum %x {axis = [1]} : (tensor<2x3xf32>) -> tensor<2xf32>
// -----

// take
  %x = "test.op"() : () -> tensor<10x4xf32>
  %i = "test.op"() : () -> tensor<3xi32>
  %y = relay.take %x, %i {axis = 0} : (tensor<10x4xf32>, tensor<3xi32>) -> tensor<3x4xf32>
// CHECK{LITERAL}: %y = relay.take %x, %i {axis = 0} : (tensor<10x4xf32>, tensor<3xi32>) -> tensor<3x4xf32>
// -----

// tanh
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.tanh %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.tanh %x : (tensor<4xf32>) -> tensor<4xf32>
// -----

// tile
  %x = "test.op"() : () -> tensor<2x3xf32>
  %y = relay.tile %x {reps = [2, 1]} : (tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK{LITERAL}: %y = relay.tile %x {reps = [2, 1]} : (tensor<2x3xf32>) -> tensor<4x3xf32>
// -----

// transpose
  %x = "test.op"() : () -> tensor<1x3x4x5xf32>
  %y = relay.transpose %x {axes = [0, 2, 3, 1]} : (tensor<1x3x4x5xf32>) -> tensor<1x4x5x3xf32>
// CHECK{LITERAL}: %y = relay.transpose %x {axes = [0, 2, 3, 1]} : (tensor<1x3x4x5xf32>) -> tensor<1x4x5x3xf32>
// -----

// where
  %c = "test.op"() : () -> tensor<4xi1>
  %x = "test.op"() : () -> tensor<4xf32>
  %y = "test.op"() : () -> tensor<4xf32>
  %z = relay.where %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %z = relay.where %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// -----

// zeros_like
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.zeros_like %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.zeros_like %x : (tensor<4xf32>) -> tensor<4xf32>

// -----

// contrib_reverse_reshape
  %x = "test.op"() : () -> tensor<10x5x4xf32>
  %y = relay.contrib_reverse_reshape %x {newshape = [-1, 0]} : (tensor<10x5x4xf32>) -> tensor<50x4xf32>
// CHECK{LITERAL}: %y = relay.contrib_reverse_reshape %x {newshape = [-1, 0]} : (tensor<10x5x4xf32>) -> tensor<50x4xf32>
// -----

// gather_nd
  %x = "test.op"() : () -> tensor<3x4x5xf32>
  %i = relay.constant dense<[[0, 1, 2, 2, 1, 0], [3, 0, 1, 2, 3, 0]]> : tensor<2x6xi64>
  %y = relay.gather_nd %x, %i : (tensor<3x4x5xf32>, tensor<2x6xi64>) -> tensor<6x5xf32>
// CHECK{LITERAL}: %y = relay.gather_nd %x, %i : (tensor<3x4x5xf32>, tensor<2x6xi64>) -> tensor<6x5xf32>
// -----

// image.resize2d
  %x = "test.op"() : () -> tensor<1x4x8x8xf32>
  %y = relay.image.resize2d %x {size = [16, 16]} : (tensor<1x4x8x8xf32>) -> tensor<1x4x16x16xf32>
// CHECK{LITERAL}: %y = relay.image.resize2d %x {size = [16, 16]} : (tensor<1x4x8x8xf32>) -> tensor<1x4x16x16xf32>
// -----

// ndarray_size
  %x = "test.op"() : () -> tensor<2x3xf32>
  %n = relay.ndarray_size %x {dtype = "int64"} : (tensor<2x3xf32>) -> tensor<i64>
// CHECK{LITERAL}: %n = relay.ndarray_size %x {dtype = "int64"} : (tensor<2x3xf32>) -> tensor<i64>
// -----

// nn.adaptive_avg_pool3d
  %x = "test.op"() : () -> tensor<1x8x4x7x7xf32>
  %y = relay.nn.adaptive_avg_pool3d %x {output_size = [1, 1, 1]} : (tensor<1x8x4x7x7xf32>) -> tensor<1x8x1x1x1xf32>
// CHECK{LITERAL}: %y = relay.nn.adaptive_avg_pool3d %x {output_size = [1, 1, 1]} : (tensor<1x8x4x7x7xf32>) -> tensor<1x8x1x1x1xf32>
// -----

// nn.adaptive_max_pool3d
  %x = "test.op"() : () -> tensor<1x8x4x8x8xf32>
  %y = relay.nn.adaptive_max_pool3d %x {output_size = [2, 2, 2]} : (tensor<1x8x4x8x8xf32>) -> tensor<1x8x2x2x2xf32>
// CHECK{LITERAL}: %y = relay.nn.adaptive_max_pool3d %x {output_size = [2, 2, 2]} : (tensor<1x8x4x8x8xf32>) -> tensor<1x8x2x2x2xf32>
// -----

// nn.avg_pool3d
  %x = "test.op"() : () -> tensor<1x4x8x8x8xf32>
  %y = relay.nn.avg_pool3d %x {pool_size = [2, 2, 2], strides = [2, 2, 2]} : (tensor<1x4x8x8x8xf32>) -> tensor<1x4x4x4x4xf32>
// CHECK{LITERAL}: %y = relay.nn.avg_pool3d %x {pool_size = [2, 2, 2], strides = [2, 2, 2]} : (tensor<1x4x8x8x8xf32>) -> tensor<1x4x4x4x4xf32>
// -----

// nn.conv1d
  %x = "test.op"() : () -> tensor<1x4x16xf32>
  %w = "test.op"() : () -> tensor<8x4x3xf32>
  %y = relay.nn.conv1d %x, %w {padding = [1, 1]} : (tensor<1x4x16xf32>, tensor<8x4x3xf32>) -> tensor<1x8x16xf32>
// CHECK{LITERAL}: %y = relay.nn.conv1d %x, %w {padding = [1, 1]} : (tensor<1x4x16xf32>, tensor<8x4x3xf32>) -> tensor<1x8x16xf32>
// -----

// nn.conv3d
  %x = "test.op"() : () -> tensor<1x2x4x8x8xf32>
  %w = "test.op"() : () -> tensor<4x2x3x3x3xf32>
  %y = relay.nn.conv3d %x, %w {padding = [1, 1, 1, 1, 1, 1]} : (tensor<1x2x4x8x8xf32>, tensor<4x2x3x3x3xf32>) -> tensor<1x4x4x8x8xf32>
// CHECK{LITERAL}: %y = relay.nn.conv3d %x, %w {padding = [1, 1, 1, 1, 1, 1]} : (tensor<1x2x4x8x8xf32>, tensor<4x2x3x3x3xf32>) -> tensor<1x4x4x8x8xf32>
// -----

// nn.conv3d_transpose
  %x = "test.op"() : () -> tensor<1x4x3x3x3xf32>
  %w = "test.op"() : () -> tensor<4x2x3x3x3xf32>
  %y = relay.nn.conv3d_transpose %x, %w {strides = [2, 2, 2], padding = [1, 1, 1, 1, 1, 1]} : (tensor<1x4x3x3x3xf32>, tensor<4x2x3x3x3xf32>) -> tensor<1x2x5x5x5xf32>
  %z = relay.nn.conv3d_transpose %x, %w {padding = [0, 0, 0, 0, 0, 0], output_padding = [1, 0, 0], groups = 2} : (tensor<1x4x3x3x3xf32>, tensor<4x2x3x3x3xf32>) -> tensor<1x4x6x5x5xf32>
// CHECK{LITERAL}: %y = relay.nn.conv3d_transpose %x, %w {strides = [2, 2, 2], padding = [1, 1, 1, 1, 1, 1]} : (tensor<1x4x3x3x3xf32>, tensor<4x2x3x3x3xf32>) -> tensor<1x2x5x5x5xf32>
// CHECK{LITERAL}: %z = relay.nn.conv3d_transpose %x, %w {groups = 2, output_padding = [1, 0, 0]} : (tensor<1x4x3x3x3xf32>, tensor<4x2x3x3x3xf32>) -> tensor<1x4x6x5x5xf32>
// -----

// nn.group_norm
  %x = "test.op"() : () -> tensor<1x4x8x8xf32>
  %gamma = "test.op"() : () -> tensor<4xf32>
  %beta = "test.op"() : () -> tensor<4xf32>
  %y = relay.nn.group_norm %x, %gamma, %beta {num_groups = 2} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
// CHECK{LITERAL}: %y = relay.nn.group_norm %x, %gamma, %beta {num_groups = 2} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
// -----

// nn.instance_norm
  %x = "test.op"() : () -> tensor<1x4x8x8xf32>
  %gamma = "test.op"() : () -> tensor<4xf32>
  %beta = "test.op"() : () -> tensor<4xf32>
  %y = relay.nn.instance_norm %x, %gamma, %beta : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
// CHECK{LITERAL}: %y = relay.nn.instance_norm %x, %gamma, %beta : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
// -----

// nn.l2_normalize
  %x = "test.op"() : () -> tensor<2x8xf32>
  %y = relay.nn.l2_normalize %x {eps = 1.0e-10, axis = [1]} : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK{LITERAL}: %y = relay.nn.l2_normalize %x {eps = 1.0e-10, axis = [1]} : (tensor<2x8xf32>) -> tensor<2x8xf32>
// -----

// nn.max_pool3d
  %x = "test.op"() : () -> tensor<1x4x8x8x8xf32>
  %y = relay.nn.max_pool3d %x {pool_size = [2, 2, 2], strides = [2, 2, 2]} : (tensor<1x4x8x8x8xf32>) -> tensor<1x4x4x4x4xf32>
// CHECK{LITERAL}: %y = relay.nn.max_pool3d %x {pool_size = [2, 2, 2], strides = [2, 2, 2]} : (tensor<1x4x8x8x8xf32>) -> tensor<1x4x4x4x4xf32>
// -----

// nn.upsampling
  %x = "test.op"() : () -> tensor<1x4x8x8xf32>
  %y = relay.nn.upsampling %x {scale_h = 2.0, scale_w = 2.0} : (tensor<1x4x8x8xf32>) -> tensor<1x4x16x16xf32>
// CHECK{LITERAL}: %y = relay.nn.upsampling %x {scale_h = 2.0, scale_w = 2.0} : (tensor<1x4x8x8xf32>) -> tensor<1x4x16x16xf32>
// -----

// repeat
  %x = "test.op"() : () -> tensor<2x1xf32>
  %y = relay.repeat %x {repeats = 3, axis = 1} : (tensor<2x1xf32>) -> tensor<2x3xf32>
// CHECK{LITERAL}: %y = relay.repeat %x {repeats = 3, axis = 1} : (tensor<2x1xf32>) -> tensor<2x3xf32>
// -----

// argsort
  %x = "test.op"() : () -> tensor<2x5xf32>
  %y = relay.argsort %x {axis = 1, is_ascend = false} : (tensor<2x5xf32>) -> tensor<2x5xi32>
// CHECK{LITERAL}: %y = relay.argsort %x {axis = 1, is_ascend = false} : (tensor<2x5xf32>) -> tensor<2x5xi32>
// -----

// broadcast_to_like
  %x = "test.op"() : () -> tensor<1x3xf32>
  %like = "test.op"() : () -> tensor<4x3xi32>
  %y = relay.broadcast_to_like %x, %like : (tensor<1x3xf32>, tensor<4x3xi32>) -> tensor<4x3xf32>
// CHECK{LITERAL}: %y = relay.broadcast_to_like %x, %like : (tensor<1x3xf32>, tensor<4x3xi32>) -> tensor<4x3xf32>
// -----

// cast_like
  %x = "test.op"() : () -> tensor<2x3xf32>
  %like = "test.op"() : () -> tensor<4xi32>
  %y = relay.cast_like %x, %like : (tensor<2x3xf32>, tensor<4xi32>) -> tensor<2x3xi32>
// CHECK{LITERAL}: %y = relay.cast_like %x, %like : (tensor<2x3xf32>, tensor<4xi32>) -> tensor<2x3xi32>
// -----

// collapse_sum_like
  %x = "test.op"() : () -> tensor<4x3xf32>
  %like = "test.op"() : () -> tensor<1x3xf32>
  %y = relay.collapse_sum_like %x, %like : (tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
// CHECK{LITERAL}: %y = relay.collapse_sum_like %x, %like : (tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
// -----

// collapse_sum_to
  %x = "test.op"() : () -> tensor<4x3xf32>
  %s = "test.op"() : () -> tensor<2xi32>
  %y = relay.collapse_sum_to %x, %s {shape = [1, 3]} : (tensor<4x3xf32>, tensor<2xi32>) -> tensor<1x3xf32>
// CHECK{LITERAL}: %y = relay.collapse_sum_to %x, %s {shape = [1, 3]} : (tensor<4x3xf32>, tensor<2xi32>) -> tensor<1x3xf32>
// -----

// full
  %v = "test.op"() : () -> tensor<f32>
  %y = relay.full %v {shape = [2, 3]} : (tensor<f32>) -> tensor<2x3xf32>
// CHECK{LITERAL}: %y = relay.full %v {shape = [2, 3]} : (tensor<f32>) -> tensor<2x3xf32>
// -----

// full_like
  %x = "test.op"() : () -> tensor<2x3xf32>
  %v = "test.op"() : () -> tensor<f32>
  %y = relay.full_like %x, %v : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK{LITERAL}: %y = relay.full_like %x, %v : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// -----

// ones
  %y = relay.ones {shape = [2, 3], dtype = "int32"} : () -> tensor<2x3xi32>
// CHECK{LITERAL}: %y = relay.ones {shape = [2, 3], dtype = "int32"} : () -> tensor<2x3xi32>
// -----

// reshape_like
  %x = "test.op"() : () -> tensor<2x6xf32>
  %like = "test.op"() : () -> tensor<3x4xf32>
  %y = relay.reshape_like %x, %like : (tensor<2x6xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK{LITERAL}: %y = relay.reshape_like %x, %like : (tensor<2x6xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
// -----

// zeros
  %y = relay.zeros {shape = [2, 3], dtype = "float32"} : () -> tensor<2x3xf32>
// CHECK{LITERAL}: %y = relay.zeros {shape = [2, 3], dtype = "float32"} : () -> tensor<2x3xf32>
// -----

// Constants: anonymous, named inline, splat, integer and bool data.
%c0 = relay.constant dense<[1.0, 2.0]> : tensor<2xf32>
// CHECK{LITERAL}: %c0 = relay.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
%c1 = relay.constant @fc1_bias dense<0.5> : tensor<10xf32>
// CHECK: %c1 = relay.constant @fc1_bias dense<5.000000e-01> : tensor<10xf32>
%c2 = relay.constant dense<[4000000000, 1]> : tensor<2xui32>
// CHECK{LITERAL}: %c2 = relay.constant dense<[4000000000, 1]> : tensor<2xui32>
%c3 = relay.constant dense<[true, false]> : tensor<2xi1>
// CHECK{LITERAL}: %c3 = relay.constant dense<[true, false]> : tensor<2xi1>
%c4 = relay.constant dense<-3> : tensor<i8>
// CHECK: %c4 = relay.constant dense<-3> : tensor<i8>

// -----

// Functions carry Relay's attributes as discardable relay.* attributes; dynamic dims print as ?.
func.func private @fused_nn_relu(%p0: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {relay.primitive = 1 : i64, relay.used_memory = [32 : i64]} {
  %0 = relay.nn.relu %p0 : (tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %0 : tensor<?x4xf32>
}
// CHECK: func.func private @fused_nn_relu(%p0: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {relay.primitive = 1 : i64, relay.used_memory = [32 : i64]} {
// CHECK-NEXT: %0 = relay.nn.relu %p0 : (tensor<?x4xf32>) -> tensor<?x4xf32>
func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {relay.io_used_memory = 64 : i64} {
  %y = func.call @fused_nn_relu(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
// CHECK: func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {relay.io_used_memory = 64 : i64} {
// CHECK-NEXT: %y = func.call @fused_nn_relu(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
// -----

// sin
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.sin %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.sin %x : (tensor<4xf32>) -> tensor<4xf32>
// -----

// cos
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.cos %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.cos %x : (tensor<4xf32>) -> tensor<4xf32>
// -----

// tan
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.tan %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.tan %x : (tensor<4xf32>) -> tensor<4xf32>
// -----

// atan
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.atan %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.atan %x : (tensor<4xf32>) -> tensor<4xf32>
// -----

// sign
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.sign %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.sign %x : (tensor<4xf32>) -> tensor<4xf32>
// -----

// trunc
  %x = "test.op"() : () -> tensor<4xf32>
  %y = relay.trunc %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %y = relay.trunc %x : (tensor<4xf32>) -> tensor<4xf32>
// -----

// logical_not
  %x = "test.op"() : () -> tensor<4xi1>
  %y = relay.logical_not %x : (tensor<4xi1>) -> tensor<4xi1>
// CHECK{LITERAL}: %y = relay.logical_not %x : (tensor<4xi1>) -> tensor<4xi1>
// -----

// logical_and
  %x = "test.op"() : () -> tensor<2x3xi1>
  %y = "test.op"() : () -> tensor<3xi1>
  %z = relay.logical_and %x, %y : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
// CHECK{LITERAL}: %z = relay.logical_and %x, %y : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
// -----

// logical_or
  %x = "test.op"() : () -> tensor<2x3xi1>
  %y = "test.op"() : () -> tensor<3xi1>
  %z = relay.logical_or %x, %y : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
// CHECK{LITERAL}: %z = relay.logical_or %x, %y : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
// -----

// logical_xor
  %x = "test.op"() : () -> tensor<2x3xi1>
  %y = "test.op"() : () -> tensor<3xi1>
  %z = relay.logical_xor %x, %y : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
// CHECK{LITERAL}: %z = relay.logical_xor %x, %y : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
// -----

// bitwise_and
  %x = "test.op"() : () -> tensor<2x3xi32>
  %y = "test.op"() : () -> tensor<3xi32>
  %z = relay.bitwise_and %x, %y : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK{LITERAL}: %z = relay.bitwise_and %x, %y : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// -----

// bitwise_or
  %x = "test.op"() : () -> tensor<2x3xi32>
  %y = "test.op"() : () -> tensor<3xi32>
  %z = relay.bitwise_or %x, %y : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK{LITERAL}: %z = relay.bitwise_or %x, %y : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// -----

// bitwise_xor
  %x = "test.op"() : () -> tensor<2x3xi32>
  %y = "test.op"() : () -> tensor<3xi32>
  %z = relay.bitwise_xor %x, %y : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK{LITERAL}: %z = relay.bitwise_xor %x, %y : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// -----

// mod
  %x = "test.op"() : () -> tensor<2x3xi32>
  %y = "test.op"() : () -> tensor<3xi32>
  %z = relay.mod %x, %y : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK{LITERAL}: %z = relay.mod %x, %y : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// -----

// floor_mod
  %x = "test.op"() : () -> tensor<2x3xi32>
  %y = "test.op"() : () -> tensor<3xi32>
  %z = relay.floor_mod %x, %y : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK{LITERAL}: %z = relay.floor_mod %x, %y : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// -----

// floor_divide
  %x = "test.op"() : () -> tensor<2x3xi32>
  %y = "test.op"() : () -> tensor<3xi32>
  %z = relay.floor_divide %x, %y : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK{LITERAL}: %z = relay.floor_divide %x, %y : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>

// -----

// cumsum
  %x = "test.op"() : () -> tensor<2x3xf32>
  %y = relay.cumsum %x {axis = 1, exclusive = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %z = relay.cumsum %x {dtype = "float64"} : (tensor<2x3xf32>) -> tensor<6xf64>
// CHECK{LITERAL}: %y = relay.cumsum %x {axis = 1, exclusive = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK{LITERAL}: %z = relay.cumsum %x {dtype = "float64"} : (tensor<2x3xf32>) -> tensor<6xf64>

// -----

// cumprod
  %x = "test.op"() : () -> tensor<4xi32>
  %y = relay.cumprod %x {axis = 0} : (tensor<4xi32>) -> tensor<4xi32>
// CHECK{LITERAL}: %y = relay.cumprod %x {axis = 0} : (tensor<4xi32>) -> tensor<4xi32>

// -----

// scatter_elements
  %d = "test.op"() : () -> tensor<1x5xf32>
  %i = relay.constant dense<[[1, -2]]> : tensor<1x2xi64>
  %u = "test.op"() : () -> tensor<1x2xf32>
  %y = relay.scatter_elements %d, %i, %u {axis = 1, reduction = "add"} : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<1x5xf32>
// CHECK{LITERAL}: %y = relay.scatter_elements %d, %i, %u {axis = 1, reduction = "add"} : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<1x5xf32>

// -----

// scatter_nd
  %d = "test.op"() : () -> tensor<4x4xf32>
  %i = relay.constant dense<[[0, 3]]> : tensor<1x2xi64>
  %u = "test.op"() : () -> tensor<2x4xf32>
  %y = relay.scatter_nd %d, %i, %u {mode = "add"} : (tensor<4x4xf32>, tensor<1x2xi64>, tensor<2x4xf32>) -> tensor<4x4xf32>
// CHECK{LITERAL}: %y = relay.scatter_nd %d, %i, %u {mode = "add"} : (tensor<4x4xf32>, tensor<1x2xi64>, tensor<2x4xf32>) -> tensor<4x4xf32>

// -----

// einsum
  %a = "test.op"() : () -> tensor<5x2x3xf32>
  %b = "test.op"() : () -> tensor<5x3x4xf32>
  %y = relay.einsum %a, %b {equation = "bij,bjk->bik"} : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
  %e = "test.op"() : () -> tensor<5x3x3xf32>
  %d = relay.einsum %e {equation = "...ii->...i"} : (tensor<5x3x3xf32>) -> tensor<5x3xf32>
  %t = relay.einsum %a {equation = "ijk"} : (tensor<5x2x3xf32>) -> tensor<5x2x3xf32>
// CHECK{LITERAL}: %y = relay.einsum %a, %b {equation = "bij,bjk->bik"} : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
// CHECK{LITERAL}: %d = relay.einsum %e {equation = "...ii->...i"} : (tensor<5x3x3xf32>) -> tensor<5x3xf32>
// CHECK{LITERAL}: %t = relay.einsum %a {equation = "ijk"} : (tensor<5x2x3xf32>) -> tensor<5x2x3xf32>

// -----

// reinterpret
  %x = "test.op"() : () -> tensor<3xf32>
  %y = relay.reinterpret %x {dtype = "int32"} : (tensor<3xf32>) -> tensor<3xi32>
// CHECK{LITERAL}: %y = relay.reinterpret %x {dtype = "int32"} : (tensor<3xf32>) -> tensor<3xi32>

// -----

// reverse_sequence
  %x = "test.op"() : () -> tensor<4x3xf32>
  %l = relay.constant dense<[4, 1, 2]> : tensor<3xi64>
  %y = relay.reverse_sequence %x, %l {seq_axis = 0, batch_axis = 1} : (tensor<4x3xf32>, tensor<3xi64>) -> tensor<4x3xf32>
// CHECK{LITERAL}: %y = relay.reverse_sequence %x, %l {seq_axis = 0, batch_axis = 1} : (tensor<4x3xf32>, tensor<3xi64>) -> tensor<4x3xf32>

// -----

// image.grid_sample
  %x = "test.op"() : () -> tensor<1x1x3x2xf32>
  %g = "test.op"() : () -> tensor<1x2x2x4xf32>
  %y = relay.image.grid_sample %x, %g {align_corners = false} : (tensor<1x1x3x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x1x2x4xf32>
  %v = "test.op"() : () -> tensor<1x2x3x2x2xf32>
  %h = "test.op"() : () -> tensor<1x3x2x4x2xf32>
  %w = relay.image.grid_sample %v, %h {method = "nearest", layout = "NCDHW", padding_mode = "reflection"} : (tensor<1x2x3x2x2xf32>, tensor<1x3x2x4x2xf32>) -> tensor<1x2x2x4x2xf32>
// CHECK{LITERAL}: %y = relay.image.grid_sample %x, %g {align_corners = false} : (tensor<1x1x3x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x1x2x4xf32>
// CHECK{LITERAL}: %w = relay.image.grid_sample %v, %h {method = "nearest", layout = "NCDHW", padding_mode = "reflection"} : (tensor<1x2x3x2x2xf32>, tensor<1x3x2x4x2xf32>) -> tensor<1x2x2x4x2xf32>

// -----

// dft
  %a = "test.op"() : () -> tensor<2x8xf32>
  %b = "test.op"() : () -> tensor<2x8xf32>
  %re, %im = relay.dft %a, %b {inverse = true} : (tensor<2x8xf32>, tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>)
// CHECK{LITERAL}: %re, %im = relay.dft %a, %b {inverse = true} : (tensor<2x8xf32>, tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>)

// -----

// topk
  %x = "test.op"() : () -> tensor<3x4xf32>
  %v, %i = relay.topk %x {k = 2, dtype = "int64"} : (tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
  %a = relay.topk %x {k = 0, axis = 0, ret_type = "indices", is_ascend = true} : (tensor<3x4xf32>) -> tensor<3x4xi32>
// CHECK{LITERAL}: %v, %i = relay.topk %x {k = 2, dtype = "int64"} : (tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
// CHECK{LITERAL}: %a = relay.topk %x {k = 0, axis = 0, ret_type = "indices", is_ascend = true} : (tensor<3x4xf32>) -> tensor<3x4xi32>

// -----

// one_hot
  %i = relay.constant dense<[0, 2, 5, 1]> : tensor<4xi64>
  %on = "test.op"() : () -> tensor<f32>
  %off = "test.op"() : () -> tensor<f32>
  %y = relay.one_hot %i, %on, %off {depth = 3, dtype = "float32"} : (tensor<4xi64>, tensor<f32>, tensor<f32>) -> tensor<4x3xf32>
  %z = relay.one_hot %i, %on, %off {depth = 3, axis = 0, dtype = "float32"} : (tensor<4xi64>, tensor<f32>, tensor<f32>) -> tensor<3x4xf32>
// CHECK{LITERAL}: %y = relay.one_hot %i, %on, %off {depth = 3, dtype = "float32"} : (tensor<4xi64>, tensor<f32>, tensor<f32>) -> tensor<4x3xf32>
// CHECK{LITERAL}: %z = relay.one_hot %i, %on, %off {depth = 3, axis = 0, dtype = "float32"} : (tensor<4xi64>, tensor<f32>, tensor<f32>) -> tensor<3x4xf32>

// -----

// vision.roi_align
  %x = "test.op"() : () -> tensor<1x3x8x8xf32>
  %r = relay.constant dense<[[0.0, 1.0, 1.0, 9.0, 7.0], [0.0, 0.0, 0.0, 3.0, 3.0], [0.0, -2.0, 4.0, 20.0, 5.0], [0.0, 6.0, 6.0, 6.5, 6.5]]> : tensor<4x5xf32>
  %y = relay.vision.roi_align %x, %r {pooled_size = [2, 2], spatial_scale = 0.5} : (tensor<1x3x8x8xf32>, tensor<4x5xf32>) -> tensor<4x3x2x2xf32>
  %z = relay.vision.roi_align %x, %r {pooled_size = [3, 1], spatial_scale = 1.0, sample_ratio = 2, mode = "max"} : (tensor<1x3x8x8xf32>, tensor<4x5xf32>) -> tensor<4x3x3x1xf32>
// CHECK{LITERAL}: %y = relay.vision.roi_align %x, %r {pooled_size = [2, 2], spatial_scale = 0.5} : (tensor<1x3x8x8xf32>, tensor<4x5xf32>) -> tensor<4x3x2x2xf32>
// CHECK{LITERAL}: %z = relay.vision.roi_align %x, %r {pooled_size = [3, 1], spatial_scale = 1.0, sample_ratio = 2, mode = "max"} : (tensor<1x3x8x8xf32>, tensor<4x5xf32>) -> tensor<4x3x3x1xf32>
  %w = relay.vision.roi_align %x, %r {pooled_size = [2, 2], spatial_scale = 1.0, mode = "max_corner", min_roi_size = 0.0} : (tensor<1x3x8x8xf32>, tensor<4x5xf32>) -> tensor<4x3x2x2xf32>
// CHECK{LITERAL}: %w = relay.vision.roi_align %x, %r {pooled_size = [2, 2], spatial_scale = 1.0, mode = "max_corner", min_roi_size = 0.0} : (tensor<1x3x8x8xf32>, tensor<4x5xf32>) -> tensor<4x3x2x2xf32>

// -----

// argwhere
  %c = "test.op"() : () -> tensor<2x3xi1>
  %i = relay.argwhere %c : (tensor<2x3xi1>) -> tensor<?x2xi32>
// CHECK{LITERAL}: %i = relay.argwhere %c : (tensor<2x3xi1>) -> tensor<?x2xi32>

// -----

// unique
  %x = "test.op"() : () -> tensor<6xf32>
  %u, %i, %inv, %n = relay.unique %x : (tensor<6xf32>) -> (tensor<6xf32>, tensor<6xi32>, tensor<6xi32>, tensor<1xi32>)
  %u2, %i2, %inv2, %n2, %c2 = relay.unique %x {sorted = false, return_counts = true} : (tensor<6xf32>) -> (tensor<6xf32>, tensor<6xi32>, tensor<6xi32>, tensor<1xi32>, tensor<6xi32>)
// CHECK{LITERAL}: %u, %i, %inv, %n = relay.unique %x : (tensor<6xf32>) -> (tensor<6xf32>, tensor<6xi32>, tensor<6xi32>, tensor<1xi32>)
// CHECK{LITERAL}: %u2, %i2, %inv2, %n2, %c2 = relay.unique %x {sorted = false, return_counts = true} : (tensor<6xf32>) -> (tensor<6xf32>, tensor<6xi32>, tensor<6xi32>, tensor<1xi32>, tensor<6xi32>)

// -----

// vision.all_class_non_max_suppression
  %b = "test.op"() : () -> tensor<1x6x4xf32>
  %s = "test.op"() : () -> tensor<1x2x6xf32>
  %m = relay.constant dense<2> : tensor<i64>
  %iou = relay.constant dense<0.5> : tensor<f32>
  %st = relay.constant dense<0.1> : tensor<f32>
  %sel, %n = relay.vision.all_class_non_max_suppression %b, %s, %m, %iou, %st : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<i64>, tensor<f32>, tensor<f32>) -> (tensor<12x3xi64>, tensor<1xi64>)
// CHECK{LITERAL}: %sel, %n = relay.vision.all_class_non_max_suppression %b, %s, %m, %iou, %st : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<i64>, tensor<f32>, tensor<f32>) -> (tensor<12x3xi64>, tensor<1xi64>)
// vision.roi_pool
  %x = "test.op"() : () -> tensor<1x3x8x8xf32>
  %r = relay.constant dense<[[0.0, 1.0, 1.0, 9.0, 7.0], [0.0, 0.0, 0.0, 3.0, 3.0], [0.0, -2.0, 4.0, 20.0, 5.0], [0.0, 6.0, 6.0, 6.5, 6.5]]> : tensor<4x5xf32>
  %y = relay.vision.roi_pool %x, %r {pooled_size = [2, 2], spatial_scale = 0.5} : (tensor<1x3x8x8xf32>, tensor<4x5xf32>) -> tensor<4x3x2x2xf32>
  %z = relay.vision.roi_pool %x, %r {pooled_size = [3, 1], spatial_scale = 1.0, layout = "NHWC"} : (tensor<1x3x8x8xf32>, tensor<4x5xf32>) -> tensor<4x3x1x8xf32>
// CHECK{LITERAL}: %y = relay.vision.roi_pool %x, %r {pooled_size = [2, 2], spatial_scale = 0.5} : (tensor<1x3x8x8xf32>, tensor<4x5xf32>) -> tensor<4x3x2x2xf32>
// CHECK{LITERAL}: %z = relay.vision.roi_pool %x, %r {pooled_size = [3, 1], spatial_scale = 1.0, layout = "NHWC"} : (tensor<1x3x8x8xf32>, tensor<4x5xf32>) -> tensor<4x3x1x8xf32>

// -----

// slice_like
  %x = "test.op"() : () -> tensor<1x4x8x8xf32>
  %t = "test.op"() : () -> tensor<1x2x5x6xi8>
  %y = relay.slice_like %x, %t {axes = [2, 3]} : (tensor<1x4x8x8xf32>, tensor<1x2x5x6xi8>) -> tensor<1x4x5x6xf32>
  %z = relay.slice_like %x, %t : (tensor<1x4x8x8xf32>, tensor<1x2x5x6xi8>) -> tensor<1x2x5x6xf32>
// CHECK{LITERAL}: %y = relay.slice_like %x, %t {axes = [2, 3]} : (tensor<1x4x8x8xf32>, tensor<1x2x5x6xi8>) -> tensor<1x4x5x6xf32>
// CHECK{LITERAL}: %z = relay.slice_like %x, %t : (tensor<1x4x8x8xf32>, tensor<1x2x5x6xi8>) -> tensor<1x2x5x6xf32>

// -----

// nn.lrn
  %x = "test.op"() : () -> tensor<1x8x4x4xf32>
  %y = relay.nn.lrn %x {size = 3, alpha = 1.0e-05} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %z = relay.nn.lrn %x {size = 7, axis = 3, bias = 1.0, alpha = 0.5, beta = 0.25} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
// CHECK{LITERAL}: %y = relay.nn.lrn %x {size = 3, alpha = 1.0e-05} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
// CHECK{LITERAL}: %z = relay.nn.lrn %x {size = 7, axis = 3, bias = 1.0, alpha = 0.5, beta = 0.25} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>

// -----

// variance
  %x = "test.op"() : () -> tensor<2x3x4xf32>
  %m = relay.mean %x {axis = [1], keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  %v = relay.variance %x, %m {axis = [1]} : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x4xf32>
  %u = relay.variance %x, %m {axis = [1], keepdims = true, exclude = true, unbiased = true} : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<1x3x1xf32>
// CHECK{LITERAL}: %v = relay.variance %x, %m {axis = [1]} : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x4xf32>
// CHECK{LITERAL}: %u = relay.variance %x, %m {axis = [1], keepdims = true, exclude = true, unbiased = true} : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<1x3x1xf32>

// -----

// image.resize1d
  %x = "test.op"() : () -> tensor<1x4x8xf32>
  %y = relay.image.resize1d %x {size = [16]} : (tensor<1x4x8xf32>) -> tensor<1x4x16xf32>
  %z = relay.image.resize1d %x {size = [3], layout = "NWC", method = "cubic", roi = [0.1, 0.9], coordinate_transformation_mode = "tf_crop_and_resize"} : (tensor<1x4x8xf32>) -> tensor<1x3x8xf32>
// CHECK{LITERAL}: %y = relay.image.resize1d %x {size = [16]} : (tensor<1x4x8xf32>) -> tensor<1x4x16xf32>
// CHECK{LITERAL}: %z = relay.image.resize1d %x {size = [3], roi = [0.1, 0.9], layout = "NWC", method = "cubic", coordinate_transformation_mode = "tf_crop_and_resize"} : (tensor<1x4x8xf32>) -> tensor<1x3x8xf32>

// -----

// nn.deformable_conv2d
  %x = "test.op"() : () -> tensor<1x4x6x6xf32>
  %o = "test.op"() : () -> tensor<1x36x3x3xf32>
  %w = "test.op"() : () -> tensor<6x2x3x3xf32>
  %y = relay.nn.deformable_conv2d %x, %o, %w {strides = [2, 2], padding = [1, 1, 1, 1], deformable_groups = 2, groups = 2, kernel_size = [3, 3], channels = 6} : (tensor<1x4x6x6xf32>, tensor<1x36x3x3xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x3x3xf32>
// CHECK{LITERAL}: %y = relay.nn.deformable_conv2d %x, %o, %w {strides = [2, 2], padding = [1, 1, 1, 1], deformable_groups = 2, groups = 2, channels = 6, kernel_size = [3, 3]} : (tensor<1x4x6x6xf32>, tensor<1x36x3x3xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x3x3xf32>
