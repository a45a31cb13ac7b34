// RUN: relay-opt %s -p 'drop-softmax-guard' --split-input-file | filecheck %s

// The guard torch's _safe_softmax imports as (any(x != -inf) along the axis), on scores of
// layer-normalised queries (times a weight) and keys, scaled: no infinity can reach the
// softmax, the guard goes.
// CHECK-LABEL: func.func @unmasked(
// CHECK-NEXT: %g = relay.constant
// CHECK-NEXT: %b = relay.constant
// CHECK-NEXT: %w = relay.constant
// CHECK-NEXT: %n = relay.nn.layer_norm %q, %g, %b
// CHECK-NEXT: %kn = relay.nn.layer_norm %k, %g, %b
// CHECK-NEXT: %p = relay.nn.dense %n, %w
// CHECK-NEXT: %s = relay.nn.batch_matmul %p, %kn
// CHECK-NEXT: %c = relay.constant
// CHECK-NEXT: %x = relay.multiply %s, %c
// CHECK-NEXT: %sm = relay.nn.softmax %x
// CHECK-NEXT: func.return %sm
func.func @unmasked(%q: tensor<2x3x4xf32>, %k: tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  %g = relay.constant dense<[1.0, 0.5, 2.0, 1.5]> : tensor<4xf32>
  %b = relay.constant dense<[0.0, 0.1, -0.1, 0.2]> : tensor<4xf32>
  %w = relay.constant dense<[[1.0, 0.0, 0.5, -1.0], [0.5, 1.0, 0.0, 0.25], [0.0, -0.5, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0]]> : tensor<4x4xf32>
  %n = relay.nn.layer_norm %q, %g, %b : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %kn = relay.nn.layer_norm %k, %g, %b : (tensor<2x5x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x5x4xf32>
  %p = relay.nn.dense %n, %w {units = 4} : (tensor<2x3x4xf32>, tensor<4x4xf32>) -> tensor<2x3x4xf32>
  %s = relay.nn.batch_matmul %p, %kn {transpose_b = true} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32>
  %c = relay.constant dense<0.5> : tensor<f32>
  %x = relay.multiply %s, %c : (tensor<2x3x5xf32>, tensor<f32>) -> tensor<2x3x5xf32>
  %sm = relay.nn.softmax %x : (tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %inf = relay.constant dense<0xFF800000> : tensor<f32>
  %ne = relay.not_equal %x, %inf : (tensor<2x3x5xf32>, tensor<f32>) -> tensor<2x3x5xi1>
  %i = relay.cast %ne {dtype = "int32"} : (tensor<2x3x5xi1>) -> tensor<2x3x5xi32>
  %m = relay.max %i {axis = [2], keepdims = true} : (tensor<2x3x5xi32>) -> tensor<2x3x1xi32>
  %live = relay.cast %m {dtype = "bool"} : (tensor<2x3x1xi32>) -> tensor<2x3x1xi1>
  %zero = relay.constant dense<0.0> : tensor<f32>
  %y = relay.where %live, %sm, %zero : (tensor<2x3x1xi1>, tensor<2x3x5xf32>, tensor<f32>) -> tensor<2x3x5xf32>
  func.return %y : tensor<2x3x5xf32>
}

// -----

// torch's decomposed spelling (eq, logical_not, any over the axis as -1, logical_not,
// where(dead, zeros, softmax)), with a finite constant mask added: the guard goes.
// CHECK-LABEL: func.func @decomposed_finite_mask(
// CHECK: %x = relay.add %s, %mask
// CHECK-NEXT: %sm = relay.nn.softmax %x {axis = 1}
// CHECK-NEXT: func.return %sm
func.func @decomposed_finite_mask(%a: tensor<3x4xf32>, %b: tensor<5x4xf32>) -> tensor<3x5xf32> {
  %g = relay.constant dense<1.0> : tensor<4xf32>
  %z4 = relay.constant dense<0.0> : tensor<4xf32>
  %na = relay.nn.layer_norm %a, %g, %z4 : (tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %nb = relay.nn.layer_norm %b, %g, %z4 : (tensor<5x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<5x4xf32>
  %s = relay.nn.dense %na, %nb {units = 5} : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
  %mask = relay.constant dense<[[0.0, -100.0, 0.0, 0.0, -3.0]]> : tensor<1x5xf32>
  %x = relay.add %s, %mask : (tensor<3x5xf32>, tensor<1x5xf32>) -> tensor<3x5xf32>
  %sm = relay.nn.softmax %x {axis = 1} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %inf = relay.constant dense<0xFF800000> : tensor<f32>
  %eq = relay.equal %x, %inf : (tensor<3x5xf32>, tensor<f32>) -> tensor<3x5xi1>
  %ne = relay.logical_not %eq : (tensor<3x5xi1>) -> tensor<3x5xi1>
  %i = relay.cast %ne {dtype = "int32"} : (tensor<3x5xi1>) -> tensor<3x5xi32>
  %m = relay.max %i {axis = [-1], keepdims = true} : (tensor<3x5xi32>) -> tensor<3x1xi32>
  %any = relay.cast %m {dtype = "bool"} : (tensor<3x1xi32>) -> tensor<3x1xi1>
  %dead = relay.logical_not %any : (tensor<3x1xi1>) -> tensor<3x1xi1>
  %zeros = relay.constant dense<0.0> : tensor<3x5xf32>
  %y = relay.where %dead, %zeros, %sm : (tensor<3x1xi1>, tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return %y : tensor<3x5xf32>
}

// -----

// A mask given at run time, or one of -inf (causal), may make a row all -inf: the guard
// stays. So does a guard along another axis than the softmax's.
// CHECK-LABEL: func.func @kept(
// CHECK-COUNT-3: relay.where
// CHECK: func.return
func.func @kept(%a: tensor<3x4xf32>, %mask: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  %g = relay.constant dense<1.0> : tensor<4xf32>
  %z4 = relay.constant dense<0.0> : tensor<4xf32>
  %n = relay.nn.layer_norm %a, %g, %z4 : (tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %inf = relay.constant dense<0xFF800000> : tensor<f32>
  %zero = relay.constant dense<0.0> : tensor<f32>
  %x1 = relay.add %n, %mask : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %s1 = relay.nn.softmax %x1 : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %ne1 = relay.not_equal %x1, %inf : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xi1>
  %i1 = relay.cast %ne1 {dtype = "int32"} : (tensor<3x4xi1>) -> tensor<3x4xi32>
  %m1 = relay.max %i1 {axis = [1], keepdims = true} : (tensor<3x4xi32>) -> tensor<3x1xi32>
  %l1 = relay.cast %m1 {dtype = "bool"} : (tensor<3x1xi32>) -> tensor<3x1xi1>
  %y1 = relay.where %l1, %s1, %zero : (tensor<3x1xi1>, tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  %tri = relay.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false]]> : tensor<3x4xi1>
  %x2 = relay.where %tri, %n, %inf : (tensor<3x4xi1>, tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  %s2 = relay.nn.softmax %x2 : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %ne2 = relay.not_equal %x2, %inf : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xi1>
  %i2 = relay.cast %ne2 {dtype = "int32"} : (tensor<3x4xi1>) -> tensor<3x4xi32>
  %m2 = relay.max %i2 {axis = [1], keepdims = true} : (tensor<3x4xi32>) -> tensor<3x1xi32>
  %l2 = relay.cast %m2 {dtype = "bool"} : (tensor<3x1xi32>) -> tensor<3x1xi1>
  %y2 = relay.where %l2, %s2, %zero : (tensor<3x1xi1>, tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  %s3 = relay.nn.softmax %n {axis = 1} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %ne3 = relay.not_equal %n, %inf : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xi1>
  %i3 = relay.cast %ne3 {dtype = "int32"} : (tensor<3x4xi1>) -> tensor<3x4xi32>
  %m3 = relay.max %i3 {axis = [0], keepdims = true} : (tensor<3x4xi32>) -> tensor<1x4xi32>
  %l3 = relay.cast %m3 {dtype = "bool"} : (tensor<1x4xi32>) -> tensor<1x4xi1>
  %y3 = relay.where %l3, %s3, %zero : (tensor<1x4xi1>, tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  func.return %y1, %y2, %y3 : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}
