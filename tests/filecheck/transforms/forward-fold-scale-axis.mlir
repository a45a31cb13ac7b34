// RUN: relay-opt %s -p forward-fold-scale-axis --split-input-file | filecheck %s
// RUN: relay-opt %s -p forward-fold-scale-axis,fold-constant --split-input-file | filecheck %s --check-prefix=FOLD

// multiply -> add -> relu -> conv2d: the batch norm before a conv (NCHW, OIHW).
// CHECK-LABEL: func.func @bn_relu_conv
// CHECK:         %[[D:.*]] = relay.divide %b, %{{.*}} : (tensor<2x1x1xf32>, tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
// CHECK-NEXT:    %[[A:.*]] = relay.add %x, %[[D]]
// CHECK-NEXT:    %[[R:.*]] = relay.nn.relu %[[A]]
// The weight factor is Relay's expression: the scale squeezed to (I,), expanded to (I, 1, 1)
// from the kernel's I axis on (fold-constant folds it).
// CHECK-NEXT:    %[[SW:.*]] = relay.expand_dims %[[SQ:.*]] {axis = 1, num_newaxis = 2} : (tensor<2xf32>) -> tensor<2x1x1xf32>
// CHECK-NEXT:    %[[W:.*]] = relay.multiply %w, %[[SW]]
// CHECK-NEXT:    %[[C:.*]] = relay.nn.conv2d %[[R]], %[[W]]
// CHECK-NEXT:    func.return %[[C]]
// FOLD-LABEL:  func.func @bn_relu_conv
// FOLD-NEXT:     %[[B:.*]] = relay.constant dense<{{\[\[\[}}5.000000e-01]], {{\[\[}}-2.500000e-01]]]> : tensor<2x1x1xf32>
// FOLD-NEXT:     %[[A:.*]] = relay.add %x, %[[B]]
// FOLD-NEXT:     %[[R:.*]] = relay.nn.relu %[[A]]
// FOLD-NEXT:     %[[W:.*]] = relay.constant @w dense<{{.*}}> : tensor<3x2x3x3xf32>
// FOLD-NEXT:     %[[C:.*]] = relay.nn.conv2d %[[R]], %[[W]]
// FOLD-NEXT:     func.return %[[C]]
func.func @bn_relu_conv(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %s = relay.constant dense<[[[2.0]], [[4.0]]]> : tensor<2x1x1xf32>
  %b = relay.constant dense<[[[1.0]], [[-1.0]]]> : tensor<2x1x1xf32>
  %w = relay.constant @w dense<1.0> : tensor<3x2x3x3xf32>
  %0 = relay.multiply %x, %s : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = relay.add %0, %b : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %2 = relay.nn.relu %1 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %3 = relay.nn.conv2d %2, %w {padding = [1, 1, 1, 1]} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x4x4xf32>
  func.return %3 : tensor<1x3x4x4xf32>
}

// -----

// A scaled value feeding two convs folds into both weights; NHWC/HWIO layouts.
// CHECK-LABEL: func.func @two_convs
// CHECK-NOT:     relay.multiply %x
// CHECK:         relay.multiply %w1, %{{.*}} : (tensor<1x1x2x3xf32>, tensor<2x1xf32>)
// CHECK:         relay.nn.conv2d %x
// CHECK:         relay.multiply %w2, %{{.*}} : (tensor<1x1x2x5xf32>, tensor<2x1xf32>)
// CHECK:         relay.nn.conv2d %x
func.func @two_convs(%x: tensor<1x4x4x2xf32>, %w1: tensor<1x1x2x3xf32>, %w2: tensor<1x1x2x5xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x5xf32>) {
  %s = relay.constant dense<[-2.0, 3.0]> : tensor<2xf32>
  %0 = relay.multiply %x, %s : (tensor<1x4x4x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %1 = relay.nn.conv2d %0, %w1 {data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %2 = relay.nn.conv2d %0, %w2 {data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x4x4x2xf32>, tensor<1x1x2x5xf32>) -> tensor<1x4x4x5xf32>
  func.return %1, %2 : tensor<1x4x4x3xf32>, tensor<1x4x4x5xf32>
}

// -----

// Not folded: a negative scale before a relu; a scaled value also returned; a non-constant scale.
// CHECK-LABEL: func.func @kept
// CHECK-NEXT:    %neg = relay.constant
// CHECK-NEXT:    %[[M0:.*]] = relay.multiply %x, %neg
// CHECK-NEXT:    %[[R:.*]] = relay.nn.relu %[[M0]]
// CHECK-NEXT:    relay.nn.conv2d %[[R]], %w
// CHECK-NEXT:    %[[M1:.*]] = relay.multiply %x, %neg
// CHECK-NEXT:    relay.nn.conv2d %[[M1]], %w
// CHECK-NEXT:    %[[M2:.*]] = relay.multiply %x, %v
// CHECK-NEXT:    relay.nn.conv2d %[[M2]], %w
func.func @kept(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32>, %v: tensor<2x1x1xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x3x4x4xf32>) {
  %neg = relay.constant dense<[[[2.0]], [[-1.0]]]> : tensor<2x1x1xf32>
  %0 = relay.multiply %x, %neg : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = relay.nn.relu %0 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %2 = relay.nn.conv2d %1, %w : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %3 = relay.multiply %x, %neg : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %4 = relay.nn.conv2d %3, %w : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %5 = relay.multiply %x, %v : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %6 = relay.nn.conv2d %5, %w : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  func.return %2, %4, %3, %6 : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x3x4x4xf32>
}

// -----

// Depthwise conv (groups = channels) and dense: the scale goes to each group's kernel / each column.
// CHECK-LABEL: func.func @depthwise_dense
// CHECK:         %[[SW:.*]] = relay.constant dense<{{\[\[\[\[}}2.000000e+00]]], {{\[\[\[}}2.000000e+00]]], {{\[\[\[}}3.000000e+00]]], {{\[\[\[}}3.000000e+00]]]]> : tensor<4x1x1x1xf32>
// CHECK-NEXT:    relay.multiply %w, %[[SW]]
// CHECK-NEXT:    relay.nn.conv2d %x, %{{.*}} {groups = 2}
// A scale that is the channel vector already multiplies the weight itself, as in Relay.
// CHECK:         relay.multiply %wd, %t
// CHECK-NEXT:    relay.nn.dense %v
func.func @depthwise_dense(%x: tensor<1x2x4x4xf32>, %w: tensor<4x1x1x1xf32>, %v: tensor<5x3xf32>, %wd: tensor<6x3xf32>) -> (tensor<1x4x4x4xf32>, tensor<5x6xf32>) {
  %s = relay.constant dense<[[[2.0]], [[3.0]]]> : tensor<2x1x1xf32>
  %0 = relay.multiply %x, %s : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = relay.nn.conv2d %0, %w {groups = 2} : (tensor<1x2x4x4xf32>, tensor<4x1x1x1xf32>) -> tensor<1x4x4x4xf32>
  %t = relay.constant dense<[1.0, 0.5, 2.0]> : tensor<3xf32>
  %2 = relay.multiply %t, %v : (tensor<3xf32>, tensor<5x3xf32>) -> tensor<5x3xf32>
  %3 = relay.nn.dense %2, %wd : (tensor<5x3xf32>, tensor<6x3xf32>) -> tensor<5x6xf32>
  func.return %1, %3 : tensor<1x4x4x4xf32>, tensor<5x6xf32>
}

// -----

// Blocked layouts (Relay's NCHW{n}c case): the scale runs along C and c, the kernel's I and i.
// CHECK-LABEL: func.func @blocked
// CHECK:         %[[D:.*]] = relay.divide %b, %{{.*}} : (tensor<1x2x1x1x2xf32>, tensor<1x2x1x1x2xf32>)
// CHECK-NEXT:    %[[A:.*]] = relay.add %x, %[[D]]
// CHECK:         %[[SW:.*]] = relay.reshape %{{.*}} {newshape = [1, 2, 1, 1, 2, 1]} : (tensor<2x2xf32>) -> tensor<1x2x1x1x2x1xf32>
// CHECK-NEXT:    %[[W:.*]] = relay.multiply %w, %[[SW]] : (tensor<4x2x3x3x2x2xf32>, tensor<1x2x1x1x2x1xf32>)
// CHECK-NEXT:    relay.nn.conv2d %[[A]], %[[W]] {{.*}}data_layout = "NCHW2c", kernel_layout = "OIHW2i2o"
func.func @blocked(%x: tensor<1x2x4x4x2xf32>, %b: tensor<1x2x1x1x2xf32>, %w: tensor<4x2x3x3x2x2xf32>) -> tensor<1x4x4x4x2xf32> {
  %s = relay.constant dense<[[[[[1.0, 2.0]]], [[[3.0, 4.0]]]]]> : tensor<1x2x1x1x2xf32>
  %0 = relay.multiply %x, %s : (tensor<1x2x4x4x2xf32>, tensor<1x2x1x1x2xf32>) -> tensor<1x2x4x4x2xf32>
  %1 = relay.add %0, %b : (tensor<1x2x4x4x2xf32>, tensor<1x2x1x1x2xf32>) -> tensor<1x2x4x4x2xf32>
  %2 = relay.nn.conv2d %1, %w {padding = [1, 1, 1, 1], data_layout = "NCHW2c", kernel_layout = "OIHW2i2o"} : (tensor<1x2x4x4x2xf32>, tensor<4x2x3x3x2x2xf32>) -> tensor<1x4x4x4x2xf32>
  func.return %2 : tensor<1x4x4x4x2xf32>
}
