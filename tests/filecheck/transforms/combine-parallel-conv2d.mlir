// RUN: relay-opt %s -p 'combine-parallel-conv2d{min-num-branches=2}' --split-input-file | filecheck %s

// Seed 002's example: two 1x1 convolutions combine, the pool is left alone.
// CHECK-LABEL: func.func @seed(
// CHECK-NEXT{LITERAL}: %0 = relay.concatenate %w1, %w2 : (tensor<4x4x1x1xf32>, tensor<4x4x1x1xf32>) -> tensor<8x4x1x1xf32>
// CHECK-NEXT{LITERAL}: %1 = relay.nn.conv2d %x, %0 {channels = 8} : (tensor<1x4x16x16xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x16x16xf32>
// CHECK-NEXT{LITERAL}: %2 = relay.strided_slice %1 {begin = [0, 0], end = [-1, 4], strides = [1, 1], slice_mode = "size"} : (tensor<1x8x16x16xf32>) -> tensor<1x4x16x16xf32>
// CHECK-NEXT{LITERAL}: %3 = relay.strided_slice %1 {begin = [0, 4], end = [-1, 4], strides = [1, 1], slice_mode = "size"} : (tensor<1x8x16x16xf32>) -> tensor<1x4x16x16xf32>
// CHECK-NEXT{LITERAL}: %4 = relay.nn.max_pool2d %x {pool_size = [1, 1]} : (tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
// CHECK-NEXT{LITERAL}: func.return %2, %3, %4 : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>
func.func @seed(%x: tensor<1x4x16x16xf32>, %w1: tensor<4x4x1x1xf32>, %w2: tensor<4x4x1x1xf32>) -> (tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) {
  %0 = relay.nn.conv2d %x, %w1 : (tensor<1x4x16x16xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x16x16xf32>
  %1 = relay.nn.conv2d %x, %w2 : (tensor<1x4x16x16xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x16x16xf32>
  %2 = relay.nn.max_pool2d %x {pool_size = [1, 1]} : (tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  func.return %0, %1, %2 : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>
}

// -----

// Followers that agree in every branch combine (their per-channel operands concatenated along
// the channel axis); the add in only one branch stays after its slice.
// CHECK-LABEL: func.func @follow(
// CHECK-NEXT{LITERAL}: %0 = relay.concatenate %w1, %w2 : (tensor<4x4x1x1xf32>, tensor<8x4x1x1xf32>) -> tensor<12x4x1x1xf32>
// CHECK-NEXT{LITERAL}: %1 = relay.nn.conv2d %x, %0 {channels = 12} : (tensor<1x4x8x8xf32>, tensor<12x4x1x1xf32>) -> tensor<1x12x8x8xf32>
// CHECK-NEXT{LITERAL}: %2 = relay.concatenate %s1, %s2 : (tensor<4x1x1xf32>, tensor<8x1x1xf32>) -> tensor<12x1x1xf32>
// CHECK-NEXT{LITERAL}: %3 = relay.multiply %1, %2 : (tensor<1x12x8x8xf32>, tensor<12x1x1xf32>) -> tensor<1x12x8x8xf32>
// CHECK-NEXT{LITERAL}: %4 = relay.nn.relu %3 : (tensor<1x12x8x8xf32>) -> tensor<1x12x8x8xf32>
// CHECK-NEXT{LITERAL}: %5 = relay.strided_slice %4 {begin = [0, 0], end = [-1, 4], strides = [1, 1], slice_mode = "size"} : (tensor<1x12x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT{LITERAL}: %6 = relay.strided_slice %4 {begin = [0, 4], end = [-1, 8], strides = [1, 1], slice_mode = "size"} : (tensor<1x12x8x8xf32>) -> tensor<1x8x8x8xf32>
// CHECK-NEXT{LITERAL}: %7 = relay.add %6, %b : (tensor<1x8x8x8xf32>, tensor<8x1x1xf32>) -> tensor<1x8x8x8xf32>
// CHECK-NEXT{LITERAL}: func.return %5, %7 : tensor<1x4x8x8xf32>, tensor<1x8x8x8xf32>
func.func @follow(%x: tensor<1x4x8x8xf32>, %w1: tensor<4x4x1x1xf32>, %w2: tensor<8x4x1x1xf32>, %s1: tensor<4x1x1xf32>, %s2: tensor<8x1x1xf32>, %b: tensor<8x1x1xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x8x8x8xf32>) {
  %0 = relay.nn.conv2d %x, %w1 : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %1 = relay.multiply %0, %s1 : (tensor<1x4x8x8xf32>, tensor<4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %2 = relay.nn.relu %1 : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %3 = relay.nn.conv2d %x, %w2 : (tensor<1x4x8x8xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x8x8xf32>
  %4 = relay.multiply %3, %s2 : (tensor<1x8x8x8xf32>, tensor<8x1x1xf32>) -> tensor<1x8x8x8xf32>
  %5 = relay.nn.relu %4 : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %6 = relay.add %5, %b : (tensor<1x8x8x8xf32>, tensor<8x1x1xf32>) -> tensor<1x8x8x8xf32>
  func.return %2, %6 : tensor<1x4x8x8xf32>, tensor<1x8x8x8xf32>
}

// -----

// Different kernel sizes, strides or groups != 1 do not combine.
// CHECK-LABEL: func.func @apart(
// CHECK-NEXT{LITERAL}: %0 = relay.nn.conv2d %x, %w1 : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT{LITERAL}: %1 = relay.nn.conv2d %x, %w2 : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
// CHECK-NEXT{LITERAL}: %2 = relay.nn.conv2d %x, %w3 {groups = 2} : (tensor<1x4x8x8xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT{LITERAL}: %3 = relay.nn.conv2d %x, %w4 {groups = 2} : (tensor<1x4x8x8xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT{LITERAL}: func.return %0, %1, %2, %3 : tensor<1x4x8x8xf32>, tensor<1x4x6x6xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>
func.func @apart(%x: tensor<1x4x8x8xf32>, %w1: tensor<4x4x1x1xf32>, %w2: tensor<4x4x3x3xf32>, %w3: tensor<4x2x1x1xf32>, %w4: tensor<4x2x1x1xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x6x6xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) {
  %0 = relay.nn.conv2d %x, %w1 : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %1 = relay.nn.conv2d %x, %w2 : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  %2 = relay.nn.conv2d %x, %w3 {groups = 2} : (tensor<1x4x8x8xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x8x8xf32>
  %3 = relay.nn.conv2d %x, %w4 {groups = 2} : (tensor<1x4x8x8xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x8x8xf32>
  func.return %0, %1, %2, %3 : tensor<1x4x8x8xf32>, tensor<1x4x6x6xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>
}
