// RUN: relay-opt %s -p 'qnn-legalize{fast-int8=true}' | filecheck %s
// RUN: relay-opt %s -p qnn-legalize | filecheck %s --check-prefix=GENERIC

// With fast int8 (VNNI), int8 data moves to uint8: x + 128 and the zero point 3 + 128.
// CHECK-LABEL: func.func @dense
// CHECK:      %0 = relay.cast %x {dtype = "int32"} : (tensor<1x8xi8>) -> tensor<1x8xi32>
// CHECK-NEXT: %1 = relay.constant dense<128> : tensor<i32>
// CHECK-NEXT: %2 = relay.add %0, %1 : (tensor<1x8xi32>, tensor<i32>) -> tensor<1x8xi32>
// CHECK-NEXT: %3 = relay.cast %2 {dtype = "uint8"} : (tensor<1x8xi32>) -> tensor<1x8xui8>
// CHECK-NEXT: %4 = relay.constant dense<131> : tensor<i32>
// CHECK-NEXT: %y = qnn.dense %3, %w, %4, %zw, %s, %s {units = 4} : (tensor<1x8xui8>, tensor<4x8xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<1x4xi32>
// A generic target has no qnn legalization: nothing changes.
// GENERIC:      %y = qnn.dense %x, %w, %zx, %zw, %s, %s {units = 4} : (tensor<1x8xi8>, tensor<4x8xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<1x4xi32>
func.func @dense(%x: tensor<1x8xi8>, %w: tensor<4x8xi8>) -> tensor<1x4xi32> {
  %zx = relay.constant dense<3> : tensor<i32>
  %zw = relay.constant dense<0> : tensor<i32>
  %s = relay.constant dense<0.1> : tensor<f32>
  %y = qnn.dense %x, %w, %zx, %zw, %s, %s {units = 4} : (tensor<1x8xi8>, tensor<4x8xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<1x4xi32>
  func.return %y : tensor<1x4xi32>
}

// CHECK-LABEL: func.func @already_uint8_int8
// CHECK-NEXT: %z = relay.constant dense<0> : tensor<i32>
// CHECK-NEXT: %s = relay.constant dense<1.000000e-01> : tensor<f32>
// CHECK-NEXT: %y = qnn.dense %x, %w, %z, %z, %s, %s
func.func @already_uint8_int8(%x: tensor<1x8xui8>, %w: tensor<4x8xi8>) -> tensor<1x4xi32> {
  %z = relay.constant dense<0> : tensor<i32>
  %s = relay.constant dense<0.1> : tensor<f32>
  %y = qnn.dense %x, %w, %z, %z, %s, %s : (tensor<1x8xui8>, tensor<4x8xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<1x4xi32>
  func.return %y : tensor<1x4xi32>
}
