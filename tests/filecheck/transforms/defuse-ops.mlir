// RUN: relay-opt %s -p defuse-ops --split-input-file | filecheck %s
// RUN: relay-opt %s -p fuse-ops,defuse-ops --split-input-file | filecheck %s --check-prefix=ROUND

// a primitive function called twice is inlined at both calls, then deleted
func.func private @fused_add_nn_relu(%p0: tensor<4xf32>, %p1: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive = 1 : i64} {
  %a = relay.add %p0, %p1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = relay.nn.relu %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @fused_add_nn_relu(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s = func.call @fused_add_nn_relu(%r, %r) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}

// CHECK-NOT: @fused_add_nn_relu
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: %a = relay.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %r = relay.nn.relu %a : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %a_1 = relay.add %r, %r : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %r_1 = relay.nn.relu %a_1 : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: func.return %r_1 : tensor<4xf32>

// -----
// multi-result primitive functions; global (public) non-primitive functions and their calls
// stay (a private one is a function literal: Relay defuses its calls too)
func.func private @fused_split(%p0: tensor<4x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) attributes {relay.primitive = 1 : i64} {
  %s0, %s1 = relay.split %p0 {indices_or_sections = 2} : (tensor<4x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  func.return %s0, %s1 : tensor<2x4xf32>, tensor<2x4xf32>
}
func.func @helper(%p0: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %t = relay.tanh %p0 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %t : tensor<2x4xf32>
}
func.func @main(%x: tensor<4x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %s0, %s1 = func.call @fused_split(%x) : (tensor<4x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  %h = func.call @helper(%s1) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %s0, %h : tensor<2x4xf32>, tensor<2x4xf32>
}

// CHECK-NOT: @fused_split
// CHECK-LABEL: func.func @helper(
// CHECK-SAME: %p0: tensor<2x4xf32>) -> tensor<2x4xf32> {
// CHECK-NEXT: %t = relay.tanh %p0 : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: func.return %t : tensor<2x4xf32>
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
// CHECK-NEXT: %s0, %s1 = relay.split %x {indices_or_sections = 2} : (tensor<4x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK-NEXT: %h = func.call @helper(%s1) : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: func.return %s0, %h : tensor<2x4xf32>, tensor<2x4xf32>

// -----
// fuse-ops then defuse-ops gives the program back
func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4x1x1xf32>) -> tensor<1x8x8x4xf32> {
  %y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %z = relay.add %y, %b : (tensor<1x4x8x8xf32>, tensor<4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %k = relay.constant dense<2.0> : tensor<f32>
  %m = relay.multiply %z, %k : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %r = relay.nn.relu %m : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %t = relay.transpose %r {axes = [0, 2, 3, 1]} : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x4xf32>
  %e = relay.exp %t : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  func.return %e : tensor<1x8x8x4xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4x1x1xf32>) -> tensor<1x8x8x4xf32> {
// CHECK-NEXT: %y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %z = relay.add %y, %b : (tensor<1x4x8x8xf32>, tensor<4x1x1xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %k = relay.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT: %m = relay.multiply %z, %k : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %r = relay.nn.relu %m : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %t = relay.transpose %r {axes = [0, 2, 3, 1]} : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x4xf32>
// CHECK-NEXT: %e = relay.exp %t : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
// CHECK-NEXT: func.return %e : tensor<1x8x8x4xf32>

// ROUND-LABEL: func.func @main(%x: tensor<1x3x8x8xf32>
// ROUND-NOT: func.call
// ROUND-NOT: fused_
// ROUND: %y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]}
// ROUND-NEXT: %z = relay.add %y, %b
// ROUND-NEXT: %k = relay.constant dense<2.000000e+00> : tensor<f32>
// ROUND-NEXT: %m = relay.multiply %z, %k
// ROUND-NEXT: %r = relay.nn.relu %m
// ROUND-NEXT: %t = relay.transpose %r {axes = [0, 2, 3, 1]}
// ROUND-NEXT: %e = relay.exp %t
// ROUND-NEXT: func.return %e : tensor<1x8x8x4xf32>

// -----

// A function literal that calls itself (Relay's recursive `let %pow = fn ...`) is called
// through its variable in Relay, not as a literal: it is not inlined (that would never end).
// CHECK-LABEL: func.func private @pow(
// CHECK:       func.call @pow(
// CHECK-LABEL: func.func @main(
// CHECK:       func.call @pow(
func.func private @pow(%n: tensor<i32>, %acc: tensor<f32>) -> tensor<f32> {
  %zero = relay.constant dense<0> : tensor<i32>
  %done = relay.equal %n, %zero : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %c = tensor.extract %done[] : tensor<i1>
  %r = scf.if %c -> (tensor<f32>) {
    scf.yield %acc : tensor<f32>
  } else {
    %one = relay.constant dense<1> : tensor<i32>
    %m = relay.subtract %n, %one : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %a = relay.add %acc, %acc : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %v = func.call @pow(%m, %a) : (tensor<i32>, tensor<f32>) -> tensor<f32>
    scf.yield %v : tensor<f32>
  }
  func.return %r : tensor<f32>
}
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %three = relay.constant dense<3> : tensor<i32>
  %y = func.call @pow(%three, %x) : (tensor<i32>, tensor<f32>) -> tensor<f32>
  func.return %y : tensor<f32>
}
