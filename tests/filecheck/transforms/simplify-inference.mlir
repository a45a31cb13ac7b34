// RUN: relay-opt %s -p simplify-inference --split-input-file | filecheck %s

// The seed example: batch_norm(.0) -> dropout(.0), 2-D, axis 1 (last: no expand_dims).
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[EPS:.*]] = relay.constant dense<1.000000e-05> : tensor<f32>
// CHECK-NEXT:    %[[ONE:.*]] = relay.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[VE:.*]] = relay.add %b, %[[EPS]] : (tensor<10xf32>, tensor<f32>) -> tensor<10xf32>
// CHECK-NEXT:    %[[SQ:.*]] = relay.sqrt %[[VE]]
// CHECK-NEXT:    %[[INV:.*]] = relay.divide %[[ONE]], %[[SQ]] : (tensor<f32>, tensor<10xf32>) -> tensor<10xf32>
// CHECK-NEXT:    %[[SC:.*]] = relay.multiply %[[INV]], %x1
// CHECK-NEXT:    %[[NM:.*]] = relay.negative %a
// CHECK-NEXT:    %[[SH0:.*]] = relay.multiply %[[NM]], %[[SC]]
// CHECK-NEXT:    %[[SH:.*]] = relay.add %[[SH0]], %y
// CHECK-NEXT:    %[[M:.*]] = relay.multiply %x, %[[SC]] : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
// CHECK-NEXT:    %[[R:.*]] = relay.add %[[M]], %[[SH]] : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<1x10xf32>
func.func @main(%x: tensor<1x10xf32>, %x1: tensor<10xf32>, %y: tensor<10xf32>, %a: tensor<10xf32>, %b: tensor<10xf32>) -> tensor<1x10xf32> {
  %0, %1, %2 = relay.nn.batch_norm %x, %x1, %y, %a, %b : (tensor<1x10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>) -> (tensor<1x10xf32>, tensor<10xf32>, tensor<10xf32>)
  %3, %4 = relay.nn.dropout %0 : (tensor<1x10xf32>) -> (tensor<1x10xf32>, tensor<1x10xf32>)
  func.return %3 : tensor<1x10xf32>
}

// -----

// 4-D NCHW, scale=false (no gamma), epsilon 2e-5: scale and shift get two trailing unit axes.
// CHECK-LABEL: func.func @nchw
// CHECK-NEXT:    %[[EPS:.*]] = relay.constant dense<2.000000e-05> : tensor<f32>
// CHECK-NEXT:    %[[ONE:.*]] = relay.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[VE:.*]] = relay.add %v, %[[EPS]]
// CHECK-NEXT:    %[[SQ:.*]] = relay.sqrt %[[VE]]
// CHECK-NEXT:    %[[INV:.*]] = relay.divide %[[ONE]], %[[SQ]]
// CHECK-NEXT:    %[[NM:.*]] = relay.negative %m
// CHECK-NEXT:    %[[SH0:.*]] = relay.multiply %[[NM]], %[[INV]]
// CHECK-NEXT:    %[[SH:.*]] = relay.add %[[SH0]], %be
// CHECK-NEXT:    %[[ESC:.*]] = relay.expand_dims %[[INV]] {axis = 1, num_newaxis = 2} : (tensor<3xf32>) -> tensor<3x1x1xf32>
// CHECK-NEXT:    %[[ESH:.*]] = relay.expand_dims %[[SH]] {axis = 1, num_newaxis = 2} : (tensor<3xf32>) -> tensor<3x1x1xf32>
// CHECK-NEXT:    %[[MUL:.*]] = relay.multiply %x, %[[ESC]] : (tensor<2x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<2x3x4x4xf32>
// CHECK-NEXT:    %[[R:.*]] = relay.add %[[MUL]], %[[ESH]]
// CHECK-NEXT:    func.return %[[R]]
func.func @nchw(%x: tensor<2x3x4x4xf32>, %g: tensor<3xf32>, %be: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x4x4xf32> {
  %0, %1, %2 = relay.nn.batch_norm %x, %g, %be, %m, %v {epsilon = 2.0e-05, scale = false} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  func.return %0 : tensor<2x3x4x4xf32>
}

// -----

// axis 0 of a 2-D tensor, center=false (no beta add), float64 scalars.
// CHECK-LABEL: func.func @axis0
// CHECK-NEXT:    %[[EPS:.*]] = relay.constant dense<1.000000e-05> : tensor<f64>
// CHECK-NEXT:    %[[ONE:.*]] = relay.constant dense<1.000000e+00> : tensor<f64>
// CHECK-NEXT:    %[[VE:.*]] = relay.add %v, %[[EPS]]
// CHECK-NEXT:    %[[SQ:.*]] = relay.sqrt %[[VE]]
// CHECK-NEXT:    %[[INV:.*]] = relay.divide %[[ONE]], %[[SQ]]
// CHECK-NEXT:    %[[SC:.*]] = relay.multiply %[[INV]], %g
// CHECK-NEXT:    %[[NM:.*]] = relay.negative %m
// CHECK-NEXT:    %[[SH:.*]] = relay.multiply %[[NM]], %[[SC]]
// CHECK-NEXT:    %[[ESC:.*]] = relay.expand_dims %[[SC]] {axis = 1} : (tensor<5xf64>) -> tensor<5x1xf64>
// CHECK-NEXT:    %[[ESH:.*]] = relay.expand_dims %[[SH]] {axis = 1} : (tensor<5xf64>) -> tensor<5x1xf64>
// CHECK-NEXT:    %[[MUL:.*]] = relay.multiply %x, %[[ESC]]
// CHECK-NEXT:    %[[R:.*]] = relay.add %[[MUL]], %[[ESH]]
// CHECK-NEXT:    func.return %[[R]]
func.func @axis0(%x: tensor<5x7xf64>, %g: tensor<5xf64>, %be: tensor<5xf64>, %m: tensor<5xf64>, %v: tensor<5xf64>) -> tensor<5x7xf64> {
  %0, %1, %2 = relay.nn.batch_norm %x, %g, %be, %m, %v {axis = 0, center = false} : (tensor<5x7xf64>, tensor<5xf64>, tensor<5xf64>, tensor<5xf64>, tensor<5xf64>) -> (tensor<5x7xf64>, tensor<5xf64>, tensor<5xf64>)
  func.return %0 : tensor<5x7xf64>
}

// -----

// Statistics results used, or a dropout mask used: left alone.
// CHECK-LABEL: func.func @kept
// CHECK-NEXT:    %0, %1, %2 = relay.nn.batch_norm
// CHECK-NEXT:    %3, %4 = relay.nn.dropout %0
// CHECK-NEXT:    func.return %3, %1, %4
func.func @kept(%x: tensor<1x10xf32>, %g: tensor<10xf32>) -> (tensor<1x10xf32>, tensor<10xf32>, tensor<1x10xf32>) {
  %0, %1, %2 = relay.nn.batch_norm %x, %g, %g, %g, %g : (tensor<1x10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>) -> (tensor<1x10xf32>, tensor<10xf32>, tensor<10xf32>)
  %3, %4 = relay.nn.dropout %0 : (tensor<1x10xf32>) -> (tensor<1x10xf32>, tensor<1x10xf32>)
  func.return %3, %1, %4 : tensor<1x10xf32>, tensor<10xf32>, tensor<1x10xf32>
}

// -----

// layer_norm over the last axis (default): no expand_dims for gamma and beta.
// CHECK-LABEL: func.func @ln
// CHECK-NEXT:    %[[MEAN:.*]] = relay.mean %x {axis = [1], keepdims = true} : (tensor<2x8xf32>) -> tensor<2x1xf32>
// CHECK-NEXT:    %[[C:.*]] = relay.subtract %x, %[[MEAN]]
// CHECK-NEXT:    %[[SQ:.*]] = relay.multiply %[[C]], %[[C]]
// CHECK-NEXT:    %[[VAR:.*]] = relay.mean %[[SQ]] {axis = [1], keepdims = true}
// CHECK-NEXT:    %[[EPS:.*]] = relay.constant dense<1.000000e-05> : tensor<f32>
// CHECK-NEXT:    %[[VE:.*]] = relay.add %[[VAR]], %[[EPS]]
// CHECK-NEXT:    %[[D:.*]] = relay.sqrt %[[VE]]
// CHECK-NEXT:    %[[N:.*]] = relay.divide %[[C]], %[[D]]
// CHECK-NEXT:    %[[G:.*]] = relay.multiply %[[N]], %g
// CHECK-NEXT:    %[[R:.*]] = relay.add %[[G]], %b
// CHECK-NEXT:    func.return %[[R]]
func.func @ln(%x: tensor<2x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  %0 = relay.nn.layer_norm %x, %g, %b : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}

// -----

// layer_norm over axis 1 of 3 with center=false: gamma expanded by one axis, no beta.
// CHECK-LABEL: func.func @ln_axis
// CHECK:         relay.mean %x {axis = [1], keepdims = true} : (tensor<2x4x3xf32>) -> tensor<2x1x3xf32>
// CHECK:         %[[N:.*]] = relay.divide
// CHECK-NEXT:    %[[EG:.*]] = relay.expand_dims %g {axis = 1} : (tensor<4xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[R:.*]] = relay.multiply %[[N]], %[[EG]]
// CHECK-NEXT:    func.return %[[R]]
func.func @ln_axis(%x: tensor<2x4x3xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4x3xf32> {
  %0 = relay.nn.layer_norm %x, %g, %b {axis = -2, center = false, epsilon = 0.001} : (tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3xf32>
  func.return %0 : tensor<2x4x3xf32>
}

// -----

// Relay's function passes leave functions for an external codegen (`relay.compiler`) and
// those marked `relay.skip_optimization` alone (AsOptimizableFunctionNode); @main is rewritten.
// CHECK-LABEL: func.func @ext_0
// CHECK-NEXT:    relay.nn.batch_norm
// CHECK-LABEL: func.func @keep
// CHECK-NEXT:    relay.nn.batch_norm
// CHECK-LABEL: func.func @main
// CHECK-NOT:     relay.nn.batch_norm
// CHECK:         func.call @ext_0
// CHECK:         func.call @keep
func.func @ext_0(%x: tensor<1x2xf32>, %g: tensor<2xf32>) -> tensor<1x2xf32> attributes {relay.compiler = "dnnl", relay.global_symbol = "ext_0"} {
  %0, %1, %2 = relay.nn.batch_norm %x, %g, %g, %g, %g : (tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>)
  func.return %0 : tensor<1x2xf32>
}
func.func @keep(%x: tensor<1x2xf32>, %g: tensor<2xf32>) -> tensor<1x2xf32> attributes {relay.skip_optimization = 1 : i64} {
  %0, %1, %2 = relay.nn.batch_norm %x, %g, %g, %g, %g : (tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>)
  func.return %0 : tensor<1x2xf32>
}
func.func @main(%x: tensor<1x2xf32>, %g: tensor<2xf32>) -> tensor<1x2xf32> {
  %0, %1, %2 = relay.nn.batch_norm %x, %g, %g, %g, %g : (tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>)
  %3 = func.call @ext_0(%0, %g) : (tensor<1x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %4 = func.call @keep(%3, %g) : (tensor<1x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  func.return %4 : tensor<1x2xf32>
}
