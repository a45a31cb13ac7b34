// RUN: relay-opt %s -p 'combine-parallel-dense{min-num-branches=2 to-batch=false}' --split-input-file | filecheck %s

// to-batch=false: one dense over the concatenated weights; width-1 operands are repeated.
// CHECK-LABEL: func.func @flat(
// CHECK-NEXT{LITERAL}: %0 = relay.concatenate %w1, %w2 : (tensor<5x4xf32>, tensor<10x4xf32>) -> tensor<15x4xf32>
// CHECK-NEXT{LITERAL}: %1 = relay.nn.dense %x, %0 {units = 15} : (tensor<3x4xf32>, tensor<15x4xf32>) -> tensor<3x15xf32>
// CHECK-NEXT{LITERAL}: %2 = relay.repeat %b2 {repeats = 10, axis = 0} : (tensor<1xf32>) -> tensor<10xf32>
// CHECK-NEXT{LITERAL}: %3 = relay.concatenate %b1, %2 : (tensor<5xf32>, tensor<10xf32>) -> tensor<15xf32>
// CHECK-NEXT{LITERAL}: %4 = relay.add %1, %3 : (tensor<3x15xf32>, tensor<15xf32>) -> tensor<3x15xf32>
// CHECK-NEXT{LITERAL}: %5 = relay.strided_slice %4 {begin = [0, 0], end = [-1, 5], strides = [1, 1], slice_mode = "size"} : (tensor<3x15xf32>) -> tensor<3x5xf32>
// CHECK-NEXT{LITERAL}: %6 = relay.strided_slice %4 {begin = [0, 5], end = [-1, 10], strides = [1, 1], slice_mode = "size"} : (tensor<3x15xf32>) -> tensor<3x10xf32>
// CHECK-NEXT{LITERAL}: func.return %5, %6 : tensor<3x5xf32>, tensor<3x10xf32>
func.func @flat(%x: tensor<3x4xf32>, %w1: tensor<5x4xf32>, %w2: tensor<10x4xf32>, %b1: tensor<5xf32>, %b2: tensor<1xf32>) -> (tensor<3x5xf32>, tensor<3x10xf32>) {
  %0 = relay.nn.dense %x, %w1 : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
  %1 = relay.add %0, %b1 : (tensor<3x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  %2 = relay.nn.dense %x, %w2 : (tensor<3x4xf32>, tensor<10x4xf32>) -> tensor<3x10xf32>
  %3 = relay.add %2, %b2 : (tensor<3x10xf32>, tensor<1xf32>) -> tensor<3x10xf32>
  func.return %1, %3 : tensor<3x5xf32>, tensor<3x10xf32>
}
