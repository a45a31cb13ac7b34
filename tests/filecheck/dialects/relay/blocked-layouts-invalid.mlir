// RUN: relay-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// Blocked layouts the verifier rejects, one case per message.

%x = "test.op"() : () -> tensor<1x8x6x6xf32>
%w = "test.op"() : () -> tensor<2x1x3x3x8x16xf32>
%y = relay.nn.conv2d %x, %w {data_layout = "NCHW8c", kernel_layout = "OIHW8i16o"} : (tensor<1x8x6x6xf32>, tensor<2x1x3x3x8x16xf32>) -> tensor<1x2x4x4x16xf32>
// CHECK: relay.nn.conv2d: layout 'NCHW8c' has 5 axes but the input has rank 4

// -----

%x = "test.op"() : () -> tensor<1x1x6x6x8xf32>
%w = "test.op"() : () -> tensor<24x8x3x3xf32>
%y = relay.nn.conv2d %x, %w {out_layout = "NCHW16c"} : (tensor<1x1x6x6x8xf32>, tensor<24x8x3x3xf32>) -> tensor<1x2x4x4x16xf32>
// CHECK: relay.nn.conv2d: layout 'NCHW' has 4 axes but the input has rank 5

// -----

%x = "test.op"() : () -> tensor<1x1x6x6x8xf32>
%w = "test.op"() : () -> tensor<24x8x3x3xf32>
%y = relay.nn.conv2d %x, %w {data_layout = "NCHW8c", out_layout = "NCHW16c"} : (tensor<1x1x6x6x8xf32>, tensor<24x8x3x3xf32>) -> tensor<1x2x4x4x16xf32>
// CHECK: relay.nn.conv2d: axis C of size 24 is not divisible by 16

// -----

%x = "test.op"() : () -> tensor<1x2x6x6x4xf32>
%y = relay.nn.max_pool2d %x {pool_size = [2, 2], layout = "NCHW4h"} : (tensor<1x2x6x6x4xf32>) -> tensor<1x2x5x5x4xf32>
// CHECK: relay.nn.max_pool2d: layout 'NCHW4h' splits H or W, which a pool cannot
