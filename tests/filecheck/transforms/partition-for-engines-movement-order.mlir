// RUN: relay-opt %s -p 'partition-for-engines{engines=dnnl}' | filecheck %s

// A split whose second half a concatenation reads, the other half read by a oneDNN step
// written before the concatenation's other input: the split and the concatenation are one
// region (no path from it through another op leads back into it), its function is called
// after the last op that makes one of its inputs (the pool of %y), and the pool of %a,
// which came before that, moves after the call.

// CHECK:      func.func @tvmgen_default_dnnl_move_0(%0: tensor<1x8x6x6xf32>, %1: tensor<1x4x6x6xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x8x6x6xf32>) attributes {{{.*}}relay.compiler = "dnnl"
// CHECK-NEXT:   %a, %b = relay.split %0 {indices_or_sections = 2, axis = 1}
// CHECK-NEXT:   %c = relay.concatenate %1, %b {axis = 1}
// CHECK-NEXT:   func.return %a, %c
// CHECK:      func.func @main
// CHECK-NEXT:   %0 = func.call @tvmgen_default_dnnl_main_0(%x)
// CHECK-NEXT:   %1 = func.call @tvmgen_default_dnnl_main_2(%y)
// CHECK-NEXT:   %a, %c = func.call @tvmgen_default_dnnl_move_0(%0, %1)
// CHECK-NEXT:   %2 = func.call @tvmgen_default_dnnl_main_1(%a)
// CHECK-NEXT:   %3 = func.call @tvmgen_default_dnnl_main_3(%c)
// CHECK-NEXT:   func.return %2, %3

func.func @main(%x: tensor<1x8x6x6xf32>, %y: tensor<1x4x6x6xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x8x6x6xf32>) {
  %p = relay.nn.max_pool2d %x {pool_size = [1, 1], layout = "NHWC"} : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %a, %b = relay.split %p {indices_or_sections = 2, axis = 1} : (tensor<1x8x6x6xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>)
  %u = relay.nn.max_pool2d %a {pool_size = [1, 1], layout = "NHWC"} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %q = relay.nn.max_pool2d %y {pool_size = [1, 1], layout = "NHWC"} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %c = relay.concatenate %q, %b {axis = 1} : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x8x6x6xf32>
  %v = relay.nn.max_pool2d %c {pool_size = [1, 1], layout = "NHWC"} : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  func.return %u, %v : tensor<1x4x6x6xf32>, tensor<1x8x6x6xf32>
}
