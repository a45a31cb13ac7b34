// RUN: relay-opt %s -p 'fake-quantization-to-integer{onnxruntime=true}' | filecheck %s
// RUN: relay-opt %s -p fake-quantization-to-integer | filecheck %s --check-prefix=RELAY

// onnxruntime=true: a float mean or sum is added in onnxruntime's order. Over trailing axes,
// Eigen's: row 0 (6 values from an aligned address) is one 4-float packet, then its 2-value
// tail; row 1 starts 2 floats past an aligned address, so its head is elements 6 and 7 and its
// packet 8..11. The elements are gathered to that layout (12 is the appended zero), the
// packets summed by cumsum, the lanes as (0 + 2) + (1 + 3), the head and tail by cumsum, then
// divided by the count.
// CHECK-LABEL: func.func @mean_rows(
// CHECK:      relay.constant dense<[[0, 1, 2, 3, 12, 12, 12, 12, 12, 12, 12, 12, 4, 5], [8, 9, 10, 11, 12, 12, 12, 12, 12, 12, 12, 12, 6, 7]]> : tensor<2x14xi32>
// CHECK-NEXT: %[[T:.*]] = relay.take
// CHECK:      relay.cumsum %{{.*}} {axis = 1} : (tensor<2x1x8xf32>)
// CHECK:      %[[L0:.*]] = relay.strided_slice %[[P:.*]] {begin = [0, 0], end = [2, 1]
// CHECK-NEXT: %[[L1:.*]] = relay.strided_slice %[[P]] {begin = [0, 1], end = [2, 2]
// CHECK-NEXT: %[[L2:.*]] = relay.strided_slice %[[P]] {begin = [0, 2], end = [2, 3]
// CHECK-NEXT: %[[L3:.*]] = relay.strided_slice %[[P]] {begin = [0, 3], end = [2, 4]
// CHECK-NEXT: %[[A:.*]] = relay.add %[[L0]], %[[L2]]
// CHECK-NEXT: %[[B:.*]] = relay.add %[[L1]], %[[L3]]
// CHECK-NEXT: %[[S:.*]] = relay.add %[[A]], %[[B]]
// CHECK-NEXT: relay.concatenate %[[S]], %{{.*}} {axis = 1} : (tensor<2x1xf32>, tensor<2x2xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: relay.cumsum
// CHECK-NEXT: relay.strided_slice %{{.*}} {begin = [0, 2], end = [2, 3]
// CHECK-NEXT: relay.constant dense<6.000000e+00> : tensor<f32>
// CHECK-NEXT: relay.divide
// CHECK-NOT:  relay.mean
// RELAY-LABEL: func.func @mean_rows(
// RELAY-NEXT:  relay.mean
func.func @mean_rows(%x: tensor<1x2x2x3xf32>) -> tensor<1x2x1x1xf32> {
  %y = relay.mean %x {axis = [2, 3], keepdims = true} : (tensor<1x2x2x3xf32>) -> tensor<1x2x1x1xf32>
  func.return %y : tensor<1x2x1x1xf32>
}

// Rows of 12 all start aligned: no gather; one packet pair (0..3, 4..7), then the odd packet
// 8..11 added to their sum, no head or tail, no division for a sum.
// CHECK-LABEL: func.func @sum_aligned(
// CHECK-NOT:  relay.take
// CHECK:      relay.strided_slice %[[R:.*]] {begin = [0, 0], end = [2, 8]
// CHECK:      relay.cumsum %{{.*}} {axis = 1} : (tensor<2x1x8xf32>)
// CHECK:      %[[PAIR:.*]] = relay.add
// CHECK-NEXT: %[[ODD:.*]] = relay.strided_slice %[[R]] {begin = [0, 8], end = [2, 12]
// CHECK-NEXT: relay.add %[[PAIR]], %[[ODD]]
// CHECK-NOT:  relay.divide
// CHECK:      func.return
func.func @sum_aligned(%x: tensor<2x12xf32>) -> tensor<2xf32> {
  %y = relay.sum %x {axis = [1]} : (tensor<2x12xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// Over leading axes onnxruntime adds the rows one after another: cumsum's last row.
// CHECK-LABEL: func.func @mean_leading(
// CHECK:      relay.cumsum %{{.*}} {axis = 0} : (tensor<3x4xf32>)
// CHECK-NEXT: relay.strided_slice %{{.*}} {begin = [2, 0], end = [3, 4]
// CHECK-NEXT: relay.constant dense<3.000000e+00>
// CHECK-NEXT: relay.divide
func.func @mean_leading(%x: tensor<3x4xf32>) -> tensor<4xf32> {
  %y = relay.mean %x {axis = [0]} : (tensor<3x4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// A middle axis: onnxruntime's order there is not written; the mean stays.
// CHECK-LABEL: func.func @mean_middle(
// CHECK-NEXT:  %y = relay.mean %x {axis = [1]}
func.func @mean_middle(%x: tensor<3x4x5xf32>) -> tensor<3x5xf32> {
  %y = relay.mean %x {axis = [1]} : (tensor<3x4x5xf32>) -> tensor<3x5xf32>
  func.return %y : tensor<3x5xf32>
}

// The mean of a per-tensor dequantize of 8-bit values: one qnn.dequantize_sum of the 8-bit
// tensor in Eigen's order (trailing axes), no float copy, then the division.
// CHECK-LABEL: func.func @mean_of_dequantized(
// CHECK-NOT:  qnn.dequantize %
// CHECK:      %[[S:.*]] = qnn.dequantize_sum %q, %{{.*}}, %{{.*}} {axes = [2, 3], order = "eigen"} : (tensor<1x5x3x3xui8>, tensor<f32>, tensor<i32>) -> tensor<1x5x1x1xf32>
// CHECK-NEXT: relay.constant dense<9.000000e+00> : tensor<f32>
// CHECK-NEXT: relay.divide %[[S]]
// CHECK-NOT:  relay.take
// CHECK-NOT:  relay.cumsum
// RELAY-LABEL: func.func @mean_of_dequantized(
// RELAY:       relay.mean
func.func @mean_of_dequantized(%q: tensor<1x5x3x3xui8>) -> tensor<1x5x1x1xf32> {
  %s = relay.constant dense<0.5> : tensor<f32>
  %z = relay.constant dense<3> : tensor<i32>
  %x = qnn.dequantize %q, %s, %z : (tensor<1x5x3x3xui8>, tensor<f32>, tensor<i32>) -> tensor<1x5x3x3xf32>
  %y = relay.mean %x {axis = [2, 3], keepdims = true} : (tensor<1x5x3x3xf32>) -> tensor<1x5x1x1xf32>
  func.return %y : tensor<1x5x1x1xf32>
}

// Over leading axes: first to last along them (order = "sequential", the default).
// CHECK-LABEL: func.func @sum_leading_of_dequantized(
// CHECK:      qnn.dequantize_sum %q, %{{.*}}, %{{.*}} {axes = [0]} : (tensor<6x4xi8>, tensor<f32>, tensor<i32>) -> tensor<1x4xf32>
// CHECK-NOT:  relay.cumsum
func.func @sum_leading_of_dequantized(%q: tensor<6x4xi8>) -> tensor<4xf32> {
  %s = relay.constant dense<0.5> : tensor<f32>
  %z = relay.constant dense<-3> : tensor<i32>
  %x = qnn.dequantize %q, %s, %z : (tensor<6x4xi8>, tensor<f32>, tensor<i32>) -> tensor<6x4xf32>
  %y = relay.sum %x {axis = [0]} : (tensor<6x4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
