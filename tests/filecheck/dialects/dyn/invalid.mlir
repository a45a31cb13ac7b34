// RUN: relay-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// The shape operand's length is the rank: it must be static.
// CHECK: dyn.reshape: newshape must be a 1-D tensor of static length, got tensor<?xi64>
func.func @f(%x: tensor<2x3xf32>, %s: tensor<?xi64>) -> tensor<?x?xf32> {
  %r = dyn.reshape %x, %s : (tensor<2x3xf32>, tensor<?xi64>) -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}

// -----

// CHECK: dyn.tile: reps must hold integers, got tensor<2xf32>
func.func @f(%x: tensor<2x3xf32>, %s: tensor<2xf32>) -> tensor<?x?xf32> {
  %r = dyn.tile %x, %s : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}

// -----

// A result more static than Relay's type relation gives is a mismatch.
// CHECK: dyn.broadcast_to: result 0 has type tensor<2x3xf32> but the operands (tensor<2x3xf32>, tensor<2xi64>) give tensor<?x?xf32>
func.func @f(%x: tensor<2x3xf32>, %s: tensor<2xi64>) -> tensor<2x3xf32> {
  %r = dyn.broadcast_to %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// -----

// CHECK: dyn.strided_slice: begin, end and strides must have the same length
func.func @f(%x: tensor<2x3xf32>, %b: tensor<1xi64>, %e: tensor<2xi64>) -> tensor<?x3xf32> {
  %r = dyn.strided_slice %x, %b, %e, %b : (tensor<2x3xf32>, tensor<1xi64>, tensor<2xi64>, tensor<1xi64>) -> tensor<?x3xf32>
  func.return %r : tensor<?x3xf32>
}

// -----

// CHECK: dyn.nn.pad: pad_width must be a [2, 2] tensor, got tensor<3x2xi64>
func.func @f(%x: tensor<2x3xf32>, %w: tensor<3x2xi64>, %v: tensor<f32>) -> tensor<?x?xf32> {
  %r = dyn.nn.pad %x, %w, %v : (tensor<2x3xf32>, tensor<3x2xi64>, tensor<f32>) -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}

// -----

// CHECK: dyn.image.resize2d: coordinate_transformation_mode 'bogus' is not one of
func.func @f(%x: tensor<1x2x4x4xf32>, %s: tensor<2xi64>, %roi: tensor<4xf32>) -> tensor<1x2x?x?xf32> {
  %r = dyn.image.resize2d %x, %s, %roi {coordinate_transformation_mode = "bogus"} : (tensor<1x2x4x4xf32>, tensor<2xi64>, tensor<4xf32>) -> tensor<1x2x?x?xf32>
  func.return %r : tensor<1x2x?x?xf32>
}
