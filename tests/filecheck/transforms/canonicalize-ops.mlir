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

// -----

// A two-operand einsum that is a batched matrix product: views around nn.batch_matmul, the
// operand already (batch, summed, columns) read with transpose_b = false (MaxViT's attention).
// CHECK-LABEL: func.func @einsum_attention
// CHECK-NEXT:    %[[Q:.*]] = relay.reshape %q {newshape = [2, 5, 8]} : (tensor<1x2x5x8xf32>) -> tensor<2x5x8xf32>
// CHECK-NEXT:    %[[K:.*]] = relay.reshape %k {newshape = [2, 6, 8]} : (tensor<1x2x6x8xf32>) -> tensor<2x6x8xf32>
// CHECK-NEXT:    %[[S:.*]] = relay.nn.batch_matmul %[[Q]], %[[K]] {transpose_b = true} : (tensor<2x5x8xf32>, tensor<2x6x8xf32>) -> tensor<2x5x6xf32>
// CHECK-NEXT:    %s = relay.reshape %[[S]] {newshape = [1, 2, 5, 6]} : (tensor<2x5x6xf32>) -> tensor<1x2x5x6xf32>
// CHECK-NEXT:    %[[P:.*]] = relay.reshape %s {newshape = [2, 5, 6]} : (tensor<1x2x5x6xf32>) -> tensor<2x5x6xf32>
// CHECK-NEXT:    %[[V:.*]] = relay.reshape %v {newshape = [2, 6, 8]} : (tensor<1x2x6x8xf32>) -> tensor<2x6x8xf32>
// CHECK-NEXT:    %[[O:.*]] = relay.nn.batch_matmul %[[P]], %[[V]] : (tensor<2x5x6xf32>, tensor<2x6x8xf32>) -> tensor<2x5x8xf32>
// CHECK-NEXT:    %o = relay.reshape %[[O]] {newshape = [1, 2, 5, 8]}
// CHECK-NOT:     relay.einsum
func.func @einsum_attention(%q: tensor<1x2x5x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x2x5x8xf32> {
  %s = relay.einsum %q, %k {equation = "B G I D, B G J D -> B G I J"} : (tensor<1x2x5x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x5x6xf32>
  %o = relay.einsum %s, %v {equation = "bgij,bgjd->bgid"} : (tensor<1x2x5x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x5x8xf32>
  func.return %o : tensor<1x2x5x8xf32>
}

// -----

// Output letters in another order: a transpose after; a letter summed within one operand and
// an ellipsis stay einsum.
// CHECK-LABEL: func.func @einsum_orders
// CHECK:         %[[M:.*]] = relay.nn.batch_matmul
// CHECK:         relay.transpose %{{.*}} {axes = [1, 0]} : (tensor<3x5xf32>) -> tensor<5x3xf32>
// CHECK:         relay.einsum %x, %y {equation = "ij,jk->k"}
// CHECK:         relay.einsum %b1, %b2 {equation = "...ij,...jk->...ik"}
func.func @einsum_orders(%x: tensor<3x4xf32>, %y: tensor<4x5xf32>, %b1: tensor<1x3x4xf32>, %b2: tensor<2x4x5xf32>) -> (tensor<5x3xf32>, tensor<5xf32>, tensor<2x3x5xf32>) {
  %t = relay.einsum %x, %y {equation = "ij,jk->ki"} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<5x3xf32>
  %s = relay.einsum %x, %y {equation = "ij,jk->k"} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<5xf32>
  %b = relay.einsum %b1, %b2 {equation = "...ij,...jk->...ik"} : (tensor<1x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  func.return %t, %s, %b : tensor<5x3xf32>, tensor<5xf32>, tensor<2x3x5xf32>
}
