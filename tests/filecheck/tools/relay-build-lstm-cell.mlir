// relay-build on two unrolled LSTM steps (as the ONNX importer unrolls RNN/GRU/LSTM, Relay's
// way): each step's recurrent nn.dense and the add of its input projection are one oneDNN
// function; the gates' split, and the gate math (sigmoid, tanh, multiply, add) in two
// primitive functions of elementwise ops only, which the native engine runs as one C loop each
// (runtime.native.elementwise_loop; tests/runtime/test_elementwise_loop.py runs them against
// onnxruntime). The last step's output product fuses with the stack of the outputs.

// RUN: relay-opt %s -p 'relay-build{opt-level=3 engines=dnnl,native}' | filecheck %s

// CHECK:      func.func @tvmgen_default_dnnl_main_0(
// CHECK-NEXT:   func.call @dnnl_dense_bias
// CHECK:      func.func private @fused_split(%p0: tensor<2x16xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK-NEXT:   relay.split %p0 {indices_or_sections = 4, axis = 1}
// CHECK-NEXT:   func.return
// CHECK:      func.func private @fused_sigmoid_multiply_sigmoid_tanh_multiply_add(
// CHECK-NEXT:   relay.sigmoid
// CHECK-NEXT:   relay.multiply
// CHECK-NEXT:   relay.sigmoid
// CHECK-NEXT:   relay.tanh
// CHECK-NEXT:   relay.multiply
// CHECK-NEXT:   relay.add
// CHECK-NEXT:   func.return
// CHECK:      func.func private @fused_sigmoid_tanh_multiply(
// CHECK-NEXT:   relay.sigmoid
// CHECK-NEXT:   relay.tanh
// CHECK-NEXT:   relay.multiply
// CHECK-NEXT:   func.return
// CHECK:      func.func private @fused_sigmoid_tanh_multiply_stack(
// CHECK:        relay.stack
// CHECK:      func.func @main
// CHECK:        %[[G:.*]] = func.call @tvmgen_default_dnnl_main_0(%h0, %r, %g0)
// CHECK-NEXT:   %i0, %o0, %f0, %z0 = func.call @fused_split(%[[G]])
// CHECK-NEXT:   %c1 = func.call @fused_sigmoid_multiply_sigmoid_tanh_multiply_add(%f0, %c0, %i0, %z0)
// CHECK-NEXT:   %h1 = func.call @fused_sigmoid_tanh_multiply(%o0, %c1)
// CHECK-NEXT:   func.call @tvmgen_default_dnnl_main_10(%h1, %r, %g1)

func.func @main(%xw: tensor<2x2x16xf32>, %h0: tensor<2x4xf32>, %c0: tensor<2x4xf32>) -> (tensor<2x2x4xf32>, tensor<2x4xf32>) {
  %r = relay.constant dense<0.25> : tensor<16x4xf32>
  %x0, %x1 = relay.split %xw {indices_or_sections = 2} : (tensor<2x2x16xf32>) -> (tensor<1x2x16xf32>, tensor<1x2x16xf32>)
  %g0 = relay.reshape %x0 {newshape = [2, 16]} : (tensor<1x2x16xf32>) -> tensor<2x16xf32>
  %d0 = relay.nn.dense %h0, %r {units = 16} : (tensor<2x4xf32>, tensor<16x4xf32>) -> tensor<2x16xf32>
  %p0 = relay.add %g0, %d0 : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %i0, %o0, %f0, %z0 = relay.split %p0 {indices_or_sections = 4, axis = 1} : (tensor<2x16xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  %si0 = relay.sigmoid %i0 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %sf0 = relay.sigmoid %f0 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %tz0 = relay.tanh %z0 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %fc0 = relay.multiply %sf0, %c0 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %iz0 = relay.multiply %si0, %tz0 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %c1 = relay.add %fc0, %iz0 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %so0 = relay.sigmoid %o0 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %tc1 = relay.tanh %c1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %h1 = relay.multiply %so0, %tc1 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %g1 = relay.reshape %x1 {newshape = [2, 16]} : (tensor<1x2x16xf32>) -> tensor<2x16xf32>
  %d1 = relay.nn.dense %h1, %r {units = 16} : (tensor<2x4xf32>, tensor<16x4xf32>) -> tensor<2x16xf32>
  %p1 = relay.add %g1, %d1 : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %i1, %o1, %f1, %z1 = relay.split %p1 {indices_or_sections = 4, axis = 1} : (tensor<2x16xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  %si1 = relay.sigmoid %i1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %sf1 = relay.sigmoid %f1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %tz1 = relay.tanh %z1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %fc1 = relay.multiply %sf1, %c1 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %iz1 = relay.multiply %si1, %tz1 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %c2 = relay.add %fc1, %iz1 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %so1 = relay.sigmoid %o1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %tc2 = relay.tanh %c2 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %h2 = relay.multiply %so1, %tc2 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = relay.stack %h1, %h2 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x2x4xf32>
  func.return %y, %c2 : tensor<2x2x4xf32>, tensor<2x4xf32>
}
