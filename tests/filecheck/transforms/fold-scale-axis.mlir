// RUN: relay-opt %s -p backward-fold-scale-axis,forward-fold-scale-axis,fold-constant | filecheck %s
// RUN: relay-opt %s -p fold-scale-axis | filecheck %s
// RUN: relay-opt %s -p fold-scale-axis -O2 --disable-pass=FuseOps | filecheck %s --check-prefix=O2

// fold-scale-axis is Relay's Sequential of the three passes above, whose first two have
// opt_level 3. relay-opt's context has opt level 3 unless -O says otherwise, so the composite
// does all its parts; at -O2 they are skipped, as in Relay, and the scales stay.
// O2: relay.multiply %0, %s1
// O2: relay.multiply %2, %s2

// conv -> bn (multiply, add) -> relu -> bn (multiply, add) -> relu -> conv: the first bn scale
// folds backward into @w1, the second forward into @w2; only the shifts remain.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[B1:.*]] = relay.constant dense<1.000000e+00> : tensor<2x1x1xf32>
// CHECK-NEXT:    %[[W1:.*]] = relay.constant @w1 dense<{{\[\[\[\[}}2.000000e+00]], {{\[\[}}2.000000e+00]]], {{\[\[\[}}-3.000000e+00]], {{\[\[}}-3.000000e+00]]]]> : tensor<2x2x1x1xf32>
// CHECK-NEXT:    %[[C1:.*]] = relay.nn.conv2d %x, %[[W1]]
// CHECK-NEXT:    %[[A1:.*]] = relay.add %[[C1]], %[[B1]]
// CHECK-NEXT:    %[[B2:.*]] = relay.constant dense<{{\[\[\[}}2.500000e-01]], {{\[\[}}5.000000e-01]]]> : tensor<2x1x1xf32>
// CHECK-NEXT:    %[[A2:.*]] = relay.add %[[A1]], %[[B2]]
// CHECK-NEXT:    %[[R:.*]] = relay.nn.relu %[[A2]]
// CHECK-NEXT:    %[[W2:.*]] = relay.constant @w2 dense<{{\[\[\[\[}}4.000000e+00]], {{\[\[}}2.000000e+00]]]]> : tensor<1x2x1x1xf32>
// CHECK-NEXT:    %[[C2:.*]] = relay.nn.conv2d %[[R]], %[[W2]]
// CHECK-NEXT:    func.return %[[C2]]
func.func @main(%x: tensor<1x2x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %w1 = relay.constant @w1 dense<1.0> : tensor<2x2x1x1xf32>
  %w2 = relay.constant @w2 dense<1.0> : tensor<1x2x1x1xf32>
  %s1 = relay.constant dense<[[[2.0]], [[-3.0]]]> : tensor<2x1x1xf32>
  %b1 = relay.constant dense<[[[1.0]], [[1.0]]]> : tensor<2x1x1xf32>
  %s2 = relay.constant dense<[[[4.0]], [[2.0]]]> : tensor<2x1x1xf32>
  %b2 = relay.constant dense<[[[1.0]], [[1.0]]]> : tensor<2x1x1xf32>
  %0 = relay.nn.conv2d %x, %w1 : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = relay.multiply %0, %s1 : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %2 = relay.add %1, %b1 : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %3 = relay.multiply %2, %s2 : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %4 = relay.add %3, %b2 : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %5 = relay.nn.relu %4 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %6 = relay.nn.conv2d %5, %w2 : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x4x4xf32>
  func.return %6 : tensor<1x1x4x4xf32>
}
