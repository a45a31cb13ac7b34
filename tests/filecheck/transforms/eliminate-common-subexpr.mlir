// RUN: relay-opt %s -p eliminate-common-subexpr --split-input-file | filecheck %s

// Same op, same operands, same attributes: merged; different attributes: kept.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %a = relay.nn.relu %x
// CHECK-NEXT:    %c = relay.add %a, %a
// CHECK-NEXT:    %d = relay.nn.leaky_relu %x {alpha = 0.1}
// CHECK-NEXT:    %e = relay.nn.leaky_relu %x {alpha = 0.2}
// CHECK-NEXT:    %f = relay.add %d, %e
// CHECK-NEXT:    %g = relay.add %c, %f
// CHECK-NEXT:    func.return %g
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = relay.nn.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = relay.nn.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %c = relay.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d = relay.nn.leaky_relu %x {alpha = 0.1} : (tensor<4xf32>) -> tensor<4xf32>
  %e = relay.nn.leaky_relu %x {alpha = 0.2} : (tensor<4xf32>) -> tensor<4xf32>
  %f = relay.add %d, %e : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g = relay.add %c, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %g : tensor<4xf32>
}

// -----

// Stateful dropouts are never merged; equal constants are; multi-result batch_norm as a whole.
// CHECK-LABEL: func.func @stateful
// CHECK-NEXT:    %a, %am = relay.nn.dropout %x
// CHECK-NEXT:    %b, %bm = relay.nn.dropout %x
// CHECK-NEXT:    %c1 = relay.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK-NEXT:    %s = relay.add %a, %b
// CHECK-NEXT:    %t = relay.add %s, %c1
// CHECK-NEXT:    %u = relay.add %t, %c1
// CHECK-NEXT:    %n1, %n1m, %n1v = relay.nn.batch_norm %x, %c1, %c1, %c1, %c1
// CHECK-NEXT:    %v = relay.add %n1, %n1
// CHECK-NEXT:    %w = relay.add %u, %v
// CHECK-NEXT:    func.return %w
func.func @stateful(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a, %am = relay.nn.dropout %x : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %b, %bm = relay.nn.dropout %x : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %c1 = relay.constant dense<2.0> : tensor<4xf32>
  %c2 = relay.constant dense<2.0> : tensor<4xf32>
  %s = relay.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %t = relay.add %s, %c1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %u = relay.add %t, %c2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %n1, %n1m, %n1v = relay.nn.batch_norm %x, %c1, %c1, %c1, %c1 {axis = 0} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %n2, %n2m, %n2v = relay.nn.batch_norm %x, %c2, %c2, %c2, %c2 {axis = 0} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %v = relay.add %n1, %n2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %w = relay.add %u, %v : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %w : tensor<4xf32>
}
