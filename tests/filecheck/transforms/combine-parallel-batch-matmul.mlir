// RUN: relay-opt %s -p 'combine-parallel-batch-matmul{min-num-branches=2}' --split-input-file | filecheck %s

// Weights concatenated along axis 1, biases along the last axis, columns sliced back.
// CHECK-LABEL: func.func @bias(
// CHECK-NEXT{LITERAL}: %0 = relay.concatenate %w1, %w2 {axis = 1} : (tensor<2x5x4xf32>, tensor<2x6x4xf32>) -> tensor<2x11x4xf32>
// CHECK-NEXT{LITERAL}: %1 = relay.nn.batch_matmul %x, %0 {transpose_b = true} : (tensor<2x3x4xf32>, tensor<2x11x4xf32>) -> tensor<2x3x11xf32>
// CHECK-NEXT{LITERAL}: %2 = relay.concatenate %b1, %b2 {axis = -1} : (tensor<5xf32>, tensor<6xf32>) -> tensor<11xf32>
// CHECK-NEXT{LITERAL}: %3 = relay.add %1, %2 : (tensor<2x3x11xf32>, tensor<11xf32>) -> tensor<2x3x11xf32>
// CHECK-NEXT{LITERAL}: %4 = relay.strided_slice %3 {begin = [0, 0, 0], end = [-1, -1, 5], strides = [1, 1, 1], slice_mode = "size"} : (tensor<2x3x11xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT{LITERAL}: %5 = relay.strided_slice %3 {begin = [0, 0, 5], end = [-1, -1, 6], strides = [1, 1, 1], slice_mode = "size"} : (tensor<2x3x11xf32>) -> tensor<2x3x6xf32>
// CHECK-NEXT{LITERAL}: func.return %4, %5 : tensor<2x3x5xf32>, tensor<2x3x6xf32>
func.func @bias(%x: tensor<2x3x4xf32>, %w1: tensor<2x5x4xf32>, %w2: tensor<2x6x4xf32>, %b1: tensor<5xf32>, %b2: tensor<6xf32>) -> (tensor<2x3x5xf32>, tensor<2x3x6xf32>) {
  %0 = relay.nn.batch_matmul %x, %w1 {transpose_b = true} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32>
  %1 = relay.add %0, %b1 : (tensor<2x3x5xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
  %2 = relay.nn.batch_matmul %x, %w2 {transpose_b = true} : (tensor<2x3x4xf32>, tensor<2x6x4xf32>) -> tensor<2x3x6xf32>
  %3 = relay.add %2, %b2 : (tensor<2x3x6xf32>, tensor<6xf32>) -> tensor<2x3x6xf32>
  func.return %1, %3 : tensor<2x3x5xf32>, tensor<2x3x6xf32>
}

// -----

// Relay combines only transpose_a=false, transpose_b=true.
// CHECK-LABEL: func.func @plain(
// CHECK-NEXT{LITERAL}: %0 = relay.nn.batch_matmul %x, %w1 : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT{LITERAL}: %1 = relay.nn.batch_matmul %x, %w2 : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT{LITERAL}: func.return %0, %1 : tensor<2x3x5xf32>, tensor<2x3x5xf32>
func.func @plain(%x: tensor<2x3x4xf32>, %w1: tensor<2x4x5xf32>, %w2: tensor<2x4x5xf32>) -> (tensor<2x3x5xf32>, tensor<2x3x5xf32>) {
  %0 = relay.nn.batch_matmul %x, %w1 : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %1 = relay.nn.batch_matmul %x, %w2 : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  func.return %0, %1 : tensor<2x3x5xf32>, tensor<2x3x5xf32>
}
