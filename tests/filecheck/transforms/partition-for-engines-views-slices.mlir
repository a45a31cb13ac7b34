// RUN: relay-opt %s -p 'partition-for-engines{engines=dnnl}' | filecheck %s

// A packed Q/K/V projection: Q and K are slices of its rows (strided_slice, after
// canonicalize-views moved them before the heads' permutation), V a result of a split
// (GPT-2's). Each slice and the split's result feeding a matmul move into the matmul's
// function with the heads' views (fold_views: a slice is strides and an offset), so the
// caller passes the whole projection and no slice or split is left in it. The scale after
// the 3-D scores, a oneDNN function of its own between two oneDNN steps, goes back into
// the caller (inline_elementwise) and becomes the scores' post-op.

// CHECK:      func.func @tvmgen_default_dnnl_main_1(%0: tensor<8x96xf32>, %1: tensor<8x96xf32>, %2: tensor<f32>) -> tensor<4x8x8xf32> attributes {{{.*}}relay.compiler = "dnnl"
// CHECK-NEXT:   %q = relay.strided_slice %0 {begin = [0], end = [32], strides = [1], axes = [1]}
// CHECK-NEXT:   %q1 = relay.reshape %q {newshape = [8, 4, 8]}
// CHECK-NEXT:   %q2 = relay.transpose %q1 {axes = [1, 0, 2]}
// CHECK-NEXT:   %k = relay.strided_slice %1 {begin = [32], end = [64], strides = [1], axes = [1]}
// CHECK-NEXT:   %k1 = relay.reshape %k {newshape = [8, 4, 8]}
// CHECK-NEXT:   %k2 = relay.transpose %k1 {axes = [1, 2, 0]}
// CHECK-NEXT:   %s = relay.nn.batch_matmul %q2, %k2
// CHECK-NEXT:   %t = relay.multiply %s, %2
// CHECK-NEXT:   func.return %t : tensor<4x8x8xf32>
// CHECK:      func.func @tvmgen_default_dnnl_main_4(%0: tensor<4x8x8xf32>, %1: tensor<8x96xf32>) -> tensor<8x32xf32> attributes {{{.*}}relay.compiler = "dnnl"
// CHECK-NEXT:   %parts = relay.strided_slice %1 {begin = [64], end = [96], strides = [1], axes = [1]}
// CHECK-NEXT:   %v1 = relay.reshape %parts {newshape = [8, 4, 8]}
// CHECK-NEXT:   %v2 = relay.transpose %v1 {axes = [1, 0, 2]}
// CHECK-NEXT:   %c = relay.nn.batch_matmul %0, %v2
// CHECK:      func.func @main
// CHECK-NOT:    relay.split
// CHECK-NOT:    relay.strided_slice
// CHECK:        %0 = func.call @tvmgen_default_dnnl_main_0(%x, %w)
// CHECK-NEXT:   %t = func.call @tvmgen_default_dnnl_main_1(%0, %0, %scale)
// CHECK-NEXT:   %1 = func.call @tvmgen_default_dnnl_main_3(%t)
// CHECK-NEXT:   %c2 = func.call @tvmgen_default_dnnl_main_4(%1, %0)
// CHECK-NOT:    relay.split
// CHECK-NOT:    relay.strided_slice

func.func @main(%x: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %w = relay.constant dense<0.25> : tensor<96x32xf32>
  %scale = relay.constant dense<0.35> : tensor<f32>
  %qkv = relay.nn.dense %x, %w : (tensor<8x32xf32>, tensor<96x32xf32>) -> tensor<8x96xf32>
  %q = relay.strided_slice %qkv {begin = [0], end = [32], strides = [1], axes = [1]} : (tensor<8x96xf32>) -> tensor<8x32xf32>
  %k = relay.strided_slice %qkv {begin = [32], end = [64], strides = [1], axes = [1]} : (tensor<8x96xf32>) -> tensor<8x32xf32>
  %parts:3 = relay.split %qkv {indices_or_sections = 3, axis = 1} : (tensor<8x96xf32>) -> (tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>)
  %q1 = relay.reshape %q {newshape = [8, 4, 8]} : (tensor<8x32xf32>) -> tensor<8x4x8xf32>
  %q2 = relay.transpose %q1 {axes = [1, 0, 2]} : (tensor<8x4x8xf32>) -> tensor<4x8x8xf32>
  %k1 = relay.reshape %k {newshape = [8, 4, 8]} : (tensor<8x32xf32>) -> tensor<8x4x8xf32>
  %k2 = relay.transpose %k1 {axes = [1, 2, 0]} : (tensor<8x4x8xf32>) -> tensor<4x8x8xf32>
  %s = relay.nn.batch_matmul %q2, %k2 {transpose_b = false} : (tensor<4x8x8xf32>, tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %t = relay.multiply %s, %scale : (tensor<4x8x8xf32>, tensor<f32>) -> tensor<4x8x8xf32>
  %p = relay.nn.softmax %t : (tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %v1 = relay.reshape %parts#2 {newshape = [8, 4, 8]} : (tensor<8x32xf32>) -> tensor<8x4x8xf32>
  %v2 = relay.transpose %v1 {axes = [1, 0, 2]} : (tensor<8x4x8xf32>) -> tensor<4x8x8xf32>
  %c = relay.nn.batch_matmul %p, %v2 {transpose_b = false} : (tensor<4x8x8xf32>, tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %c1 = relay.transpose %c {axes = [1, 0, 2]} : (tensor<4x8x8xf32>) -> tensor<8x4x8xf32>
  %c2 = relay.reshape %c1 {newshape = [8, 32]} : (tensor<8x4x8xf32>) -> tensor<8x32xf32>
  func.return %c2 : tensor<8x32xf32>
}
