// RUN: relay-opt %s -p sink-transpose --split-input-file | filecheck %s

// ConvNeXt's block end: the layer scale (a constant per channel) and the residual add on
// transposed NHWC tensors; sunk, the transposes cancel with the transform back to NHWC.
// CHECK-LABEL: func.func @layer_scale_and_residual
// CHECK-NEXT:    %0 = relay.constant dense<[[[[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]]]]> : tensor<1x1x1x4xf32>
// CHECK-NEXT:    %1 = relay.multiply %x, %0 : (tensor<1x2x3x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x3x4xf32>
// CHECK-NEXT:    %o = relay.add %1, %y : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
// CHECK-NEXT:    func.return %o
func.func @layer_scale_and_residual(%x: tensor<1x2x3x4xf32>, %y: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %a = relay.transpose %x {axes = [0, 3, 1, 2]} : (tensor<1x2x3x4xf32>) -> tensor<1x4x2x3xf32>
  %g = relay.constant dense<[[[1.0]], [[2.0]], [[3.0]], [[4.0]]]> : tensor<4x1x1xf32>
  %m = relay.multiply %a, %g : (tensor<1x4x2x3xf32>, tensor<4x1x1xf32>) -> tensor<1x4x2x3xf32>
  %b = relay.layout_transform %y {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x2x3x4xf32>) -> tensor<1x4x2x3xf32>
  %s = relay.add %m, %b : (tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>) -> tensor<1x4x2x3xf32>
  %o = relay.layout_transform %s {src_layout = "NCHW", dst_layout = "NHWC"} : (tensor<1x4x2x3xf32>) -> tensor<1x2x3x4xf32>
  func.return %o : tensor<1x2x3x4xf32>
}

// -----

// The constant first (subtract keeps its operand order); the transpose stays at the end.
// CHECK-LABEL: func.func @constant_first
// CHECK-NEXT:    %0 = relay.constant dense<{{.*}}> : tensor<1x3x2xf32>
// CHECK-NEXT:    %1 = relay.subtract %0, %x : (tensor<1x3x2xf32>, tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
// CHECK-NEXT:    %s = relay.transpose %1 {axes = [0, 2, 1]} : (tensor<2x3x2xf32>) -> tensor<2x2x3xf32>
// CHECK-NEXT:    func.return %s
func.func @constant_first(%x: tensor<2x3x2xf32>) -> tensor<2x2x3xf32> {
  %a = relay.transpose %x {axes = [0, 2, 1]} : (tensor<2x3x2xf32>) -> tensor<2x2x3xf32>
  %c = relay.constant dense<[[0.5, 1.5, 2.5], [-1.0, -2.0, -3.0]]> : tensor<2x3xf32>
  %s = relay.subtract %c, %a : (tensor<2x3xf32>, tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
  func.return %s : tensor<2x2x3xf32>
}

// -----

// Kept: a transpose with another user (sinking would add a transpose), two different
// permutations, a transposed operand the op broadcasts, and an operand that is neither a
// transpose nor a constant.
// CHECK-LABEL: func.func @kept
// CHECK-NEXT:    %a = relay.transpose %x
// CHECK-NEXT:    %s = relay.add %a, %a
// CHECK-NEXT:    %b = relay.transpose %y {axes = [1, 0, 2]}
// CHECK-NEXT:    %c = relay.transpose %y {axes = [0, 2, 1]}
// CHECK-NEXT:    %d = relay.multiply %b, %c
// CHECK-NEXT:    %e = relay.transpose %z
// CHECK-NEXT:    %f = relay.add %e, %w
// CHECK-NEXT:    %h = relay.transpose %y {axes = [2, 1, 0]}
// CHECK-NEXT:    %i = relay.add %h, %v
func.func @kept(%x: tensor<2x2xf32>, %y: tensor<2x2x2xf32>, %z: tensor<1x2xf32>, %w: tensor<3x2x2xf32>, %v: tensor<2x2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2x2xf32>, tensor<3x2x2xf32>, tensor<2x2x2xf32>) {
  %a = relay.transpose %x {axes = [1, 0]} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %s = relay.add %a, %a : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %b = relay.transpose %y {axes = [1, 0, 2]} : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %c = relay.transpose %y {axes = [0, 2, 1]} : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %d = relay.multiply %b, %c : (tensor<2x2x2xf32>, tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %e = relay.transpose %z {axes = [1, 0]} : (tensor<1x2xf32>) -> tensor<2x1xf32>
  %f = relay.add %e, %w : (tensor<2x1xf32>, tensor<3x2x2xf32>) -> tensor<3x2x2xf32>
  %h = relay.transpose %y {axes = [2, 1, 0]} : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %i = relay.add %h, %v : (tensor<2x2x2xf32>, tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  func.return %s, %d, %f, %i : tensor<2x2xf32>, tensor<2x2x2xf32>, tensor<3x2x2xf32>, tensor<2x2x2xf32>
}
