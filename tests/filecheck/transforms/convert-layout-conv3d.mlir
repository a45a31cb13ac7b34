// RUN: relay-opt %s -p 'convert-layout{desired-layouts="nn.conv3d=NDHWC,default"}' | filecheck %s

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
