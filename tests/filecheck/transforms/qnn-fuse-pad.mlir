// RUN: relay-opt %s -p qnn-fuse-pad | filecheck %s

// The zero-point pad moves into the convolution's function, its parameters in the padded
// one's place; the function is renamed after its ops and the pad's function is removed.
// CHECK-LABEL: builtin.module
// CHECK-NOT:   func.func private @fused_nn_pad(
// CHECK:       func.func private @fused_nn_pad_nn_conv2d_add(%p0: tensor<8x8x3x3xi8>, %p1: tensor<1x8x6x6xui8>, %p2: tensor<ui8>, %p3: tensor<1x8x1x1xi32>) -> tensor<1x8x6x6xi32> attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT:    %0 = relay.nn.pad %p1, %p2 {pad_width = {{\[\[}}0, 0], [0, 0], [1, 1], [1, 1]]} : (tensor<1x8x6x6xui8>, tensor<ui8>) -> tensor<1x8x8x8xui8>
// CHECK-NEXT:    %1 = relay.nn.conv2d %0, %p0 {channels = 8, kernel_size = [3, 3], out_dtype = "int32"} : (tensor<1x8x8x8xui8>, tensor<8x8x3x3xi8>) -> tensor<1x8x6x6xi32>
// CHECK-NEXT:    %2 = relay.add %1, %p3
// CHECK-NEXT:    func.return %2
// The float pad and the pad with two users stay functions of their own.
// CHECK:       func.func private @fused_nn_pad_1(%p0: tensor<1x8x6x6xf32>
// CHECK:       func.func private @fused_nn_conv2d_1(%p0: tensor<1x8x8x8xf32>
// CHECK:       func.func private @fused_nn_pad_2(%p0: tensor<1x8x6x6xui8>
// CHECK:       func.func private @fused_nn_conv2d_2(%p0: tensor<1x8x8x8xui8>
// CHECK:       func.func @main
// CHECK-NEXT:    %zp = relay.constant dense<3> : tensor<ui8>
// CHECK-NEXT:    %0 = func.call @fused_nn_pad_nn_conv2d_add(%w, %x, %zp, %b)
// CHECK-NEXT:    func.return %0
// CHECK:       func.func @float_pad
// CHECK-NEXT:    %0 = func.call @fused_nn_pad_1(%x, %v)
// CHECK-NEXT:    %1 = func.call @fused_nn_conv2d_1(%0, %w)
// CHECK:       func.func @two_users
// CHECK-NEXT:    %zp = relay.constant
// CHECK-NEXT:    %0 = func.call @fused_nn_pad_2(%x, %zp)
// CHECK-NEXT:    %1 = func.call @fused_nn_conv2d_2(%0, %w)
// CHECK-NEXT:    %2 = relay.add %0, %0
builtin.module {
  func.func private @fused_nn_pad(%p0: tensor<1x8x6x6xui8>, %p1: tensor<ui8>) -> tensor<1x8x8x8xui8> attributes {relay.primitive = 1 : i64} {
    %0 = relay.nn.pad %p0, %p1 {pad_width = [[0, 0], [0, 0], [1, 1], [1, 1]]} : (tensor<1x8x6x6xui8>, tensor<ui8>) -> tensor<1x8x8x8xui8>
    func.return %0 : tensor<1x8x8x8xui8>
  }
  func.func private @fused_nn_conv2d_add(%p0: tensor<8x8x3x3xi8>, %p1: tensor<1x8x8x8xui8>, %p2: tensor<1x8x1x1xi32>) -> tensor<1x8x6x6xi32> attributes {relay.primitive = 1 : i64} {
    %0 = relay.nn.conv2d %p1, %p0 {channels = 8, kernel_size = [3, 3], out_dtype = "int32"} : (tensor<1x8x8x8xui8>, tensor<8x8x3x3xi8>) -> tensor<1x8x6x6xi32>
    %1 = relay.add %0, %p2 : (tensor<1x8x6x6xi32>, tensor<1x8x1x1xi32>) -> tensor<1x8x6x6xi32>
    func.return %1 : tensor<1x8x6x6xi32>
  }
  func.func private @fused_nn_pad_1(%p0: tensor<1x8x6x6xf32>, %p1: tensor<f32>) -> tensor<1x8x8x8xf32> attributes {relay.primitive = 1 : i64} {
    %0 = relay.nn.pad %p0, %p1 {pad_width = [[0, 0], [0, 0], [1, 1], [1, 1]]} : (tensor<1x8x6x6xf32>, tensor<f32>) -> tensor<1x8x8x8xf32>
    func.return %0 : tensor<1x8x8x8xf32>
  }
  func.func private @fused_nn_conv2d_1(%p0: tensor<1x8x8x8xf32>, %p1: tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32> attributes {relay.primitive = 1 : i64} {
    %0 = relay.nn.conv2d %p0, %p1 {channels = 8, kernel_size = [3, 3]} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
    func.return %0 : tensor<1x8x6x6xf32>
  }
  func.func private @fused_nn_pad_2(%p0: tensor<1x8x6x6xui8>, %p1: tensor<ui8>) -> tensor<1x8x8x8xui8> attributes {relay.primitive = 1 : i64} {
    %0 = relay.nn.pad %p0, %p1 {pad_width = [[0, 0], [0, 0], [1, 1], [1, 1]]} : (tensor<1x8x6x6xui8>, tensor<ui8>) -> tensor<1x8x8x8xui8>
    func.return %0 : tensor<1x8x8x8xui8>
  }
  func.func private @fused_nn_conv2d_2(%p0: tensor<1x8x8x8xui8>, %p1: tensor<8x8x3x3xi8>) -> tensor<1x8x6x6xi32> attributes {relay.primitive = 1 : i64} {
    %0 = relay.nn.conv2d %p0, %p1 {channels = 8, kernel_size = [3, 3], out_dtype = "int32"} : (tensor<1x8x8x8xui8>, tensor<8x8x3x3xi8>) -> tensor<1x8x6x6xi32>
    func.return %0 : tensor<1x8x6x6xi32>
  }
  func.func @main(%x: tensor<1x8x6x6xui8>, %w: tensor<8x8x3x3xi8>, %b: tensor<1x8x1x1xi32>) -> tensor<1x8x6x6xi32> {
    %zp = relay.constant dense<3> : tensor<ui8>
    %0 = func.call @fused_nn_pad(%x, %zp) : (tensor<1x8x6x6xui8>, tensor<ui8>) -> tensor<1x8x8x8xui8>
    %1 = func.call @fused_nn_conv2d_add(%w, %0, %b) : (tensor<8x8x3x3xi8>, tensor<1x8x8x8xui8>, tensor<1x8x1x1xi32>) -> tensor<1x8x6x6xi32>
    func.return %1 : tensor<1x8x6x6xi32>
  }
  func.func @float_pad(%x: tensor<1x8x6x6xf32>, %v: tensor<f32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32> {
    %0 = func.call @fused_nn_pad_1(%x, %v) : (tensor<1x8x6x6xf32>, tensor<f32>) -> tensor<1x8x8x8xf32>
    %1 = func.call @fused_nn_conv2d_1(%0, %w) : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
    func.return %1 : tensor<1x8x6x6xf32>
  }
  func.func @two_users(%x: tensor<1x8x6x6xui8>, %w: tensor<8x8x3x3xi8>) -> (tensor<1x8x6x6xi32>, tensor<1x8x8x8xui8>) {
    %zp = relay.constant dense<3> : tensor<ui8>
    %0 = func.call @fused_nn_pad_2(%x, %zp) : (tensor<1x8x6x6xui8>, tensor<ui8>) -> tensor<1x8x8x8xui8>
    %1 = func.call @fused_nn_conv2d_2(%0, %w) : (tensor<1x8x8x8xui8>, tensor<8x8x3x3xi8>) -> tensor<1x8x6x6xi32>
    %2 = relay.add %0, %0 : (tensor<1x8x8x8xui8>, tensor<1x8x8x8xui8>) -> tensor<1x8x8x8xui8>
    func.return %1, %2 : tensor<1x8x6x6xi32>, tensor<1x8x8x8xui8>
  }
}
