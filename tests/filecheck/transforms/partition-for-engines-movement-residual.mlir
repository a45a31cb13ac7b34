// RUN: relay-opt %s -p 'partition-for-engines{engines=dnnl}' | filecheck %s

// Swin's window reverse (reshape, transpose, reshape) and its shift back (two slices and a
// concatenation), then the residual add of the block's input: one dnnl function
// (offload_movement), the add the chain each moved element goes through on its way (its
// other operand, a oneDNN result, an argument).

// CHECK:      func.func @tvmgen_default_dnnl_move_0(%0: tensor<4x4x4x4xf32>, %1: tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32> attributes {{{.*}}relay.compiler = "dnnl"
// CHECK-NEXT:   %r = relay.reshape %0 {newshape = [1, 2, 2, 4, 4, 4]}
// CHECK-NEXT:   %t = relay.transpose %r {axes = [0, 1, 3, 2, 4, 5]}
// CHECK-NEXT:   %s = relay.reshape %t {newshape = [1, 8, 8, 4]}
// CHECK-NEXT:   %a = relay.strided_slice %s {begin = [6], end = [8], strides = [1], axes = [1]}
// CHECK-NEXT:   %b = relay.strided_slice %s {begin = [0], end = [6], strides = [1], axes = [1]}
// CHECK-NEXT:   %c = relay.concatenate %a, %b {axis = 1}
// CHECK-NEXT:   %e = relay.add %1, %c
// CHECK-NEXT:   func.return %e
// CHECK:      func.func @main
// CHECK:        %e = func.call @tvmgen_default_dnnl_move_0(%0, %1)
// CHECK-NEXT:   %2 = func.call @tvmgen_default_dnnl_main_3(%e)
// CHECK-NOT:    relay.

func.func @main(%x: tensor<1x8x8x4xf32>, %y: tensor<4x4x4x4xf32>) -> tensor<1x8x8x4xf32> {
  %h = relay.nn.max_pool2d %x {pool_size = [1, 1], layout = "NHWC"} : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  %w = relay.nn.max_pool2d %y {pool_size = [1, 1], layout = "NHWC"} : (tensor<4x4x4x4xf32>) -> tensor<4x4x4x4xf32>
  %r = relay.reshape %w {newshape = [1, 2, 2, 4, 4, 4]} : (tensor<4x4x4x4xf32>) -> tensor<1x2x2x4x4x4xf32>
  %t = relay.transpose %r {axes = [0, 1, 3, 2, 4, 5]} : (tensor<1x2x2x4x4x4xf32>) -> tensor<1x2x4x2x4x4xf32>
  %s = relay.reshape %t {newshape = [1, 8, 8, 4]} : (tensor<1x2x4x2x4x4xf32>) -> tensor<1x8x8x4xf32>
  %a = relay.strided_slice %s {begin = [6], end = [8], strides = [1], axes = [1]} : (tensor<1x8x8x4xf32>) -> tensor<1x2x8x4xf32>
  %b = relay.strided_slice %s {begin = [0], end = [6], strides = [1], axes = [1]} : (tensor<1x8x8x4xf32>) -> tensor<1x6x8x4xf32>
  %c = relay.concatenate %a, %b {axis = 1} : (tensor<1x2x8x4xf32>, tensor<1x6x8x4xf32>) -> tensor<1x8x8x4xf32>
  %e = relay.add %h, %c : (tensor<1x8x8x4xf32>, tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  %o = relay.nn.max_pool2d %e {pool_size = [1, 1], layout = "NHWC"} : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  func.return %o : tensor<1x8x8x4xf32>
}
