// RUN: relay-opt %s -p fold-constant --split-input-file | filecheck %s
// RUN: relay-opt %s -p 'fold-constant{max-elements=4}' --split-input-file | filecheck %s --check-prefix=LIMIT

// A constant chain collapses; the non-constant part stays.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %[[C:.*]] = relay.constant dense<[3.000000e+00, 7.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[R:.*]] = relay.add %x, %[[C]]
// CHECK-NEXT:    func.return %[[R]]
func.func @chain(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = relay.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = relay.constant dense<1.0> : tensor<f32>
  %c = relay.add %a, %b : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %d = relay.multiply %c, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %e = relay.subtract %d, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %f = relay.add %x, %e : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %f : tensor<2xf32>
}

// -----

// shape_of folds on a static shape even with a non-constant input; a dynamic one stays.
// CHECK-LABEL: func.func @shape
// CHECK-NEXT:    %[[S:.*]] = relay.constant dense<[1, 3, 4]> : tensor<3xi32>
// CHECK-NEXT:    %[[D:.*]] = relay.shape_of %y {dtype = "int64"} : (tensor<?x3xf32>) -> tensor<2xi64>
// CHECK-NEXT:    func.return %[[S]], %[[D]]
func.func @shape(%x: tensor<1x3x4xf32>, %y: tensor<?x3xf32>) -> (tensor<3xi32>, tensor<2xi64>) {
  %s = relay.shape_of %x : (tensor<1x3x4xf32>) -> tensor<3xi32>
  %d = relay.shape_of %y {dtype = "int64"} : (tensor<?x3xf32>) -> tensor<2xi64>
  func.return %s, %d : tensor<3xi32>, tensor<2xi64>
}

// -----

// Stateful dropout and device_copy are never evaluated.
// CHECK-LABEL: func.func @kept
// CHECK-NEXT:    %[[C:.*]] = relay.constant
// CHECK-NEXT:    %{{.*}}, %{{.*}} = relay.nn.dropout %[[C]]
// CHECK-NEXT:    %{{.*}} = relay.device_copy %[[C]]
func.func @kept() -> (tensor<2xf32>, tensor<2xf32>) {
  %c = relay.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %d, %m = relay.nn.dropout %c : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  %e = relay.device_copy %c {src_virtual_device = "cpu", dst_virtual_device = "cuda"} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %d, %e : tensor<2xf32>, tensor<2xf32>
}

// -----

// A folded weight keeps the name of its largest named input; multi-result ops fold the used results.
// CHECK-LABEL: func.func @named
// CHECK-NEXT:    %{{.*}} = relay.constant @w dense<{{\[}}[2.000000e+00, 4.000000e+00], [6.000000e+00, 8.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT:    %{{.*}} = relay.constant dense<[0, 1, 2]> : tensor<3xi32>
// CHECK-NOT:     relay.split
// LIMIT-LABEL: func.func @named
// LIMIT-NEXT:    %{{.*}} = relay.constant @w dense<{{\[}}[2.000000e+00, 4.000000e+00], [6.000000e+00, 8.000000e+00]]> : tensor<2x2xf32>
func.func @named() -> (tensor<2x2xf32>, tensor<3xi32>) {
  %w = relay.constant @w dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %s = relay.constant @s dense<[2.0, 2.0]> : tensor<2xf32>
  %y = relay.multiply %w, %s : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %r = relay.constant dense<[0, 1, 2, 3, 4, 5]> : tensor<6xi32>
  %p0, %p1 = relay.split %r {indices_or_sections = 2} : (tensor<6xi32>) -> (tensor<3xi32>, tensor<3xi32>)
  func.return %y, %p0 : tensor<2x2xf32>, tensor<3xi32>
}

// -----

// The size limit: a broadcast to 8 elements is not materialised with max-elements=4.
// CHECK-LABEL: func.func @big
// CHECK-NEXT:    %{{.*}} = relay.constant dense<1.000000e+00> : tensor<2x4xf32>
// LIMIT-LABEL: func.func @big
// LIMIT-NEXT:    %[[C:.*]] = relay.constant dense<1.000000e+00> : tensor<f32>
// LIMIT-NEXT:    relay.broadcast_to %[[C]]
func.func @big() -> tensor<2x4xf32> {
  %c = relay.constant dense<1.0> : tensor<f32>
  %b = relay.broadcast_to %c {shape = [2, 4]} : (tensor<f32>) -> tensor<2x4xf32>
  func.return %b : tensor<2x4xf32>
}

// -----

// argwhere of a constant folds to the rows found; its uses become static.
// CHECK-LABEL: func.func @argwhere(%x: tensor<4xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %{{.*}} = relay.constant dense<{{\[}}[1], [3]]> : tensor<2x1xi32>
// CHECK-NEXT:    %{{.*}} = relay.reshape %{{.*}} {newshape = [-1]} : (tensor<2x1xi32>) -> tensor<2xi32>
// CHECK-NEXT:    %{{.*}} = relay.take %x, %{{.*}} {axis = 0} : (tensor<4xf32>, tensor<2xi32>) -> tensor<2xf32>
func.func @argwhere(%x: tensor<4xf32>) -> tensor<?xf32> {
  %c = relay.constant dense<[0.0, 1.0, 0.0, 2.0]> : tensor<4xf32>
  %i = relay.argwhere %c : (tensor<4xf32>) -> tensor<?x1xi32>
  %j = relay.reshape %i {newshape = [-1]} : (tensor<?x1xi32>) -> tensor<?xi32>
  %y = relay.take %x, %j {axis = 0} : (tensor<4xf32>, tensor<?xi32>) -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}
