// Plain xdsl-opt sees xrelay's dialects and passes through the xdsl.universe entry point.
// RUN: xdsl-opt %s -p infer-type,fuse-ops | filecheck %s

func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = relay.add %x, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = relay.nn.relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// CHECK: func.func private @fused_add_nn_relu(%p0: tensor<2x3xf32>, %p1: tensor<2x3xf32>) -> tensor<2x3xf32> attributes {relay.primitive = 1 : i64}
// CHECK: func.func @main
// CHECK-NEXT: %{{.*}} = func.call @fused_add_nn_relu(%x, %y)
