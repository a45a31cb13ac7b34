// RUN: relay-opt %s -p 'partition-for-engines{engines=dnnl}' | filecheck %s

// Attention's scale and mask after the scores' matmul (fold_views' epilogue): the reshape,
// the multiply and the add move into the batched matmul's function, their other operands
// (a constant, the mask) become its arguments; oneDNN runs them as binary post-ops
// (tests/runtime/test_dnnl_attention.py runs them). An add whose result is larger than the
// scores (the operand broadcasts it) stays in the caller.

// CHECK:      func.func @tvmgen_default_dnnl_main_0(%0: tensor<4x8x8xf32>, %1: tensor<4x8x8xf32>, %2: tensor<f32>, %3: tensor<1x1x1x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT:   %s = relay.nn.batch_matmul %0, %1
// CHECK-NEXT:   %r = relay.reshape %s {newshape = [1, 4, 8, 8]}
// CHECK-NEXT:   %m = relay.multiply %r, %2
// CHECK-NEXT:   %a = relay.add %3, %m
// CHECK-NEXT:   func.return %a : tensor<1x4x8x8xf32>
// CHECK:      func.func @tvmgen_default_dnnl_main_4(%dnnl_4_i0: tensor<4x8x8xf32>, %dnnl_4_i1: tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
// CHECK-NEXT:   %s2 = relay.nn.batch_matmul %dnnl_4_i0, %dnnl_4_i1
// CHECK-NEXT:   func.return %s2
// CHECK:      func.func @main
// CHECK:        %a = func.call @tvmgen_default_dnnl_main_0(%q, %k, %c, %mask)
// CHECK-NEXT:   %b = relay.reshape %a {newshape = [4, 8, 8]}
// CHECK-NOT:    relay.multiply
// CHECK:        %0 = func.call @tvmgen_default_dnnl_main_4(%q, %k)
// CHECK-NEXT:   %g = relay.add %0, %big

func.func @main(%q: tensor<4x8x8xf32>, %k: tensor<4x8x8xf32>, %mask: tensor<1x1x1x8xf32>, %big: tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32> {
  %s = relay.nn.batch_matmul %q, %k : (tensor<4x8x8xf32>, tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %r = relay.reshape %s {newshape = [1, 4, 8, 8]} : (tensor<4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %c = relay.constant dense<0.125> : tensor<f32>
  %m = relay.multiply %r, %c : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %a = relay.add %mask, %m : (tensor<1x1x1x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %b = relay.reshape %a {newshape = [4, 8, 8]} : (tensor<1x4x8x8xf32>) -> tensor<4x8x8xf32>
  %p = relay.nn.softmax %b {axis = -1} : (tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s2 = relay.nn.batch_matmul %q, %k : (tensor<4x8x8xf32>, tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %g = relay.add %s2, %big : (tensor<4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %p2 = relay.nn.softmax %g {axis = -1} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %y = relay.add %p, %p2 : (tensor<4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  func.return %y : tensor<2x4x8x8xf32>
}
