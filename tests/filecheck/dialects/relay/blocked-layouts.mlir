// RUN: relay-opt %s --split-input-file | filecheck %s
// RUN: relay-opt %s --split-input-file --print-op-generic | relay-opt --split-input-file | filecheck %s

// Blocked layouts: conv2d reads NCHW{c}c data and OIHW{i}i{o}o kernels (types inferred in the
// primal layouts, the result blocked as out_layout says); pools keep the block.

// CHECK-LABEL: func.func @blocked
// CHECK-NEXT:    %y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1], channels = 32, data_layout = "NCHW8c", kernel_layout = "OIHW8i16o", out_layout = "NCHW16c"} : (tensor<1x1x6x6x8xf32>, tensor<2x1x3x3x8x16xf32>) -> tensor<1x2x6x6x16xf32>
// CHECK-NEXT:    %p = relay.nn.max_pool2d %y {pool_size = [2, 2], strides = [2, 2], layout = "NCHW16c"} : (tensor<1x2x6x6x16xf32>) -> tensor<1x2x3x3x16xf32>
// CHECK-NEXT:    %g = relay.nn.global_avg_pool2d %p {layout = "NCHW16c"} : (tensor<1x2x3x3x16xf32>) -> tensor<1x2x1x1x16xf32>
// CHECK-NEXT:    %t = relay.nn.conv2d_transpose %y, %v {strides = [2, 2], data_layout = "NCHW16c", kernel_layout = "IOHW16i4o", out_layout = "NCHW"} : (tensor<1x2x6x6x16xf32>, tensor<2x1x3x3x16x4xf32>) -> tensor<1x4x13x13xf32>
func.func @blocked(%x: tensor<1x1x6x6x8xf32>, %w: tensor<2x1x3x3x8x16xf32>, %v: tensor<2x1x3x3x16x4xf32>) -> (tensor<1x2x1x1x16xf32>, tensor<1x4x13x13xf32>) {
  %y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1], channels = 32, data_layout = "NCHW8c", kernel_layout = "OIHW8i16o", out_layout = "NCHW16c"} : (tensor<1x1x6x6x8xf32>, tensor<2x1x3x3x8x16xf32>) -> tensor<1x2x6x6x16xf32>
  %p = relay.nn.max_pool2d %y {pool_size = [2, 2], strides = [2, 2], layout = "NCHW16c"} : (tensor<1x2x6x6x16xf32>) -> tensor<1x2x3x3x16xf32>
  %g = relay.nn.global_avg_pool2d %p {layout = "NCHW16c"} : (tensor<1x2x3x3x16xf32>) -> tensor<1x2x1x1x16xf32>
  %t = relay.nn.conv2d_transpose %y, %v {strides = [2, 2], data_layout = "NCHW16c", kernel_layout = "IOHW16i4o", out_layout = "NCHW"} : (tensor<1x2x6x6x16xf32>, tensor<2x1x3x3x16x4xf32>) -> tensor<1x4x13x13xf32>
  func.return %g, %t : tensor<1x2x1x1x16xf32>, tensor<1x4x13x13xf32>
}
