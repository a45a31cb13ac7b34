// RUN: relay-opt %s -p 'convert-layout{desired-layouts="nn.conv3d=NDHWC,default"}' --split-input-file | filecheck %s

// A 3-D convolution goes channels-last (NDHWC data, DHWIO kernel: Relay's convert_conv3d),
// its per-channel bias and the residual add follow, the result goes back to NCDHW.
func.func @conv3d_bias_residual(%x: tensor<1x8x4x6x6xf32>, %w: tensor<8x8x3x3x3xf32>, %b: tensor<8x1x1x1xf32>) -> tensor<1x8x4x6x6xf32> {
  %y = relay.nn.conv3d %x, %w {padding = [1, 1, 1, 1, 1, 1], channels = 8, kernel_size = [3, 3, 3]} : (tensor<1x8x4x6x6xf32>, tensor<8x8x3x3x3xf32>) -> tensor<1x8x4x6x6xf32>
  %a = relay.add %y, %b : (tensor<1x8x4x6x6xf32>, tensor<8x1x1x1xf32>) -> tensor<1x8x4x6x6xf32>
  %s = relay.add %a, %x : (tensor<1x8x4x6x6xf32>, tensor<1x8x4x6x6xf32>) -> tensor<1x8x4x6x6xf32>
  %r = relay.nn.relu %s : (tensor<1x8x4x6x6xf32>) -> tensor<1x8x4x6x6xf32>
  func.return %r : tensor<1x8x4x6x6xf32>
}

// CHECK-LABEL: func.func @conv3d_bias_residual(
// CHECK-NEXT:  %0 = relay.layout_transform %x {src_layout = "NCDHW", dst_layout = "NDHWC"} : (tensor<1x8x4x6x6xf32>) -> tensor<1x4x6x6x8xf32>
// CHECK-NEXT:  %1 = relay.layout_transform %w {src_layout = "OIDHW", dst_layout = "DHWIO"} : (tensor<8x8x3x3x3xf32>) -> tensor<3x3x3x8x8xf32>
// CHECK-NEXT:  %y = relay.nn.conv3d %0, %1 {{{.*}}data_layout = "NDHWC", kernel_layout = "DHWIO"} : (tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x8xf32>) -> tensor<1x4x6x6x8xf32>
// CHECK-NEXT:  %2 = relay.expand_dims %b {axis = 0} : (tensor<8x1x1x1xf32>) -> tensor<1x8x1x1x1xf32>
// CHECK-NEXT:  %3 = relay.layout_transform %2 {src_layout = "NCDHW", dst_layout = "NDHWC"} : (tensor<1x8x1x1x1xf32>) -> tensor<1x1x1x1x8xf32>
// CHECK-NEXT:  %a = relay.add %y, %3 : (tensor<1x4x6x6x8xf32>, tensor<1x1x1x1x8xf32>) -> tensor<1x4x6x6x8xf32>
// CHECK-NEXT:  %s = relay.add %a, %0 : (tensor<1x4x6x6x8xf32>, tensor<1x4x6x6x8xf32>) -> tensor<1x4x6x6x8xf32>
// CHECK-NEXT:  %r = relay.nn.relu %s : (tensor<1x4x6x6x8xf32>) -> tensor<1x4x6x6x8xf32>
// CHECK-NEXT:  %4 = relay.layout_transform %r {src_layout = "NDHWC", dst_layout = "NCDHW"} : (tensor<1x4x6x6x8xf32>) -> tensor<1x8x4x6x6xf32>
// CHECK-NEXT:  func.return %4 : tensor<1x8x4x6x6xf32>

// -----

// The 3-D pools after it follow its layout (Relay's PoolInferCorrectLayout, registered for the
// 3-D pools as for the 2-D ones): no transform between the convolution and the pools.
func.func @conv3d_pools(%x: tensor<1x8x4x6x6xf32>, %w: tensor<8x8x3x3x3xf32>) -> tensor<1x8x1x1x1xf32> {
  %y = relay.nn.conv3d %x, %w {padding = [1, 1, 1, 1, 1, 1], channels = 8, kernel_size = [3, 3, 3]} : (tensor<1x8x4x6x6xf32>, tensor<8x8x3x3x3xf32>) -> tensor<1x8x4x6x6xf32>
  %m = relay.nn.max_pool3d %y {pool_size = [1, 3, 3], strides = [1, 2, 2], padding = [0, 1, 1, 0, 1, 1]} : (tensor<1x8x4x6x6xf32>) -> tensor<1x8x4x3x3xf32>
  %a = relay.nn.avg_pool3d %m {pool_size = [2, 1, 1], strides = [2, 1, 1]} : (tensor<1x8x4x3x3xf32>) -> tensor<1x8x2x3x3xf32>
  %g = relay.nn.adaptive_avg_pool3d %a {output_size = [1, 1, 1]} : (tensor<1x8x2x3x3xf32>) -> tensor<1x8x1x1x1xf32>
  func.return %g : tensor<1x8x1x1x1xf32>
}

// CHECK-LABEL: func.func @conv3d_pools(
// CHECK:       %y = relay.nn.conv3d %0, %1 {{{.*}}data_layout = "NDHWC", kernel_layout = "DHWIO"} : (tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x8xf32>) -> tensor<1x4x6x6x8xf32>
// CHECK-NEXT:  %m = relay.nn.max_pool3d %y {{{.*}}layout = "NDHWC"{{.*}}} : (tensor<1x4x6x6x8xf32>) -> tensor<1x4x3x3x8xf32>
// CHECK-NEXT:  %a = relay.nn.avg_pool3d %m {{{.*}}layout = "NDHWC"{{.*}}} : (tensor<1x4x3x3x8xf32>) -> tensor<1x2x3x3x8xf32>
// CHECK-NEXT:  %g = relay.nn.adaptive_avg_pool3d %a {{{.*}}layout = "NDHWC"{{.*}}} : (tensor<1x2x3x3x8xf32>) -> tensor<1x1x1x1x8xf32>
// CHECK-NEXT:  %2 = relay.layout_transform %g {src_layout = "NDHWC", dst_layout = "NCDHW"} : (tensor<1x1x1x1x8xf32>) -> tensor<1x8x1x1x1xf32>
// CHECK-NEXT:  func.return %2 : tensor<1x8x1x1x1xf32>
