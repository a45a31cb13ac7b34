// RUN: relay-opt %s -p 'annotate-target{targets=dnnl},merge-compiler-regions' | filecheck %s

// relu -> tanh (dnnl) merge into one region; max (default) is its own; the second relu (dnnl)
// is reached from the first region only through the default one, so it stays apart (merging
// would make a cycle): Relay's region restrictions
func.func @main(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2xf32>) {
  %r = relay.nn.relu %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %t = relay.tanh %r : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %m = relay.max %t {axis = [1]} : (tensor<2x4xf32>) -> tensor<2xf32>
  %s = relay.nn.relu %m : (tensor<2xf32>) -> tensor<2xf32>
  func.return %t, %s : tensor<2x4xf32>, tensor<2xf32>
}

// CHECK:      %0 = relay.annotation.compiler_begin %x {compiler = "dnnl"}
// CHECK-NEXT: %r = relay.nn.relu %0
// CHECK-NEXT: %t = relay.tanh %r
// CHECK-NEXT: %1 = relay.annotation.compiler_end %t {compiler = "dnnl"}
// CHECK-NEXT: %2 = relay.annotation.compiler_begin %1 {compiler = "default"}
// CHECK-NEXT: %m = relay.max %2 {axis = [1]}
// CHECK-NEXT: %3 = relay.annotation.compiler_end %m {compiler = "default"}
// CHECK-NEXT: %4 = relay.annotation.compiler_begin %3 {compiler = "dnnl"}
// CHECK-NEXT: %s = relay.nn.relu %4
// CHECK-NEXT: %5 = relay.annotation.compiler_end %t {compiler = "dnnl"}
// CHECK-NEXT: %6 = relay.annotation.compiler_end %s {compiler = "dnnl"}
// CHECK-NEXT: func.return %5, %6
