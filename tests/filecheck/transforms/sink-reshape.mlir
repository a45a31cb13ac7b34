// RUN: relay-opt %s -p sink-reshape --split-input-file | filecheck %s

// An attention product's int32 sums, reshaped to 4-D, then requantized to bytes and
// dequantized for the mask's add: the reshape moves to the bytes (the narrowest value), the
// float64 side stays after it.
// CHECK-LABEL: func.func @requantize_after_reshape
// CHECK-NEXT:    %s = relay.constant dense<2.500000e-01> : tensor<f32>
// CHECK-NEXT:    %z = relay.constant dense<3> : tensor<i32>
// CHECK-NEXT:    %0 = relay.cast %acc {dtype = "float32"} : (tensor<2x3x4xi32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %1 = relay.multiply %0, %s : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %2 = relay.clip %1 {a_min = -3.0, a_max = 252.0} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %3 = relay.cast %2 {dtype = "int32"} : (tensor<2x3x4xf32>) -> tensor<2x3x4xi32>
// CHECK-NEXT:    %4 = relay.add %3, %z : (tensor<2x3x4xi32>, tensor<i32>) -> tensor<2x3x4xi32>
// CHECK-NEXT:    %5 = relay.cast %4 {dtype = "uint8"} : (tensor<2x3x4xi32>) -> tensor<2x3x4xui8>
// CHECK-NEXT:    %q = relay.reshape %5 {newshape = [1, 2, 3, 4]} : (tensor<2x3x4xui8>) -> tensor<1x2x3x4xui8>
// CHECK-NEXT:    %d = relay.cast %q {dtype = "float64"} : (tensor<1x2x3x4xui8>) -> tensor<1x2x3x4xf64>
// CHECK-NEXT:    %o = relay.add %d, %mask : (tensor<1x2x3x4xf64>, tensor<1x1x3x4xf64>) -> tensor<1x2x3x4xf64>
// CHECK-NEXT:    func.return %o
func.func @requantize_after_reshape(%acc: tensor<2x3x4xi32>, %mask: tensor<1x1x3x4xf64>) -> tensor<1x2x3x4xf64> {
  %r = relay.reshape %acc {newshape = [1, 2, 3, 4]} : (tensor<2x3x4xi32>) -> tensor<1x2x3x4xi32>
  %f = relay.cast %r {dtype = "float32"} : (tensor<1x2x3x4xi32>) -> tensor<1x2x3x4xf32>
  %s = relay.constant dense<0.25> : tensor<f32>
  %m = relay.multiply %f, %s : (tensor<1x2x3x4xf32>, tensor<f32>) -> tensor<1x2x3x4xf32>
  %c = relay.clip %m {a_min = -3.0, a_max = 252.0} : (tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  %i = relay.cast %c {dtype = "int32"} : (tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xi32>
  %z = relay.constant dense<3> : tensor<i32>
  %a = relay.add %i, %z : (tensor<1x2x3x4xi32>, tensor<i32>) -> tensor<1x2x3x4xi32>
  %q = relay.cast %a {dtype = "uint8"} : (tensor<1x2x3x4xi32>) -> tensor<1x2x3x4xui8>
  %d = relay.cast %q {dtype = "float64"} : (tensor<1x2x3x4xui8>) -> tensor<1x2x3x4xf64>
  %o = relay.add %d, %mask : (tensor<1x2x3x4xf64>, tensor<1x1x3x4xf64>) -> tensor<1x2x3x4xf64>
  func.return %o : tensor<1x2x3x4xf64>
}

// -----

// Nothing narrower than the reshape's input: the reshape stays (a float chain).
// CHECK-LABEL: func.func @no_narrower_value
// CHECK-NEXT:    %r = relay.reshape %x {newshape = [4, 6]} : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
// CHECK-NEXT:    %e = relay.exp %r
func.func @no_narrower_value(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %r = relay.reshape %x {newshape = [4, 6]} : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
  %e = relay.exp %r : (tensor<4x6xf32>) -> tensor<4x6xf32>
  func.return %e : tensor<4x6xf32>
}

// -----

// A second use of a chain value and an operand of more than one element end the chain before
// the narrow value: those reshapes stay. An expand_dims moves like a reshape.
// CHECK-LABEL: func.func @chains_that_end_early
// CHECK-NEXT:    %r = relay.reshape %x {newshape = [6, 4]} : (tensor<2x3x4xi32>) -> tensor<6x4xi32>
// CHECK-NEXT:    %f = relay.cast %r {dtype = "float32"}
// CHECK:         %b = relay.reshape %y {newshape = [6, 4]} : (tensor<2x3x4xi32>) -> tensor<6x4xi32>
// CHECK-NEXT:    %g = relay.add %b, %row
// CHECK:         %0 = relay.cast %w {dtype = "float32"} : (tensor<6x4xi32>) -> tensor<6x4xf32>
// CHECK-NEXT:    %1 = relay.cast %0 {dtype = "uint8"} : (tensor<6x4xf32>) -> tensor<6x4xui8>
// CHECK-NEXT:    %t = relay.reshape %1 {newshape = [1, 6, 4]} : (tensor<6x4xui8>) -> tensor<1x6x4xui8>
func.func @chains_that_end_early(%x: tensor<2x3x4xi32>, %y: tensor<2x3x4xi32>, %row: tensor<1x4xi32>, %w: tensor<6x4xi32>) -> (tensor<6x4xf32>, tensor<6x4xui8>, tensor<6x4xui8>, tensor<1x6x4xui8>) {
  %r = relay.reshape %x {newshape = [6, 4]} : (tensor<2x3x4xi32>) -> tensor<6x4xi32>
  %f = relay.cast %r {dtype = "float32"} : (tensor<6x4xi32>) -> tensor<6x4xf32>
  %q = relay.cast %f {dtype = "uint8"} : (tensor<6x4xf32>) -> tensor<6x4xui8>
  %b = relay.reshape %y {newshape = [6, 4]} : (tensor<2x3x4xi32>) -> tensor<6x4xi32>
  %g = relay.add %b, %row : (tensor<6x4xi32>, tensor<1x4xi32>) -> tensor<6x4xi32>
  %h = relay.cast %g {dtype = "uint8"} : (tensor<6x4xi32>) -> tensor<6x4xui8>
  %k = relay.expand_dims %w {axis = 0} : (tensor<6x4xi32>) -> tensor<1x6x4xi32>
  %u = relay.cast %k {dtype = "float32"} : (tensor<1x6x4xi32>) -> tensor<1x6x4xf32>
  %t = relay.cast %u {dtype = "uint8"} : (tensor<1x6x4xf32>) -> tensor<1x6x4xui8>
  func.return %f, %q, %h, %t : tensor<6x4xf32>, tensor<6x4xui8>, tensor<6x4xui8>, tensor<1x6x4xui8>
}
