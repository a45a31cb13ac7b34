// RUN: relay-opt %s -p 'partition-for-engines{engines=dnnl}' | filecheck %s

// A per-feature scale and shift before a matmul by a constant weight (a layer norm's affine
// that two layers' norms of one input share the normalisation of: Falcon's parallel
// attention and MLP) go into the matmul: the weight's columns scaled, the shift through
// the weight a bias (joined to the matmul's own bias). A single factor is no per-feature
// affine (GELU's 0.5 stays with its activation): that product stays.

// CHECK:      func.func private @dnnl_dense_bias{{.*}} attributes {relay.composite = "dnnl.dense_bias"
// CHECK-NEXT:   relay.nn.dense
// CHECK-NEXT:   relay.add
// CHECK-NEXT:   func.return
// CHECK:      func.func @main
// CHECK:        %[[W:.*]] = relay.constant dense<{{\[\[}}2.500000e-01, 5.000000e-01, 7.500000e-01, 1.000000e+00], [5.000000e-01, 1.000000e+00, 1.500000e+00, -1.000000e+00]]> : tensor<2x4xf32>
// CHECK-NEXT:   %[[B:.*]] = relay.constant dense<[4.000000e+00, 5.000000e+00]> : tensor<2xf32>
// CHECK:        %[[B2:.*]] = relay.constant dense<[2.750000e+00, 3.750000e+00]> : tensor<2xf32>
// CHECK-NEXT:   relay.multiply %x, %half
// CHECK-NEXT:   func.call @{{.*}}(%x, %[[W]], %[[B]])
// CHECK-NEXT:   func.call @{{.*}}(%x, %{{.*}}, %[[B2]])
// CHECK-NOT:    relay.multiply
// CHECK:        func.return

func.func @main(%x: tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) {
  %g = relay.constant dense<[0.25, 0.5, 0.75, 1.0]> : tensor<4xf32>
  %b = relay.constant dense<[1.0, 1.0, 1.0, 1.0]> : tensor<4xf32>
  %w = relay.constant dense<[[1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, -1.0]]> : tensor<2x4xf32>
  %own = relay.constant dense<[-1.25, -1.25]> : tensor<2xf32>
  %half = relay.constant dense<0.5> : tensor<f32>
  %m = relay.multiply %x, %g : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %a = relay.add %m, %b : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %d = relay.nn.dense %a, %w {units = 2} : (tensor<3x4xf32>, tensor<2x4xf32>) -> tensor<3x2xf32>
  %a2 = relay.add %b, %x : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %d2 = relay.nn.dense %a2, %w {units = 2} : (tensor<3x4xf32>, tensor<2x4xf32>) -> tensor<3x2xf32>
  %o2 = relay.add %d2, %own : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %s = relay.multiply %x, %half : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  %d3 = relay.nn.dense %s, %w {units = 2} : (tensor<3x4xf32>, tensor<2x4xf32>) -> tensor<3x2xf32>
  func.return %d, %o2, %d3 : tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>
}
