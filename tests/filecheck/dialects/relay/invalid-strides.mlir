// RUN: relay-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// Strides, dilations, window sizes and groups must be positive integers: a 0 reached the
// kernels as a ZeroDivisionError. Each message names the op and the attribute.

%x = "test.op"() : () -> tensor<1x2x8x8xf32>
%w = "test.op"() : () -> tensor<2x2x3x3xf32>
%y = relay.nn.conv2d %x, %w {strides = [0, 1]} : (tensor<1x2x8x8xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32>
// CHECK: relay.nn.conv2d: strides must be positive integers, got [0, 1]

// -----

%x = "test.op"() : () -> tensor<1x2x8x8xf32>
%w = "test.op"() : () -> tensor<2x2x3x3xf32>
%y = relay.nn.conv2d %x, %w {dilation = [1, 0]} : (tensor<1x2x8x8xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32>
// CHECK: relay.nn.conv2d: dilation must be positive integers, got [1, 0]

// -----

%x = "test.op"() : () -> tensor<1x2x8x8xf32>
%w = "test.op"() : () -> tensor<2x2x3x3xf32>
%y = relay.nn.conv2d %x, %w {groups = 0} : (tensor<1x2x8x8xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32>
// CHECK: relay.nn.conv2d: groups must be positive integers, got 0

// -----

%x = "test.op"() : () -> tensor<1x8x4x4xf32>
%w = "test.op"() : () -> tensor<8x4x3x3xf32>
%y = relay.nn.conv2d_transpose %x, %w {strides = [-2, 2]} : (tensor<1x8x4x4xf32>, tensor<8x4x3x3xf32>) -> tensor<1x4x9x9xf32>
// CHECK: relay.nn.conv2d_transpose: strides must be positive integers, got [-2, 2]

// -----

%x = "test.op"() : () -> tensor<1x4x8x8xf32>
%y = relay.nn.max_pool2d %x {pool_size = [2, 2], strides = [0, 0]} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
// CHECK: relay.nn.max_pool2d: strides must be positive integers, got [0, 0]

// -----

%x = "test.op"() : () -> tensor<1x4x8x8xf32>
%y = relay.nn.avg_pool2d %x {pool_size = [0, 2]} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
// CHECK: relay.nn.avg_pool2d: pool_size must be positive integers, got [0, 2]

// -----

%x = "test.op"() : () -> tensor<1x4x16xf32>
%w = "test.op"() : () -> tensor<8x4x3xf32>
%y = relay.nn.conv1d %x, %w {dilation = [0]} : (tensor<1x4x16xf32>, tensor<8x4x3xf32>) -> tensor<1x8x14xf32>
// CHECK: relay.nn.conv1d: dilation must be positive integers, got [0]

// -----

%x = "test.op"() : () -> tensor<1x2x4x8x8xf32>
%y = relay.nn.max_pool3d %x {pool_size = [2, 2, 2], strides = [1, 0, 1]} : (tensor<1x2x4x8x8xf32>) -> tensor<1x2x3x7x7xf32>
// CHECK: relay.nn.max_pool3d: strides must be positive integers, got [1, 0, 1]

// -----

%x = "test.op"() : () -> tensor<1x4x8x8xi8>
%s = "test.op"() : () -> tensor<f32>
%zp = "test.op"() : () -> tensor<i32>
%y = qnn.avg_pool2d %x, %s, %zp, %s, %zp {pool_size = [2, 2], strides = [0, 2]} : (tensor<1x4x8x8xi8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x4x4x4xi8>
// CHECK: qnn.avg_pool2d: strides must be positive integers, got [0, 2]

// -----

// A float in the text is a parse error naming the attribute.
%x = "test.op"() : () -> tensor<1x2x8x8xf32>
%w = "test.op"() : () -> tensor<2x2x3x3xf32>
%y = relay.nn.conv2d %x, %w {strides = [1.5, 1]} : (tensor<1x2x8x8xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32>
// CHECK: attribute 'strides' expects a list of integers, got [1.5, 1]
