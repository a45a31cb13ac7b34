// RUN: relay-opt %s -p 'merge-composite{pattern-table=dnnl},annotate-target{targets=dnnl},merge-compiler-regions,partition-graph' --split-input-file | filecheck %s

// Relay's BYOC flow: the composite and the tanh after it form one dnnl region, outlined into
// tvmgen_default_dnnl_main_0 with Relay's attributes; the default max stays in main; the second
// dnnl region (after max) is tvmgen_default_dnnl_main_1
func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4x1x1xf32>) -> tensor<1x6x6xf32> {
  %c = relay.nn.conv2d %x, %w {channels = 4, kernel_size = [3, 3]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %a = relay.add %c, %b : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %r = relay.nn.relu %a : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %t = relay.tanh %r : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %m = relay.max %t {axis = [1]} : (tensor<1x4x6x6xf32>) -> tensor<1x6x6xf32>
  %s = relay.sigmoid %m : (tensor<1x6x6xf32>) -> tensor<1x6x6xf32>
  func.return %s : tensor<1x6x6xf32>
}

// CHECK:      func.func private @dnnl_conv2d_bias_relu(%p0: tensor<1x3x8x8xf32>, %p1: tensor<4x3x3x3xf32>, %p2: tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32> attributes {relay.composite = "dnnl.conv2d_bias_relu"
// CHECK:      func.func @tvmgen_default_dnnl_main_0(%dnnl_0_i0: tensor<1x3x8x8xf32>, %dnnl_0_i1: tensor<4x3x3x3xf32>, %dnnl_0_i2: tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32> attributes {relay.primitive = 1 : i64, relay.compiler = "dnnl", relay.global_symbol = "tvmgen_default_dnnl_main_0", relay.inline = 1 : i64} {
// CHECK-NEXT:   %r = func.call @dnnl_conv2d_bias_relu(%dnnl_0_i0, %dnnl_0_i1, %dnnl_0_i2)
// CHECK-NEXT:   %t = relay.tanh %r
// CHECK-NEXT:   func.return %t
// CHECK:      func.func @tvmgen_default_dnnl_main_1(%dnnl_1_i0: tensor<1x6x6xf32>) -> tensor<1x6x6xf32> attributes {relay.primitive = 1 : i64, relay.compiler = "dnnl", relay.global_symbol = "tvmgen_default_dnnl_main_1", relay.inline = 1 : i64} {
// CHECK-NEXT:   %s = relay.sigmoid %dnnl_1_i0
// CHECK-NEXT:   func.return %s
// CHECK:      func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4x1x1xf32>) -> tensor<1x6x6xf32> {
// CHECK-NEXT:   %0 = func.call @tvmgen_default_dnnl_main_0(%x, %w, %b)
// CHECK-NEXT:   %m = relay.max %0 {axis = [1]}
// CHECK-NEXT:   %1 = func.call @tvmgen_default_dnnl_main_1(%m)
// CHECK-NEXT:   func.return %1
// CHECK-NOT:  compiler_begin
// CHECK-NOT:  compiler_end

// -----

// a region with two outputs returns both; a constant used inside is copied in
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %k = relay.constant dense<2.0> : tensor<4xf32>
  %r = relay.nn.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %e = relay.exp %r : (tensor<4xf32>) -> tensor<4xf32>
  %m = relay.multiply %e, %k : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %e, %m : tensor<4xf32>, tensor<4xf32>
}

// CHECK:      func.func @tvmgen_default_dnnl_main_0(%dnnl_0_i0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT:   %k = relay.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK-NEXT:   %r = relay.nn.relu %dnnl_0_i0
// CHECK-NEXT:   %e = relay.exp %r
// CHECK-NEXT:   %m = relay.multiply %e, %k
// CHECK-NEXT:   func.return %e, %m
// CHECK:      func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
// CHECK-NEXT:   %0, %1 = func.call @tvmgen_default_dnnl_main_0(%x)
// CHECK-NEXT:   func.return %0, %1
