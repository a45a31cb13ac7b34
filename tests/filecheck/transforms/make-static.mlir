// RUN: relay-opt %s -p make-static --split-input-file | filecheck %s

// dyn ops whose shape operands are constants become their static ops
// CHECK-LABEL: func.func @consts
// CHECK-NEXT:    %y = relay.reshape %x {newshape = [3, 2]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    func.return %y
func.func @consts(%x: tensor<2x3xf32>) -> tensor<?x?xf32> {
  %s = relay.constant dense<[3, 2]> : tensor<2xi64>
  %y = dyn.reshape %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// -----

// without dyn ops nothing changes: the constant arithmetic is not folded (dynamic-to-static
// would fold it)
// CHECK-LABEL: func.func @no_dyn
// CHECK-NEXT:    %a = relay.constant dense<1.000000e+00> : tensor<2xf32>
// CHECK-NEXT:    %b = relay.add %a, %a
// CHECK-NEXT:    %y = relay.add %x, %b
func.func @no_dyn(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = relay.constant dense<1.0> : tensor<2xf32>
  %b = relay.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %y = relay.add %x, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
