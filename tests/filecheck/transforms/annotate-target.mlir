// RUN: relay-opt %s -p 'annotate-target{targets=dnnl}' | filecheck %s

// relu is dnnl's, tanh is dnnl's, argmax is not: default. Every operand gets the producer's
// compiler_end (when it has a target) and the consumer's compiler_begin; the result an end.
func.func @main(%x: tensor<2x4xf32>) -> tensor<2xi32> {
  %r = relay.nn.relu %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %t = relay.tanh %r : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %m = relay.argmax %t {axis = [1]} : (tensor<2x4xf32>) -> tensor<2xi32>
  func.return %m : tensor<2xi32>
}

// CHECK:      func.func @main(%x: tensor<2x4xf32>) -> tensor<2xi32> {
// CHECK-NEXT:   %0 = relay.annotation.compiler_begin %x {compiler = "dnnl"}
// CHECK-NEXT:   %r = relay.nn.relu %0
// CHECK-NEXT:   %1 = relay.annotation.compiler_end %r {compiler = "dnnl"}
// CHECK-NEXT:   %2 = relay.annotation.compiler_begin %1 {compiler = "dnnl"}
// CHECK-NEXT:   %t = relay.tanh %2
// CHECK-NEXT:   %3 = relay.annotation.compiler_end %t {compiler = "dnnl"}
// CHECK-NEXT:   %4 = relay.annotation.compiler_begin %3 {compiler = "default"}
// CHECK-NEXT:   %m = relay.argmax %4 {axis = [1]}
// CHECK-NEXT:   %5 = relay.annotation.compiler_end %m {compiler = "default"}
// CHECK-NEXT:   func.return %5
