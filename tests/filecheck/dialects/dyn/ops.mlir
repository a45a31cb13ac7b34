// RUN: relay-opt %s | filecheck %s
// RUN: relay-opt %s --print-op-generic | relay-opt | filecheck %s

// Every dyn op round-trips in the relay syntax and in generic form.
// CHECK:      %r = dyn.reshape %x, %s {allowzero = true} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
// CHECK-NEXT: %b = dyn.broadcast_to %x, %s3 : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
// CHECK-NEXT: %t = dyn.tile %x, %s3 : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
// CHECK-NEXT: %sl = dyn.strided_slice %x, %i1, %i1, %i1 {slice_mode = "size"} : (tensor<2x3xf32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?x3xf32>
// CHECK-NEXT: %e = dyn.expand_dims %x, %a {num_newaxis = 2} : (tensor<2x3xf32>, tensor<i64>) -> tensor<?x?x?x?xf32>
// CHECK-NEXT: %q = dyn.squeeze %x, %i1 : (tensor<2x3xf32>, tensor<1xi32>) -> tensor<?xf32>
// CHECK-NEXT: %f = dyn.full %v, %s {dtype = "float64"} : (tensor<f32>, tensor<2xi64>) -> tensor<?x?xf64>
// CHECK-NEXT: %z = dyn.zeros %s {dtype = "int8"} : (tensor<2xi64>) -> tensor<?x?xi8>
// CHECK-NEXT: %o = dyn.ones %s {dtype = "bool"} : (tensor<2xi64>) -> tensor<?x?xi1>
// CHECK-NEXT: %p = dyn.nn.pad %x, %w, %v {pad_mode = "edge"} : (tensor<2x3xf32>, tensor<2x2xi64>, tensor<f32>) -> tensor<?x?xf32>
// CHECK-NEXT: %u = dyn.nn.upsampling %im, %v, %v {method = "bilinear"} : (tensor<1x2x4x4xf32>, tensor<f32>, tensor<f32>) -> tensor<1x2x?x?xf32>
// CHECK-NEXT: %rs = dyn.image.resize2d %im, %s, %roi {method = "nearest_neighbor"} : (tensor<1x2x4x4xf32>, tensor<2xi64>, tensor<4xf32>) -> tensor<1x2x?x?xf32>
// CHECK-NEXT: %tv, %ti = dyn.topk %x, %a {dtype = "int64"} : (tensor<2x3xf32>, tensor<i64>) -> (tensor<2x?xf32>, tensor<2x?xi64>)
// CHECK-NEXT: %oh = dyn.one_hot %i1, %v, %v, %a {axis = 0, dtype = "float32"} : (tensor<1xi32>, tensor<f32>, tensor<f32>, tensor<i64>) -> tensor<?x1xf32>
func.func @all(%x: tensor<2x3xf32>, %s: tensor<2xi64>, %s3: tensor<3xi64>, %i1: tensor<1xi32>, %a: tensor<i64>, %v: tensor<f32>, %w: tensor<2x2xi64>, %im: tensor<1x2x4x4xf32>, %roi: tensor<4xf32>) {
  %r = dyn.reshape %x, %s {allowzero = true} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %b = dyn.broadcast_to %x, %s3 : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  %t = dyn.tile %x, %s3 : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  %sl = dyn.strided_slice %x, %i1, %i1, %i1 {slice_mode = "size"} : (tensor<2x3xf32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?x3xf32>
  %e = dyn.expand_dims %x, %a {num_newaxis = 2} : (tensor<2x3xf32>, tensor<i64>) -> tensor<?x?x?x?xf32>
  %q = dyn.squeeze %x, %i1 : (tensor<2x3xf32>, tensor<1xi32>) -> tensor<?xf32>
  %f = dyn.full %v, %s {dtype = "float64"} : (tensor<f32>, tensor<2xi64>) -> tensor<?x?xf64>
  %z = dyn.zeros %s {dtype = "int8"} : (tensor<2xi64>) -> tensor<?x?xi8>
  %o = dyn.ones %s {dtype = "bool"} : (tensor<2xi64>) -> tensor<?x?xi1>
  %p = dyn.nn.pad %x, %w, %v {pad_mode = "edge"} : (tensor<2x3xf32>, tensor<2x2xi64>, tensor<f32>) -> tensor<?x?xf32>
  %u = dyn.nn.upsampling %im, %v, %v {method = "bilinear"} : (tensor<1x2x4x4xf32>, tensor<f32>, tensor<f32>) -> tensor<1x2x?x?xf32>
  %rs = dyn.image.resize2d %im, %s, %roi {method = "nearest_neighbor"} : (tensor<1x2x4x4xf32>, tensor<2xi64>, tensor<4xf32>) -> tensor<1x2x?x?xf32>
  %tv, %ti = dyn.topk %x, %a {dtype = "int64"} : (tensor<2x3xf32>, tensor<i64>) -> (tensor<2x?xf32>, tensor<2x?xi64>)
  %oh = dyn.one_hot %i1, %v, %v, %a {axis = 0, dtype = "float32"} : (tensor<1xi32>, tensor<f32>, tensor<f32>, tensor<i64>) -> tensor<?x1xf32>
  func.return
}
