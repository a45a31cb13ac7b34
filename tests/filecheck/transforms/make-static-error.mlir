// RUN: not relay-opt %s -p make-static 2>&1 | filecheck %s

// a shape known only at run time is an error naming the op, its result and the operand
// CHECK: relay-opt: error: make-static: dyn.reshape (result %y) has 'newshape' (%s) known only at run time
// CHECK-NOT: Traceback
func.func @runtime_shape(%x: tensor<2x3xf32>, %s: tensor<2xi64>) -> tensor<?x?xf32> {
  %y = dyn.reshape %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
