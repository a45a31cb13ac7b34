// RUN: relay-opt %s -p 'partition-for-engines{engines=dnnl}' | filecheck %s

// ShuffleNetV2's channel shuffle between oneDNN steps (the pools, channels-last after
// ConvertLayout): the concatenation, the layout transform back to NCHW that ConvertLayout
// put before the reshape, the shuffle's reshape, transpose and reshape, the split and the
// transforms to NHWC of both halves are one dnnl function (offload_movement) of two
// results: the oneDNN reader runs it as strided copies on oneDNN's threads, every element
// moved once, instead of two reorders and a native step.

// CHECK:      func.func @tvmgen_default_dnnl_move_2(%0: tensor<1x6x6x4xf32>, %1: tensor<1x6x6x4xf32>) -> (tensor<1x6x6x4xf32>, tensor<1x6x6x4xf32>) attributes {{{.*}}relay.compiler = "dnnl"
// CHECK-NEXT:   %c = relay.concatenate %0, %1 {axis = 3}
// CHECK-NEXT:   %2 = relay.layout_transform %c {src_layout = "NHWC", dst_layout = "NCHW"}
// CHECK-NEXT:   %r = relay.reshape %2 {newshape = [1, 2, 4, 6, 6]}
// CHECK-NEXT:   %t = relay.transpose %r {axes = [0, 2, 1, 3, 4]}
// CHECK-NEXT:   %s = relay.reshape %t {newshape = [1, 8, 6, 6]}
// CHECK-NEXT:   %a, %b = relay.split %s {indices_or_sections = 2, axis = 1}
// CHECK-NEXT:   %3 = relay.layout_transform %a {src_layout = "NCHW", dst_layout = "NHWC"}
// CHECK-NEXT:   %4 = relay.layout_transform %b {src_layout = "NCHW", dst_layout = "NHWC"}
// CHECK-NEXT:   func.return %3, %4
// CHECK:      func.func @main
// CHECK-NOT:    relay.transpose
// CHECK:        %2 = func.call @tvmgen_default_dnnl_main_0(%0)
// CHECK-NEXT:   %3 = func.call @tvmgen_default_dnnl_main_1(%1)
// CHECK-NEXT:   %4, %5 = func.call @tvmgen_default_dnnl_move_2(%2, %3)
// CHECK-NEXT:   %6 = func.call @tvmgen_default_dnnl_main_2(%4)
// CHECK-NOT:    relay.

func.func @main(%x: tensor<1x4x6x6xf32>, %y: tensor<1x4x6x6xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  %p = relay.nn.max_pool2d %x {pool_size = [1, 1]} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %q = relay.nn.max_pool2d %y {pool_size = [1, 1]} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %c = relay.concatenate %p, %q {axis = 1} : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x8x6x6xf32>
  %r = relay.reshape %c {newshape = [1, 2, 4, 6, 6]} : (tensor<1x8x6x6xf32>) -> tensor<1x2x4x6x6xf32>
  %t = relay.transpose %r {axes = [0, 2, 1, 3, 4]} : (tensor<1x2x4x6x6xf32>) -> tensor<1x4x2x6x6xf32>
  %s = relay.reshape %t {newshape = [1, 8, 6, 6]} : (tensor<1x4x2x6x6xf32>) -> tensor<1x8x6x6xf32>
  %a, %b = relay.split %s {indices_or_sections = 2, axis = 1} : (tensor<1x8x6x6xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>)
  %u = relay.nn.max_pool2d %a {pool_size = [1, 1]} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %v = relay.nn.max_pool2d %b {pool_size = [1, 1]} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  func.return %u, %v : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
}
