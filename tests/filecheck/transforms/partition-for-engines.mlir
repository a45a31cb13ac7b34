// RUN: relay-opt %s -p 'partition-for-engines{engines=dnnl}' | filecheck %s
// RUN: not relay-opt %s -p 'partition-for-engines{engines=native}' 2>&1 | filecheck %s --check-prefix=ERR

// dense + bias + relu is one oneDNN composite, in a function oneDNN runs
// CHECK:      func.func private @dnnl_dense_bias_relu(%p0: tensor<1x4xf32>, %p1: tensor<4x4xf32>, %p2: tensor<4xf32>) -> tensor<1x4xf32> attributes {relay.composite = "dnnl.dense_bias_relu"
// CHECK:      func.func @tvmgen_default_dnnl_main_0({{.*}}) -> tensor<1x4xf32> attributes {{{.*}}relay.compiler = "dnnl"
// CHECK:      func.func @main
// CHECK-NEXT:   %w = relay.constant
// CHECK-NEXT:   %b = relay.constant
// CHECK-NEXT:   %0 = func.call @tvmgen_default_dnnl_main_0(%x, %w, %b)

// ERR: relay-opt: error: partition-for-engines: 'native' is not an engine that partitions (known: dnnl)

func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %w = relay.constant dense<1.0> : tensor<4x4xf32>
  %b = relay.constant dense<0.5> : tensor<4xf32>
  %d = relay.nn.dense %x, %w : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
  %a = relay.add %d, %b : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  %r = relay.nn.relu %a : (tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %r : tensor<1x4xf32>
}
