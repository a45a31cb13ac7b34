// RUN: relay-opt %s -p canonicalize-ops --split-input-file | filecheck %s

// CHECK-LABEL: func.func @nchw
// CHECK-NEXT:    %[[E:.*]] = relay.expand_dims %b {axis = 1, num_newaxis = 2} : (tensor<4xf32>) -> tensor<4x1x1xf32>
// CHECK-NEXT:    %y = relay.add %x, %[[E]] : (tensor<1x4x8x8xf32>, tensor<4x1x1xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT:    func.return %y
func.func @nchw(%x: tensor<1x4x8x8xf32>, %b: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  %y = relay.nn.bias_add %x, %b : (tensor<1x4x8x8xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return %y : tensor<1x4x8x8xf32>
}

// -----

// Last axis (negative or not): a plain broadcasting add.
// CHECK-LABEL: func.func @last
// CHECK-NEXT:    %y = relay.add %x, %b : (tensor<2x10xf32>, tensor<10xf32>) -> tensor<2x10xf32>
// CHECK-NEXT:    %z = relay.add %y, %b : (tensor<2x10xf32>, tensor<10xf32>) -> tensor<2x10xf32>
// CHECK-NEXT:    func.return %z
func.func @last(%x: tensor<2x10xf32>, %b: tensor<10xf32>) -> tensor<2x10xf32> {
  %y = relay.nn.bias_add %x, %b {axis = -1} : (tensor<2x10xf32>, tensor<10xf32>) -> tensor<2x10xf32>
  %z = relay.nn.bias_add %y, %b {axis = 1} : (tensor<2x10xf32>, tensor<10xf32>) -> tensor<2x10xf32>
  func.return %z : tensor<2x10xf32>
}

// -----

// NHWC-style axis 3 of 4 needs nothing; axis 0 of 3 needs two new axes.
// CHECK-LABEL: func.func @axes
// CHECK-NEXT:    %{{.*}} = relay.add %x, %c : (tensor<1x8x8x4xf32>, tensor<4xf32>) -> tensor<1x8x8x4xf32>
// CHECK-NEXT:    %[[E:.*]] = relay.expand_dims %d {axis = 1, num_newaxis = 2} : (tensor<5xf32>) -> tensor<5x1x1xf32>
// CHECK-NEXT:    %{{.*}} = relay.add %y, %[[E]] : (tensor<5x2x3xf32>, tensor<5x1x1xf32>) -> tensor<5x2x3xf32>
func.func @axes(%x: tensor<1x8x8x4xf32>, %c: tensor<4xf32>, %y: tensor<5x2x3xf32>, %d: tensor<5xf32>) -> (tensor<1x8x8x4xf32>, tensor<5x2x3xf32>) {
  %0 = relay.nn.bias_add %x, %c {axis = 3} : (tensor<1x8x8x4xf32>, tensor<4xf32>) -> tensor<1x8x8x4xf32>
  %1 = relay.nn.bias_add %y, %d {axis = 0} : (tensor<5x2x3xf32>, tensor<5xf32>) -> tensor<5x2x3xf32>
  func.return %0, %1 : tensor<1x8x8x4xf32>, tensor<5x2x3xf32>
}
