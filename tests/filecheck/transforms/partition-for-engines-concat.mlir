// RUN: relay-opt %s -p 'partition-for-engines{engines=dnnl}' | filecheck %s

// A concatenation between oneDNN steps (two pools in, a pool out), with the batch-norm
// shift (one value per joined channel) and ReLU on its result, becomes a dnnl function of
// its own (offload_concatenations): the shim runs it on oneDNN's threads.
// CHECK:      func.func @tvmgen_default_dnnl_concat_0(%0: tensor<1x6x6x4xf32>, %1: tensor<1x6x6x2xf32>) -> tensor<1x6x6x6xf32> attributes {{{.*}}relay.compiler = "dnnl"
// CHECK-NEXT:   %c = relay.concatenate %0, %1 {axis = 3}
// CHECK-NEXT:   %2 = relay.constant dense<{{.*}}> : tensor<1x1x1x6xf32>
// CHECK-NEXT:   %a = relay.add %c, %2
// CHECK-NEXT:   %r = relay.nn.relu %a
// CHECK-NEXT:   func.return %r
// CHECK:      func.func @main
// CHECK:        %2 = func.call @tvmgen_default_dnnl_main_0(%0)
// CHECK-NEXT:   %3 = func.call @tvmgen_default_dnnl_main_1(%1)
// CHECK-NEXT:   %r = func.call @tvmgen_default_dnnl_concat_0(%2, %3)
// CHECK-NEXT:   %4 = func.call @tvmgen_default_dnnl_main_4(%r)
// CHECK-NOT:    relay.concatenate

func.func @main(%x: tensor<1x4x6x6xf32>, %y: tensor<1x2x6x6xf32>) -> tensor<1x6x3x3xf32> {
  %p = relay.nn.max_pool2d %x {pool_size = [1, 1]} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %q = relay.nn.max_pool2d %y {pool_size = [1, 1]} : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %c = relay.concatenate %p, %q {axis = 1} : (tensor<1x4x6x6xf32>, tensor<1x2x6x6xf32>) -> tensor<1x6x6x6xf32>
  %b = relay.constant dense<[[[[0.5]], [[-0.5]], [[1.0]], [[-1.0]], [[2.0]], [[-2.0]]]]> : tensor<1x6x1x1xf32>
  %a = relay.add %c, %b : (tensor<1x6x6x6xf32>, tensor<1x6x1x1xf32>) -> tensor<1x6x6x6xf32>
  %r = relay.nn.relu %a : (tensor<1x6x6x6xf32>) -> tensor<1x6x6x6xf32>
  %o = relay.nn.max_pool2d %r {pool_size = [2, 2], strides = [2, 2]} : (tensor<1x6x6x6xf32>) -> tensor<1x6x3x3xf32>
  func.return %o : tensor<1x6x3x3xf32>
}
