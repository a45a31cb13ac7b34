// RUN: relay-opt %s -p dynamic-to-static --split-input-file | filecheck %s

// Constant shape operands: every dyn op becomes its static op, types become static.
// CHECK-LABEL: func.func @consts
// CHECK-SAME:    -> tensor<4x4xf32>
// CHECK-NEXT:    %y = relay.reshape %x {newshape = [3, 2]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    %p = relay.nn.pad %y, %v {pad_width = [[1, 0], [0, 2]]} : (tensor<3x2xf32>, tensor<f32>) -> tensor<4x4xf32>
// CHECK-NEXT:    func.return %p
func.func @consts(%x: tensor<2x3xf32>, %v: tensor<f32>) -> tensor<?x?xf32> {
  %s = relay.constant dense<[3, 2]> : tensor<2xi64>
  %y = dyn.reshape %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %w = relay.constant dense<[[1, 0], [0, 2]]> : tensor<2x2xi64>
  %p = dyn.nn.pad %y, %w, %v : (tensor<?x?xf32>, tensor<2x2xi64>, tensor<f32>) -> tensor<?x?xf32>
  func.return %p : tensor<?x?xf32>
}

// -----

// shape_of of a static tensor folds first; the static result then makes the next shape_of
// static too (Relay's DynamicToStatic re-infers types between ops).
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %a = relay.reshape %x {newshape = [4, 6]} : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
// CHECK-NEXT:    %b = relay.tile %a {reps = [4, 6]} : (tensor<4x6xf32>) -> tensor<16x36xf32>
// CHECK-NEXT:    func.return %b : tensor<16x36xf32>
func.func @chain(%x: tensor<2x3x4xf32>, %y: tensor<4x6xf32>) -> tensor<?x?xf32> {
  %s = relay.shape_of %y {dtype = "int64"} : (tensor<4x6xf32>) -> tensor<2xi64>
  %a = dyn.reshape %x, %s : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %t = relay.shape_of %a {dtype = "int64"} : (tensor<?x?xf32>) -> tensor<2xi64>
  %b = dyn.tile %a, %t : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  func.return %b : tensor<?x?xf32>
}

// -----

// A shape known only at run time stays dynamic; the rest of the function is untouched.
// CHECK-LABEL: func.func @runtime
// CHECK-NEXT:    %y = dyn.reshape %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
// CHECK-NEXT:    func.return %y
func.func @runtime(%x: tensor<2x3xf32>, %s: tensor<2xi64>) -> tensor<?x?xf32> {
  %y = dyn.reshape %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// -----

// Every other dyn op with constant operands.
// CHECK-LABEL: func.func @others
// CHECK-NEXT:    %b = relay.broadcast_to %x {shape = [2, 2, 3]} : (tensor<2x3xf32>) -> tensor<2x2x3xf32>
// CHECK-NEXT:    %s = relay.strided_slice %x {begin = [1], end = [2], strides = [1]} : (tensor<2x3xf32>) -> tensor<1x3xf32>
// CHECK-NEXT:    %e = relay.expand_dims %x {axis = 1} : (tensor<2x3xf32>) -> tensor<2x1x3xf32>
// CHECK-NEXT:    %q = relay.squeeze %e {axis = [1]} : (tensor<2x1x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %f = relay.full %v {shape = [2, 3]} : (tensor<f32>) -> tensor<2x3xf32>
// zeros and ones of a static shape fold to constants (the pass ends with fold-constant, as Relay's)
// CHECK-NEXT:    %z = relay.constant dense<0> : tensor<2x3xi32>
// CHECK-NEXT:    %o = relay.constant dense<1> : tensor<2x3xi32>
func.func @others(%x: tensor<2x3xf32>, %v: tensor<f32>) -> (tensor<?x?x?xf32>, tensor<?x3xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xi32>, tensor<?x?xi32>) {
  %shape3 = relay.constant dense<[2, 2, 3]> : tensor<3xi64>
  %b = dyn.broadcast_to %x, %shape3 : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  %one = relay.constant dense<[1]> : tensor<1xi64>
  %two = relay.constant dense<[2]> : tensor<1xi64>
  %s = dyn.strided_slice %x, %one, %two, %one : (tensor<2x3xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x3xf32>
  %ax = relay.constant dense<1> : tensor<i64>
  %e = dyn.expand_dims %x, %ax : (tensor<2x3xf32>, tensor<i64>) -> tensor<?x?x?xf32>
  %q = dyn.squeeze %e, %one : (tensor<?x?x?xf32>, tensor<1xi64>) -> tensor<?x?xf32>
  %shape2 = relay.constant dense<[2, 3]> : tensor<2xi64>
  %f = dyn.full %v, %shape2 : (tensor<f32>, tensor<2xi64>) -> tensor<?x?xf32>
  %z = dyn.zeros %shape2 {dtype = "int32"} : (tensor<2xi64>) -> tensor<?x?xi32>
  %o = dyn.ones %shape2 {dtype = "int32"} : (tensor<2xi64>) -> tensor<?x?xi32>
  func.return %b, %s, %q, %f, %z, %o : tensor<?x?x?xf32>, tensor<?x3xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xi32>, tensor<?x?xi32>
}

// -----

// The image ops: run-time scales and sizes as constants.
// CHECK-LABEL: func.func @image
// CHECK-NEXT:    %u = relay.nn.upsampling %x {scale_h = 2.0, scale_w = 3.0} : (tensor<1x2x4x4xf32>) -> tensor<1x2x8x12xf32>
// CHECK-NEXT:    %r = relay.image.resize2d %x {size = [6, 5], method = "cubic"} : (tensor<1x2x4x4xf32>) -> tensor<1x2x6x5xf32>
func.func @image(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x?x?xf32>, tensor<1x2x?x?xf32>) {
  %sh = relay.constant dense<2.0> : tensor<f32>
  %sw = relay.constant dense<3.0> : tensor<f32>
  %u = dyn.nn.upsampling %x, %sh, %sw : (tensor<1x2x4x4xf32>, tensor<f32>, tensor<f32>) -> tensor<1x2x?x?xf32>
  %size = relay.constant dense<[6, 5]> : tensor<2xi64>
  %roi = relay.constant dense<0.0> : tensor<4xf32>
  %r = dyn.image.resize2d %x, %size, %roi {method = "cubic"} : (tensor<1x2x4x4xf32>, tensor<2xi64>, tensor<4xf32>) -> tensor<1x2x?x?xf32>
  func.return %u, %r : tensor<1x2x?x?xf32>, tensor<1x2x?x?xf32>
}

// -----

// topk's k and one_hot's depth.
// CHECK-LABEL: func.func @topk_one_hot
// CHECK-NEXT:    %v, %i = relay.topk %x {k = 2} : (tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x2xi32>)
// CHECK-NEXT:    %o = relay.one_hot %ix, %on, %off {depth = 2, dtype = "float32"} : (tensor<3xi64>, tensor<f32>, tensor<f32>) -> tensor<3x2xf32>
func.func @topk_one_hot(%x: tensor<2x3xf32>, %ix: tensor<3xi64>, %on: tensor<f32>, %off: tensor<f32>) -> (tensor<2x?xf32>, tensor<2x?xi32>, tensor<3x?xf32>) {
  %k = relay.constant dense<2> : tensor<i64>
  %v, %i = dyn.topk %x, %k : (tensor<2x3xf32>, tensor<i64>) -> (tensor<2x?xf32>, tensor<2x?xi32>)
  %o = dyn.one_hot %ix, %on, %off, %k {dtype = "float32"} : (tensor<3xi64>, tensor<f32>, tensor<f32>, tensor<i64>) -> tensor<3x?xf32>
  func.return %v, %i, %o : tensor<2x?xf32>, tensor<2x?xi32>, tensor<3x?xf32>
}
