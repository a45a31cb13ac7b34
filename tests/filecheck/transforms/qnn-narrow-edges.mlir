// RUN: relay-opt %s -p qnn-narrow-edges | filecheck %s

// The float64 chain computed from the 8-bit value moves into the function that uses it: the
// uint8 value is what passes between the two (an arena buffer of an eighth of the
// bytes). Both functions are renamed after their ops.
// CHECK-LABEL: builtin.module
// CHECK:       func.func private @fused_nn_conv2d_cast_cast(%p0: tensor<1x4x4x4xui8>, %p1: tensor<8x4x1x1xi8>) -> tensor<1x8x4x4xui8> attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT:    %0 = relay.nn.conv2d %p0, %p1
// CHECK-NEXT:    %1 = relay.cast %0 {dtype = "float32"}
// CHECK-NEXT:    %2 = relay.cast %1 {dtype = "uint8"}
// CHECK-NEXT:    func.return %2 : tensor<1x8x4x4xui8>
// CHECK-NEXT:  }
// CHECK:       func.func private @fused_cast_multiply_add_add(%p0: tensor<1x8x4x4xui8>, %p1: tensor<1x8x4x4xf64>) -> tensor<1x8x4x4xf64> attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT:    %0 = relay.cast %p0 {dtype = "float64"} : (tensor<1x8x4x4xui8>) -> tensor<1x8x4x4xf64>
// CHECK-NEXT:    %1 = relay.constant dense<5.000000e-01> : tensor<f64>
// CHECK-NEXT:    %2 = relay.multiply %0, %1
// CHECK-NEXT:    %3 = relay.constant dense<-3.000000e+00> : tensor<f64>
// CHECK-NEXT:    %4 = relay.add %2, %3
// CHECK-NEXT:    %5 = relay.add %4, %p1
// CHECK-NEXT:    func.return %5
// CHECK:       func.func @main
// CHECK-NEXT:    %0 = func.call @fused_nn_conv2d_cast_cast(%x, %w) : (tensor<1x4x4x4xui8>, tensor<8x4x1x1xi8>) -> tensor<1x8x4x4xui8>
// CHECK-NEXT:    %1 = func.call @fused_cast_multiply_add_add(%0, %y)
// A chain from a float value, or a result used twice, stays.
// CHECK:       func.func @float_source
// CHECK-NEXT:    %0 = func.call @fused_cast_multiply(%x)
// CHECK:       func.func @two_uses
// CHECK-NEXT:    %0 = func.call @fused_cast_multiply_1(%x)
// A result read by two functions: each computes its own copy of the chain from the 8-bit
// value (so the float64 value is never live across both).
// CHECK:       func.func private @fused_cast(%p0: tensor<1x8xi32>) -> tensor<1x8xui8>
// CHECK-NEXT:    %0 = relay.cast %p0 {dtype = "uint8"}
// CHECK-NEXT:    func.return %0 : tensor<1x8xui8>
// CHECK:       func.func private @fused_cast_multiply_negative(%p0: tensor<1x8xui8>) -> tensor<1x8xf64>
// CHECK-NEXT:    %0 = relay.cast %p0 {dtype = "float64"}
// CHECK-NEXT:    %1 = relay.constant dense<2.500000e-01> : tensor<f64>
// CHECK-NEXT:    %2 = relay.multiply %0, %1
// CHECK-NEXT:    %3 = relay.negative %2
// CHECK:       func.func private @fused_cast_multiply_exp(%p0: tensor<1x8xui8>) -> tensor<1x8xf64>
// CHECK-NEXT:    %0 = relay.cast %p0 {dtype = "float64"}
// CHECK-NEXT:    %1 = relay.constant dense<2.500000e-01> : tensor<f64>
// CHECK-NEXT:    %2 = relay.multiply %0, %1
// CHECK-NEXT:    %3 = relay.exp %2
// CHECK:       func.func @two_readers
// CHECK-NEXT:    %0 = func.call @fused_cast(%x) : (tensor<1x8xi32>) -> tensor<1x8xui8>
// CHECK-NEXT:    %1 = func.call @fused_cast_multiply_negative(%0)
// CHECK-NEXT:    %2 = func.call @fused_cast_multiply_exp(%0)
builtin.module {
  func.func private @fused_nn_conv2d_cast_cast_cast_multiply_add(%p0: tensor<1x4x4x4xui8>, %p1: tensor<8x4x1x1xi8>) -> tensor<1x8x4x4xf64> attributes {relay.primitive = 1 : i64} {
    %0 = relay.nn.conv2d %p0, %p1 {channels = 8, kernel_size = [1, 1], out_dtype = "int32"} : (tensor<1x4x4x4xui8>, tensor<8x4x1x1xi8>) -> tensor<1x8x4x4xi32>
    %1 = relay.cast %0 {dtype = "float32"} : (tensor<1x8x4x4xi32>) -> tensor<1x8x4x4xf32>
    %2 = relay.cast %1 {dtype = "uint8"} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xui8>
    %3 = relay.cast %2 {dtype = "float64"} : (tensor<1x8x4x4xui8>) -> tensor<1x8x4x4xf64>
    %4 = relay.constant dense<0.5> : tensor<f64>
    %5 = relay.multiply %3, %4 : (tensor<1x8x4x4xf64>, tensor<f64>) -> tensor<1x8x4x4xf64>
    %6 = relay.constant dense<-3.0> : tensor<f64>
    %7 = relay.add %5, %6 : (tensor<1x8x4x4xf64>, tensor<f64>) -> tensor<1x8x4x4xf64>
    func.return %7 : tensor<1x8x4x4xf64>
  }
  func.func private @fused_add(%p0: tensor<1x8x4x4xf64>, %p1: tensor<1x8x4x4xf64>) -> tensor<1x8x4x4xf64> attributes {relay.primitive = 1 : i64} {
    %0 = relay.add %p0, %p1 : (tensor<1x8x4x4xf64>, tensor<1x8x4x4xf64>) -> tensor<1x8x4x4xf64>
    func.return %0 : tensor<1x8x4x4xf64>
  }
  func.func private @fused_cast_multiply(%p0: tensor<1x8xf32>) -> tensor<1x8xf64> attributes {relay.primitive = 1 : i64} {
    %0 = relay.cast %p0 {dtype = "float64"} : (tensor<1x8xf32>) -> tensor<1x8xf64>
    %1 = relay.constant dense<0.5> : tensor<f64>
    %2 = relay.multiply %0, %1 : (tensor<1x8xf64>, tensor<f64>) -> tensor<1x8xf64>
    func.return %2 : tensor<1x8xf64>
  }
  func.func private @fused_negative(%p0: tensor<1x8xf64>) -> tensor<1x8xf64> attributes {relay.primitive = 1 : i64} {
    %0 = relay.negative %p0 : (tensor<1x8xf64>) -> tensor<1x8xf64>
    func.return %0 : tensor<1x8xf64>
  }
  func.func private @fused_cast_multiply_1(%p0: tensor<1x8xui8>) -> tensor<1x8xf64> attributes {relay.primitive = 1 : i64} {
    %0 = relay.cast %p0 {dtype = "uint8"} : (tensor<1x8xui8>) -> tensor<1x8xui8>
    %1 = relay.cast %0 {dtype = "float64"} : (tensor<1x8xui8>) -> tensor<1x8xf64>
    %2 = relay.constant dense<0.5> : tensor<f64>
    %3 = relay.multiply %1, %2 : (tensor<1x8xf64>, tensor<f64>) -> tensor<1x8xf64>
    func.return %3 : tensor<1x8xf64>
  }
  func.func private @fused_negative_1(%p0: tensor<1x8xf64>) -> tensor<1x8xf64> attributes {relay.primitive = 1 : i64} {
    %0 = relay.negative %p0 : (tensor<1x8xf64>) -> tensor<1x8xf64>
    func.return %0 : tensor<1x8xf64>
  }
  func.func @main(%x: tensor<1x4x4x4xui8>, %w: tensor<8x4x1x1xi8>, %y: tensor<1x8x4x4xf64>) -> tensor<1x8x4x4xf64> {
    %0 = func.call @fused_nn_conv2d_cast_cast_cast_multiply_add(%x, %w) : (tensor<1x4x4x4xui8>, tensor<8x4x1x1xi8>) -> tensor<1x8x4x4xf64>
    %1 = func.call @fused_add(%0, %y) : (tensor<1x8x4x4xf64>, tensor<1x8x4x4xf64>) -> tensor<1x8x4x4xf64>
    func.return %1 : tensor<1x8x4x4xf64>
  }
  func.func @float_source(%x: tensor<1x8xf32>) -> tensor<1x8xf64> {
    %0 = func.call @fused_cast_multiply(%x) : (tensor<1x8xf32>) -> tensor<1x8xf64>
    %1 = func.call @fused_negative(%0) : (tensor<1x8xf64>) -> tensor<1x8xf64>
    func.return %1 : tensor<1x8xf64>
  }
  func.func @two_uses(%x: tensor<1x8xui8>) -> (tensor<1x8xf64>, tensor<1x8xf64>) {
    %0 = func.call @fused_cast_multiply_1(%x) : (tensor<1x8xui8>) -> tensor<1x8xf64>
    %1 = func.call @fused_negative_1(%0) : (tensor<1x8xf64>) -> tensor<1x8xf64>
    func.return %0, %1 : tensor<1x8xf64>, tensor<1x8xf64>
  }
  func.func private @fused_cast_cast_multiply(%p0: tensor<1x8xi32>) -> tensor<1x8xf64> attributes {relay.primitive = 1 : i64} {
    %0 = relay.cast %p0 {dtype = "uint8"} : (tensor<1x8xi32>) -> tensor<1x8xui8>
    %1 = relay.cast %0 {dtype = "float64"} : (tensor<1x8xui8>) -> tensor<1x8xf64>
    %2 = relay.constant dense<0.25> : tensor<f64>
    %3 = relay.multiply %1, %2 : (tensor<1x8xf64>, tensor<f64>) -> tensor<1x8xf64>
    func.return %3 : tensor<1x8xf64>
  }
  func.func private @fused_negative_2(%p0: tensor<1x8xf64>) -> tensor<1x8xf64> attributes {relay.primitive = 1 : i64} {
    %0 = relay.negative %p0 : (tensor<1x8xf64>) -> tensor<1x8xf64>
    func.return %0 : tensor<1x8xf64>
  }
  func.func private @fused_exp(%p0: tensor<1x8xf64>) -> tensor<1x8xf64> attributes {relay.primitive = 1 : i64} {
    %0 = relay.exp %p0 : (tensor<1x8xf64>) -> tensor<1x8xf64>
    func.return %0 : tensor<1x8xf64>
  }
  func.func @two_readers(%x: tensor<1x8xi32>) -> (tensor<1x8xf64>, tensor<1x8xf64>) {
    %0 = func.call @fused_cast_cast_multiply(%x) : (tensor<1x8xi32>) -> tensor<1x8xf64>
    %1 = func.call @fused_negative_2(%0) : (tensor<1x8xf64>) -> tensor<1x8xf64>
    %2 = func.call @fused_exp(%0) : (tensor<1x8xf64>) -> tensor<1x8xf64>
    func.return %1, %2 : tensor<1x8xf64>, tensor<1x8xf64>
  }
}
