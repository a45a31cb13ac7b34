// RUN: relay-opt %s -p backward-fold-scale-axis --split-input-file | filecheck %s
// RUN: relay-opt %s -p backward-fold-scale-axis,fold-constant --split-input-file | filecheck %s --check-prefix=FOLD

// The seed example: conv2d then multiply by a (2,1,1) constant: the scale moves into the weight
// as Relay writes it, expand_dims(squeeze(scale)).
// CHECK-LABEL: func.func @seed
// CHECK-NEXT:    %w = relay.constant
// CHECK-NEXT:    %[[S:.*]] = relay.constant dense<{{\[\[\[}}2.000000e+00]], {{\[\[}}3.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-NEXT:    %[[Q:.*]] = relay.squeeze %[[S]] {axis = [1, 2]} : (tensor<2x1x1xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %[[SW:.*]] = relay.expand_dims %[[Q]] {axis = 1, num_newaxis = 3} : (tensor<2xf32>) -> tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[W:.*]] = relay.multiply %w, %[[SW]] : (tensor<2x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<2x1x3x3xf32>
// CHECK-NEXT:    %[[C:.*]] = relay.nn.conv2d %x, %[[W]] {padding = [1, 1, 1, 1], channels = 2, kernel_size = [3, 3]}
// CHECK-NEXT:    func.return %[[C]] : tensor<1x2x10x10xf32>
// FOLD-LABEL:  func.func @seed
// FOLD-NEXT:     %[[W:.*]] = relay.constant @w dense<{{\[\[\[}}[2.000000e+00, 2.000000e+00, 2.000000e+00], {{.*}} [3.000000e+00, 3.000000e+00, 3.000000e+00]]]]> : tensor<2x1x3x3xf32>
// FOLD-NEXT:     %[[C:.*]] = relay.nn.conv2d %x, %[[W]]
// FOLD-NEXT:     func.return %[[C]]
func.func @seed(%x: tensor<1x1x10x10xf32>) -> tensor<1x2x10x10xf32> {
  %w = relay.constant @w dense<1.0> : tensor<2x1x3x3xf32>
  %s = relay.constant dense<[[[2.0]], [[3.0]]]> : tensor<2x1x1xf32>
  %0 = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1], channels = 2, kernel_size = [3, 3]} : (tensor<1x1x10x10xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x10x10xf32>
  %1 = relay.multiply %0, %s : (tensor<1x2x10x10xf32>, tensor<2x1x1xf32>) -> tensor<1x2x10x10xf32>
  func.return %1 : tensor<1x2x10x10xf32>
}

// -----

// conv -> add(bias) -> relu -> multiply(positive scale), scale on the left: the bias is scaled too.
// CHECK-LABEL: func.func @chain
// CHECK:         %[[Q:.*]] = relay.squeeze %{{.*}} {axis = [1, 2]} : (tensor<2x1x1xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %[[SW:.*]] = relay.expand_dims %[[Q]] {axis = 1, num_newaxis = 3}
// CHECK-NEXT:    %[[W:.*]] = relay.multiply %w, %[[SW]] : (tensor<2x3x1x1xf32>, tensor<2x1x1x1xf32>)
// CHECK-NEXT:    %[[C:.*]] = relay.nn.conv2d %x, %[[W]]
// CHECK-NEXT:    %[[SB:.*]] = relay.expand_dims %[[Q]] {axis = 1, num_newaxis = 2} : (tensor<2xf32>) -> tensor<2x1x1xf32>
// CHECK-NEXT:    %[[B:.*]] = relay.multiply %b, %[[SB]] : (tensor<2x1x1xf32>, tensor<2x1x1xf32>)
// CHECK-NEXT:    %[[A:.*]] = relay.add %[[C]], %[[B]]
// CHECK-NEXT:    %[[R:.*]] = relay.nn.relu %[[A]]
// CHECK-NEXT:    func.return %[[R]]
// FOLD-LABEL:  func.func @chain
// FOLD:          %[[W:.*]] = relay.multiply %w
// FOLD-NEXT:     %[[C:.*]] = relay.nn.conv2d %x, %[[W]]
// FOLD-NEXT:     %[[B:.*]] = relay.constant dense<{{\[\[\[}}2.000000e+00]], {{\[\[}}-3.000000e+00]]]> : tensor<2x1x1xf32>
// FOLD-NEXT:     %[[A:.*]] = relay.add %[[C]], %[[B]]
// FOLD-NEXT:     %[[R:.*]] = relay.nn.relu %[[A]]
// FOLD-NEXT:     func.return %[[R]]
func.func @chain(%x: tensor<1x3x4x4xf32>, %w: tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %b = relay.constant dense<[[[1.0]], [[-1.0]]]> : tensor<2x1x1xf32>
  %0 = relay.nn.conv2d %x, %w : (tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = relay.add %0, %b : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %2 = relay.nn.relu %1 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = relay.constant dense<[[[2.0]], [[3.0]]]> : tensor<2x1x1xf32>
  %3 = relay.multiply %s, %2 : (tensor<2x1x1xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %3 : tensor<1x2x4x4xf32>
}

// -----

// Not folded: a negative scale behind a relu; a conv with two uses; a scale that is not per-channel.
// CHECK-LABEL: func.func @kept
// CHECK:         %[[C0:.*]] = relay.nn.conv2d %x, %w
// CHECK-NEXT:    %[[R:.*]] = relay.nn.relu %[[C0]]
// CHECK-NEXT:    relay.multiply %[[R]], %neg
// CHECK-NEXT:    %[[C1:.*]] = relay.nn.conv2d %x, %w
// CHECK-NEXT:    relay.multiply %[[C1]], %pos
// CHECK-NEXT:    relay.add %[[C1]]
// CHECK-NEXT:    %[[C2:.*]] = relay.nn.conv2d %x, %w
// CHECK-NEXT:    relay.multiply %[[C2]], %full
func.func @kept(%x: tensor<1x3x4x4xf32>, %w: tensor<2x3x1x1xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %neg = relay.constant dense<[[[2.0]], [[-3.0]]]> : tensor<2x1x1xf32>
  %pos = relay.constant dense<[[[2.0]], [[3.0]]]> : tensor<2x1x1xf32>
  %full = relay.constant dense<2.0> : tensor<1x2x4x4xf32>
  %0 = relay.nn.conv2d %x, %w : (tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = relay.nn.relu %0 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %2 = relay.multiply %1, %neg : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %3 = relay.nn.conv2d %x, %w : (tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xf32>
  %4 = relay.multiply %3, %pos : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %5 = relay.add %3, %4 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %6 = relay.nn.conv2d %x, %w : (tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xf32>
  %7 = relay.multiply %6, %full : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %2, %4, %5, %7 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// dense + bias_add + leaky_relu, and a residual add of two convs (both weights scaled).
// CHECK-LABEL: func.func @dense_and_residual
// CHECK:         %[[WD:.*]] = relay.multiply %wd, %{{.*}} : (tensor<3x5xf32>, tensor<3x1xf32>)
// CHECK-NEXT:    %[[D:.*]] = relay.nn.dense %v, %[[WD]]
// CHECK:         %[[BB:.*]] = relay.multiply %bd, %{{.*}} : (tensor<3xf32>, tensor<3xf32>)
// CHECK-NEXT:    %[[BA:.*]] = relay.nn.bias_add %[[D]], %[[BB]] {axis = -1}
// CHECK-NEXT:    relay.nn.leaky_relu %[[BA]] {alpha = 0.1}
// CHECK:         relay.multiply %w1
// CHECK-NEXT:    relay.nn.conv2d %x, %{{.*}}
// CHECK:         relay.multiply %w2
// CHECK-NEXT:    relay.nn.conv2d %x, %{{.*}}
// CHECK-NEXT:    %[[SUM:.*]] = relay.add
// CHECK-NEXT:    func.return %{{.*}}, %[[SUM]]
func.func @dense_and_residual(%v: tensor<4x5xf32>, %wd: tensor<3x5xf32>, %bd: tensor<3xf32>, %x: tensor<1x3x4x4xf32>, %w1: tensor<2x3x1x1xf32>, %w2: tensor<2x3x3x3xf32>) -> (tensor<4x3xf32>, tensor<1x2x4x4xf32>) {
  %0 = relay.nn.dense %v, %wd : (tensor<4x5xf32>, tensor<3x5xf32>) -> tensor<4x3xf32>
  %1 = relay.nn.bias_add %0, %bd {axis = -1} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %2 = relay.nn.leaky_relu %1 {alpha = 0.1} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %s = relay.constant dense<[1.0, 2.0, 4.0]> : tensor<3xf32>
  %3 = relay.multiply %2, %s : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %4 = relay.nn.conv2d %x, %w1 : (tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xf32>
  %5 = relay.nn.conv2d %x, %w2 {padding = [1, 1, 1, 1]} : (tensor<1x3x4x4xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x4x4xf32>
  %6 = relay.add %4, %5 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %t = relay.constant dense<[[[0.5]], [[-2.0]]]> : tensor<2x1x1xf32>
  %7 = relay.multiply %6, %t : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  func.return %3, %7 : tensor<4x3xf32>, tensor<1x2x4x4xf32>
}
