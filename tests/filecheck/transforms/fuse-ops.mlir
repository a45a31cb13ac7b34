// RUN: relay-opt %s -p fuse-ops --split-input-file | filecheck %s
// RUN: relay-opt %s -p 'fuse-ops{max-depth=2}' --split-input-file | filecheck %s --check-prefix=DEPTH
// RUN: relay-opt %s -p 'fuse-ops{opt-level=0}' --split-input-file | filecheck %s --check-prefix=O0
// RUN: not relay-opt %s -p 'fuse-ops{max-depth=-1}' --split-input-file 2>&1 | filecheck %s --check-prefix=ERR
// RUN: not relay-opt %s -p 'fuse-ops{opt-level=-2}' --split-input-file 2>&1 | filecheck %s --check-prefix=ERR2

// ERR: relay-opt: error: fuse-ops: max-depth must be >= 0, got -1
// ERR2: relay-opt: error: fuse-ops: opt-level must be -1 or >= 0, got -2

// Expected groups follow Relay's GraphPartitioner (docs/relay-semantics.md §2.1); each case
// says why.

// chain of elementwise ops: one group
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = relay.nn.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = relay.exp %a : (tensor<4xf32>) -> tensor<4xf32>
  %c = relay.tanh %b : (tensor<4xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// CHECK-LABEL: func.func private @fused_nn_relu_exp_tanh(
// CHECK-SAME: %p0: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT: %a = relay.nn.relu %p0 : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %b = relay.exp %a : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %c = relay.tanh %b : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: func.return %c : tensor<4xf32>
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: %c = func.call @fused_nn_relu_exp_tanh(%x) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: func.return %c : tensor<4xf32>

// max-depth=2: relu+exp reach the limit, tanh is alone.
// DEPTH-LABEL: func.func private @fused_nn_relu_exp(
// DEPTH-NEXT: relay.nn.relu
// DEPTH-NEXT: relay.exp
// DEPTH-NEXT: func.return
// DEPTH-LABEL: func.func private @fused_tanh(
// DEPTH-LABEL: func.func @main(
// DEPTH-NEXT: %b = func.call @fused_nn_relu_exp(%x)
// DEPTH-NEXT: %c = func.call @fused_tanh(%b)

// opt-level=0: every op is its own primitive function.
// O0-LABEL: func.func private @fused_nn_relu(
// O0-LABEL: func.func private @fused_exp(
// O0-LABEL: func.func private @fused_tanh(
// O0-LABEL: func.func @main(
// O0-NEXT: %a = func.call @fused_nn_relu(%x)
// O0-NEXT: %b = func.call @fused_exp(%a)
// O0-NEXT: %c = func.call @fused_tanh(%b)

// -----
// diamond after conv2d
func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %a = relay.nn.relu %y : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %b = relay.exp %y : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %c = relay.add %a, %b : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return %c : tensor<1x4x8x8xf32>
}

// CHECK-LABEL: func.func private @fused_nn_conv2d_nn_relu_exp_add(
// CHECK-SAME: %p0: tensor<1x3x8x8xf32>, %p1: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT: %y = relay.nn.conv2d %p0, %p1 {padding = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %a = relay.nn.relu %y : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %b = relay.exp %y : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %c = relay.add %a, %b : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: func.return %c : tensor<1x4x8x8xf32>
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
// CHECK-NEXT: %c = func.call @fused_nn_conv2d_nn_relu_exp_add(%x, %w) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: func.return %c : tensor<1x4x8x8xf32>

// -----
// reduction then elementwise, scalar constant
func.func @main(%x: tensor<2x8xf32>) -> tensor<2xf32> {
  %a = relay.exp %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %s = relay.sum %a {axis = [1]} : (tensor<2x8xf32>) -> tensor<2xf32>
  %q = relay.sqrt %s : (tensor<2xf32>) -> tensor<2xf32>
  %k = relay.constant dense<2.0> : tensor<f32>
  %m = relay.multiply %q, %k : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  func.return %m : tensor<2xf32>
}

// CHECK-LABEL: func.func private @fused_exp_sum(
// CHECK-SAME: %p0: tensor<2x8xf32>) -> tensor<2xf32> attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT: %a = relay.exp %p0 : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: %s = relay.sum %a {axis = [1]} : (tensor<2x8xf32>) -> tensor<2xf32>
// CHECK-NEXT: func.return %s : tensor<2xf32>
// CHECK-LABEL: func.func private @fused_sqrt_multiply(
// CHECK-SAME: %p0: tensor<2xf32>) -> tensor<2xf32> attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT: %q = relay.sqrt %p0 : (tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT: %k = relay.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT: %m = relay.multiply %q, %k : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK-NEXT: func.return %m : tensor<2xf32>
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<2x8xf32>) -> tensor<2xf32> {
// CHECK-NEXT: %s = func.call @fused_exp_sum(%x) : (tensor<2x8xf32>) -> tensor<2xf32>
// CHECK-NEXT: %m = func.call @fused_sqrt_multiply(%s) : (tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT: func.return %m : tensor<2xf32>

// opt-level=0: the scalar constant is not outlined alone; it is a parameter.
// O0-LABEL: func.func private @fused_multiply(%p0: tensor<2xf32>, %p1: tensor<f32>)
// O0-LABEL: func.func @main(%x: tensor<2x8xf32>)
// O0: %k = relay.constant dense<2.000000e+00> : tensor<f32>
// O0-NEXT: %m = func.call @fused_multiply(%q, %k)

// -----
// concatenate: phase 1 tuple, phase 2 fields
func.func @main(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>) -> tensor<4x4xf32> {
  %a = relay.nn.relu %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %b = relay.exp %y : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %c = relay.concatenate %a, %b : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
  %k = relay.constant dense<1.0> : tensor<f32>
  %d = relay.add %c, %k : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  func.return %d : tensor<4x4xf32>
}

// CHECK-LABEL: func.func private @fused_nn_relu_exp_concatenate_add(
// CHECK-SAME: %p0: tensor<2x4xf32>, %p1: tensor<2x4xf32>) -> tensor<4x4xf32> attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT: %a = relay.nn.relu %p0 : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %b = relay.exp %p1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %c = relay.concatenate %a, %b : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %k = relay.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %d = relay.add %c, %k : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
// CHECK-NEXT: func.return %d : tensor<4x4xf32>
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<2x4xf32>, %y: tensor<2x4xf32>) -> tensor<4x4xf32> {
// CHECK-NEXT: %d = func.call @fused_nn_relu_exp_concatenate_add(%x, %y) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: func.return %d : tensor<4x4xf32>

// -----
// returned tuple stops fusion of its fields
func.func @main(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %a = relay.nn.relu %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %b = relay.exp %a : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %c = relay.tanh %a : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %b, %c : tensor<2x4xf32>, tensor<2x4xf32>
}

// CHECK-LABEL: func.func private @fused_nn_relu(
// CHECK-SAME: %p0: tensor<2x4xf32>) -> tensor<2x4xf32> attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT: %a = relay.nn.relu %p0 : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: func.return %a : tensor<2x4xf32>
// CHECK-LABEL: func.func private @fused_exp(
// CHECK-SAME: %p0: tensor<2x4xf32>) -> tensor<2x4xf32> attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT: %b = relay.exp %p0 : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: func.return %b : tensor<2x4xf32>
// CHECK-LABEL: func.func private @fused_tanh(
// CHECK-SAME: %p0: tensor<2x4xf32>) -> tensor<2x4xf32> attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT: %c = relay.tanh %p0 : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: func.return %c : tensor<2x4xf32>
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
// CHECK-NEXT: %a = func.call @fused_nn_relu(%x) : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %b = func.call @fused_exp(%a) : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %c = func.call @fused_tanh(%a) : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: func.return %b, %c : tensor<2x4xf32>, tensor<2x4xf32>

// -----
// injective ops after conv2d wait for phase 1
func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4x1x1xf32>) -> tensor<1x8x8x4xf32> {
  %y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %z = relay.add %y, %b : (tensor<1x4x8x8xf32>, tensor<4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %r = relay.nn.relu %z : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %t = relay.transpose %r {axes = [0, 2, 3, 1]} : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x4xf32>
  %e = relay.exp %t : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  func.return %e : tensor<1x8x8x4xf32>
}

// CHECK-LABEL: func.func private @fused_nn_conv2d_add_nn_relu(
// CHECK-SAME: %p0: tensor<1x3x8x8xf32>, %p1: tensor<4x3x3x3xf32>, %p2: tensor<4x1x1xf32>) -> tensor<1x4x8x8xf32> attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT: %y = relay.nn.conv2d %p0, %p1 {padding = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %z = relay.add %y, %p2 : (tensor<1x4x8x8xf32>, tensor<4x1x1xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %r = relay.nn.relu %z : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: func.return %r : tensor<1x4x8x8xf32>
// CHECK-LABEL: func.func private @fused_transpose_exp(
// CHECK-SAME: %p0: tensor<1x4x8x8xf32>) -> tensor<1x8x8x4xf32> attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT: %t = relay.transpose %p0 {axes = [0, 2, 3, 1]} : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x4xf32>
// CHECK-NEXT: %e = relay.exp %t : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
// CHECK-NEXT: func.return %e : tensor<1x8x8x4xf32>
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4x1x1xf32>) -> tensor<1x8x8x4xf32> {
// CHECK-NEXT: %r = func.call @fused_nn_conv2d_add_nn_relu(%x, %w, %b) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4x1x1xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %e = func.call @fused_transpose_exp(%r) : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x4xf32>
// CHECK-NEXT: func.return %e : tensor<1x8x8x4xf32>

// -----
// split fused with its consumers
func.func @main(%x: tensor<6x4xf32>) -> tensor<2x4xf32> {
  %s0, %s1, %s2 = relay.split %x {indices_or_sections = 3} : (tensor<6x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  %a = relay.add %s0, %s1 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %r = relay.nn.relu %a : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}

// CHECK-LABEL: func.func private @fused_split_add_nn_relu(
// CHECK-SAME: %p0: tensor<6x4xf32>) -> tensor<2x4xf32> attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT: %s0, %s1, %s2 = relay.split %p0 {indices_or_sections = 3} : (tensor<6x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK-NEXT: %a = relay.add %s0, %s1 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %r = relay.nn.relu %a : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: func.return %r : tensor<2x4xf32>
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<6x4xf32>) -> tensor<2x4xf32> {
// CHECK-NEXT: %r = func.call @fused_split_add_nn_relu(%x) : (tensor<6x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: func.return %r : tensor<2x4xf32>

// -----
// split alone, isolated results, two softmax anchors
func.func @main(%x: tensor<4x4xf32>) -> tensor<2x4xf32> {
  %s0, %s1 = relay.split %x {indices_or_sections = 2} : (tensor<4x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  %a = relay.nn.softmax %s0 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %b = relay.nn.softmax %s1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %c = relay.add %a, %b : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %c : tensor<2x4xf32>
}

// CHECK-LABEL: func.func private @fused_split(
// CHECK-SAME: %p0: tensor<4x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT: %s0, %s1 = relay.split %p0 {indices_or_sections = 2} : (tensor<4x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK-NEXT: func.return %s0, %s1 : tensor<2x4xf32>, tensor<2x4xf32>
// CHECK-LABEL: func.func private @fused_nn_softmax(
// CHECK-SAME: %p0: tensor<2x4xf32>) -> tensor<2x4xf32> attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT: %b = relay.nn.softmax %p0 : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: func.return %b : tensor<2x4xf32>
// CHECK-LABEL: func.func private @fused_nn_softmax_add(
// CHECK-SAME: %p0: tensor<2x4xf32>, %p1: tensor<2x4xf32>) -> tensor<2x4xf32> attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT: %a = relay.nn.softmax %p0 : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %c = relay.add %a, %p1 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: func.return %c : tensor<2x4xf32>
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4x4xf32>) -> tensor<2x4xf32> {
// CHECK-NEXT: %s0, %s1 = func.call @fused_split(%x) : (tensor<4x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK-NEXT: %b = func.call @fused_nn_softmax(%s1) : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %c = func.call @fused_nn_softmax_add(%s0, %b) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: func.return %c : tensor<2x4xf32>

// -----
// batch_norm result 0 fused into relu
func.func @main(%x: tensor<1x2x4x4xf32>, %g: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
  %b, %m, %v = relay.nn.batch_norm %x, %g, %g, %g, %g : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>)
  %r = relay.nn.relu %b : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %r : tensor<1x2x4x4xf32>
}

// CHECK-LABEL: func.func private @fused_nn_batch_norm(
// CHECK-SAME: %p0: tensor<1x2x4x4xf32>, %p1: tensor<2xf32>) -> (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>) attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT: %b, %m, %v = relay.nn.batch_norm %p0, %p1, %p1, %p1, %p1 : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>)
// CHECK-NEXT: func.return %b, %m, %v : tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>
// CHECK-LABEL: func.func private @fused_nn_relu(
// CHECK-SAME: %p0: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT: %r = relay.nn.relu %p0 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT: func.return %r : tensor<1x2x4x4xf32>
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<1x2x4x4xf32>, %g: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
// CHECK-NEXT: %b, %m, %v = func.call @fused_nn_batch_norm(%x, %g) : (tensor<1x2x4x4xf32>, tensor<2xf32>) -> (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>)
// CHECK-NEXT: %r = func.call @fused_nn_relu(%b) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT: func.return %r : tensor<1x2x4x4xf32>

// -----
// stop_fusion cuts the chain; unique names
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = relay.nn.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %s = relay.annotation.stop_fusion %a : (tensor<4xf32>) -> tensor<4xf32>
  %b = relay.nn.relu %s : (tensor<4xf32>) -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}

// CHECK-LABEL: func.func private @fused_nn_relu(
// CHECK-SAME: %p0: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT: %a = relay.nn.relu %p0 : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: func.return %a : tensor<4xf32>
// CHECK-LABEL: func.func private @fused_nn_relu_1(
// CHECK-SAME: %p0: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT: %b = relay.nn.relu %p0 : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: func.return %b : tensor<4xf32>
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: %a = func.call @fused_nn_relu(%x) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %b = func.call @fused_nn_relu_1(%a) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: func.return %b : tensor<4xf32>

// -----
// reshape-only group
func.func @main(%x: tensor<2x6xf32>) -> tensor<3x4xf32> {
  %a = relay.reshape %x {newshape = [3, 1, 4]} : (tensor<2x6xf32>) -> tensor<3x1x4xf32>
  %b = relay.squeeze %a {axis = [1]} : (tensor<3x1x4xf32>) -> tensor<3x4xf32>
  func.return %b : tensor<3x4xf32>
}

// CHECK-LABEL: func.func private @fused_reshape_squeeze(
// CHECK-SAME: %p0: tensor<2x6xf32>) -> tensor<3x4xf32> attributes {relay.primitive = 1 : i64, relay.reshape_only = 1 : i64} {
// CHECK-NEXT: %a = relay.reshape %p0 {newshape = [3, 1, 4]} : (tensor<2x6xf32>) -> tensor<3x1x4xf32>
// CHECK-NEXT: %b = relay.squeeze %a {axis = [1]} : (tensor<3x1x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: func.return %b : tensor<3x4xf32>
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<2x6xf32>) -> tensor<3x4xf32> {
// CHECK-NEXT: %b = func.call @fused_reshape_squeeze(%x) : (tensor<2x6xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: func.return %b : tensor<3x4xf32>

// -----
// parameters in Relay's order of first use (post-DFS, not program order)
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>) -> tensor<4xf32> {
  %e = relay.exp %c : (tensor<4xf32>) -> tensor<4xf32>
  %r = relay.nn.relu %a : (tensor<4xf32>) -> tensor<4xf32>
  %s = relay.add %r, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %t = relay.add %s, %e : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %u = relay.add %t, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %u : tensor<4xf32>
}

// CHECK-LABEL: func.func private @fused_nn_relu_add_exp_add_add(
// CHECK-SAME: %p0: tensor<4xf32>, %p1: tensor<4xf32>, %p2: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT: %r = relay.nn.relu %p0 : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %s = relay.add %r, %p1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %e = relay.exp %p2 : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %t = relay.add %s, %e : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %u = relay.add %t, %p1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: func.return %u : tensor<4xf32>
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: %u = func.call @fused_nn_relu_add_exp_add_add(%a, %b, %c) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: func.return %u : tensor<4xf32>

// -----
// conv2d + bias + relu + residual add: one group
func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4x1x1xf32>, %r: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %z = relay.add %y, %b : (tensor<1x4x8x8xf32>, tensor<4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %a = relay.nn.relu %z : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %o = relay.add %a, %r : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return %o : tensor<1x4x8x8xf32>
}

// CHECK-LABEL: func.func private @fused_nn_conv2d_add_nn_relu_add(
// CHECK-SAME: %p0: tensor<1x3x8x8xf32>, %p1: tensor<4x3x3x3xf32>, %p2: tensor<4x1x1xf32>, %p3: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT: %y = relay.nn.conv2d %p0, %p1 {padding = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %z = relay.add %y, %p2 : (tensor<1x4x8x8xf32>, tensor<4x1x1xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %a = relay.nn.relu %z : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %o = relay.add %a, %p3 : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: func.return %o : tensor<1x4x8x8xf32>
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4x1x1xf32>, %r: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
// CHECK-NEXT: %o = func.call @fused_nn_conv2d_add_nn_relu_add(%x, %w, %b, %r) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4x1x1xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: func.return %o : tensor<1x4x8x8xf32>

// -----
// primitive functions are skipped, other calls stay, dead ops go, names avoid existing symbols
func.func private @fused_exp(%p0: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive = 1 : i64} {
  %e = relay.exp %p0 : (tensor<4xf32>) -> tensor<4xf32>
  %f = relay.exp %e : (tensor<4xf32>) -> tensor<4xf32>
  func.return %f : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = func.call @fused_exp(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %dead = relay.tanh %c : (tensor<4xf32>) -> tensor<4xf32>
  %e = relay.exp %c : (tensor<4xf32>) -> tensor<4xf32>
  func.return %e : tensor<4xf32>
}

// CHECK-LABEL: func.func private @fused_exp(
// CHECK-SAME: %p0: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT: %e = relay.exp %p0 : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %f = relay.exp %e : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: func.return %f : tensor<4xf32>
// CHECK-LABEL: func.func private @fused_exp_1(
// CHECK-SAME: %p0: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT: %e = relay.exp %p0 : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: func.return %e : tensor<4xf32>
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: %c = func.call @fused_exp(%x) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %e = func.call @fused_exp_1(%c) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: func.return %e : tensor<4xf32>
