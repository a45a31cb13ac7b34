// RUN: relay-opt %s -p 'partition-for-engines{engines=dnnl}' | filecheck %s

// Concatenations that are not between oneDNN steps stay in the caller for the native
// kernels: one whose shift varies per row (not along the joined axis), so its user is the
// native add; one of the function's arguments (no oneDNN step before it).
// CHECK-NOT:  @tvmgen_default_dnnl_concat
// CHECK:      func.func @main
// CHECK:        relay.concatenate {{.*}} {axis = 3}
// CHECK:        relay.add
// CHECK:        relay.concatenate %x, %x {axis = 1}

func.func @main(%x: tensor<1x4x6x6xf32>, %y: tensor<1x2x6x6xf32>) -> (tensor<1x6x3x3xf32>, tensor<1x8x6x6xf32>) {
  %p = relay.nn.max_pool2d %x {pool_size = [1, 1]} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %q = relay.nn.max_pool2d %y {pool_size = [1, 1]} : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %c = relay.concatenate %p, %q {axis = 1} : (tensor<1x4x6x6xf32>, tensor<1x2x6x6xf32>) -> tensor<1x6x6x6xf32>
  %b = relay.constant dense<[[[0.5], [-0.5], [1.0], [-1.0], [2.0], [-2.0]]]> : tensor<1x6x1xf32>
  %a = relay.add %c, %b : (tensor<1x6x6x6xf32>, tensor<1x6x1xf32>) -> tensor<1x6x6x6xf32>
  %r = relay.nn.relu %a : (tensor<1x6x6x6xf32>) -> tensor<1x6x6x6xf32>
  %o = relay.nn.max_pool2d %r {pool_size = [2, 2], strides = [2, 2]} : (tensor<1x6x6x6xf32>) -> tensor<1x6x3x3xf32>
  %d = relay.concatenate %x, %x {axis = 1} : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x8x6x6xf32>
  %e = relay.nn.relu %d : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  func.return %o, %e : tensor<1x6x3x3xf32>, tensor<1x8x6x6xf32>
}
