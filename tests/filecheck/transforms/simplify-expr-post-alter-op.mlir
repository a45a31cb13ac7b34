// RUN: relay-opt %s -p 'simplify-expr-post-alter-op' --split-input-file | filecheck %s

// Identities, reshapes, casts and clips simplify; x + x, transposes and *_like ops are left
// (they are SimplifyExpr's other rewrites).
// CHECK-LABEL: func.func @post(
// CHECK-NEXT{LITERAL}: %0 = relay.reshape %x {newshape = [3, 4]} : (tensor<2x6xf32>) -> tensor<3x4xf32>
// CHECK-NEXT{LITERAL}: %1 = relay.add %x, %x : (tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<2x6xf32>
// CHECK-NEXT{LITERAL}: %2 = relay.transpose %x {axes = [1, 0]} : (tensor<2x6xf32>) -> tensor<6x2xf32>
// CHECK-NEXT{LITERAL}: %3 = relay.zeros_like %x : (tensor<2x6xf32>) -> tensor<2x6xf32>
// CHECK-NEXT{LITERAL}: %4 = relay.clip %i {a_min = 0.0, a_max = 255.0} : (tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT{LITERAL}: func.return %0, %1, %2, %3, %4 : tensor<3x4xf32>, tensor<2x6xf32>, tensor<6x2xf32>, tensor<2x6xf32>, tensor<4xi32>
func.func @post(%x: tensor<2x6xf32>, %i: tensor<4xi32>) -> (tensor<3x4xf32>, tensor<2x6xf32>, tensor<6x2xf32>, tensor<2x6xf32>, tensor<4xi32>) {
  %z = relay.constant dense<0.0> : tensor<f32>
  %0 = relay.add %x, %z : (tensor<2x6xf32>, tensor<f32>) -> tensor<2x6xf32>
  %1 = relay.reshape %0 {newshape = [12]} : (tensor<2x6xf32>) -> tensor<12xf32>
  %2 = relay.reshape %1 {newshape = [3, 4]} : (tensor<12xf32>) -> tensor<3x4xf32>
  %3 = relay.add %x, %x : (tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<2x6xf32>
  %4 = relay.transpose %x {axes = [1, 0]} : (tensor<2x6xf32>) -> tensor<6x2xf32>
  %5 = relay.zeros_like %x : (tensor<2x6xf32>) -> tensor<2x6xf32>
  %6 = relay.clip %i {a_min = 0.0, a_max = 255.0} : (tensor<4xi32>) -> tensor<4xi32>
  %7 = relay.cast %6 {dtype = "uint8"} : (tensor<4xi32>) -> tensor<4xui8>
  %8 = relay.cast %7 {dtype = "int32"} : (tensor<4xui8>) -> tensor<4xi32>
  func.return %2, %3, %4, %5, %8 : tensor<3x4xf32>, tensor<2x6xf32>, tensor<6x2xf32>, tensor<2x6xf32>, tensor<4xi32>
}
