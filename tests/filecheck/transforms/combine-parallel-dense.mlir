// RUN: relay-opt %s -p 'combine-parallel-dense{min-num-branches=2}' --split-input-file | filecheck %s

// Seed 002's example (to-batch, the default): stack, batch_matmul, split, squeeze.
// CHECK-LABEL: func.func @seed(
// CHECK-NEXT{LITERAL}: %0 = relay.stack %x, %x : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT{LITERAL}: %1 = relay.stack %w1, %w2 : (tensor<5x4xf32>, tensor<5x4xf32>) -> tensor<2x5x4xf32>
// CHECK-NEXT{LITERAL}: %2 = relay.nn.batch_matmul %0, %1 {transpose_b = true} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT{LITERAL}: %3, %4 = relay.split %2 {indices_or_sections = 2} : (tensor<2x3x5xf32>) -> (tensor<1x3x5xf32>, tensor<1x3x5xf32>)
// CHECK-NEXT{LITERAL}: %5 = relay.squeeze %3 {axis = [0]} : (tensor<1x3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT{LITERAL}: %6 = relay.squeeze %4 {axis = [0]} : (tensor<1x3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT{LITERAL}: func.return %5, %6 : tensor<3x5xf32>, tensor<3x5xf32>
func.func @seed(%x: tensor<3x4xf32>, %w1: tensor<5x4xf32>, %w2: tensor<5x4xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>) {
  %0 = relay.nn.dense %x, %w1 : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
  %1 = relay.nn.dense %x, %w2 : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
  func.return %0, %1 : tensor<3x5xf32>, tensor<3x5xf32>
}

// -----

// A vector bias gets a leading unit axis before the stack; the dense of another width is left alone.
// CHECK-LABEL: func.func @bias(
// CHECK-NEXT{LITERAL}: %0 = relay.stack %x, %x : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT{LITERAL}: %1 = relay.stack %w1, %w2 : (tensor<5x4xf32>, tensor<5x4xf32>) -> tensor<2x5x4xf32>
// CHECK-NEXT{LITERAL}: %2 = relay.nn.batch_matmul %0, %1 {transpose_b = true} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT{LITERAL}: %3 = relay.expand_dims %b1 {axis = 0} : (tensor<5xf32>) -> tensor<1x5xf32>
// CHECK-NEXT{LITERAL}: %4 = relay.expand_dims %b2 {axis = 0} : (tensor<5xf32>) -> tensor<1x5xf32>
// CHECK-NEXT{LITERAL}: %5 = relay.stack %3, %4 : (tensor<1x5xf32>, tensor<1x5xf32>) -> tensor<2x1x5xf32>
// CHECK-NEXT{LITERAL}: %6 = relay.add %2, %5 : (tensor<2x3x5xf32>, tensor<2x1x5xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT{LITERAL}: %7, %8 = relay.split %6 {indices_or_sections = 2} : (tensor<2x3x5xf32>) -> (tensor<1x3x5xf32>, tensor<1x3x5xf32>)
// CHECK-NEXT{LITERAL}: %9 = relay.squeeze %7 {axis = [0]} : (tensor<1x3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT{LITERAL}: %10 = relay.squeeze %8 {axis = [0]} : (tensor<1x3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT{LITERAL}: %11 = relay.nn.dense %x, %w3 : (tensor<3x4xf32>, tensor<6x4xf32>) -> tensor<3x6xf32>
// CHECK-NEXT{LITERAL}: func.return %9, %10, %11 : tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x6xf32>
func.func @bias(%x: tensor<3x4xf32>, %w1: tensor<5x4xf32>, %w2: tensor<5x4xf32>, %w3: tensor<6x4xf32>, %b1: tensor<5xf32>, %b2: tensor<5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x6xf32>) {
  %0 = relay.nn.dense %x, %w1 : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
  %1 = relay.add %0, %b1 : (tensor<3x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  %2 = relay.nn.dense %x, %w2 : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
  %3 = relay.add %2, %b2 : (tensor<3x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  %4 = relay.nn.dense %x, %w3 : (tensor<3x4xf32>, tensor<6x4xf32>) -> tensor<3x6xf32>
  func.return %1, %3, %4 : tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x6xf32>
}
