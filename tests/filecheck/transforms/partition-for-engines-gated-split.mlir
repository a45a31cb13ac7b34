// RUN: relay-opt %s -p 'partition-for-engines{engines=dnnl}' | filecheck %s

// A linear layer computed once and split into gates (split_gated_dense): with parts of 4096
// elements (64 rows x 64, a SwiGLU over tokens) each part becomes a dense of its own, its
// activation and the gate's product as post-ops; with parts of 64 elements (one row: a GRU
// time step's gates at batch 1) the dense stays whole, one oneDNN call, and the split and the
// gate math stay native (one elementwise loop).

// CHECK:      func.func private @dnnl_dense_bias_swish_mul({{.*}}: tensor<64x16xf32>, {{.*}}: tensor<64x16xf32>, {{.*}}) -> tensor<64x64xf32> attributes {relay.composite = "dnnl.dense_bias_swish_mul"
// CHECK:      func.func private @dnnl_dense_bias({{.*}}: tensor<64x16xf32>, {{.*}}: tensor<64x16xf32>, {{.*}}) -> tensor<64x64xf32>
// CHECK:      func.func @tvmgen_default_dnnl_main_2({{.*}}: tensor<1x16xf32>, {{.*}}: tensor<128x16xf32>) -> tensor<1x128xf32>
// CHECK:      func.func @main
// CHECK-NOT:    relay.split {{.*}} : (tensor<64x128xf32>)
// CHECK:        %[[D:.*]] = func.call @tvmgen_default_dnnl_main_2(%h, %{{.*}}) : (tensor<1x16xf32>, tensor<128x16xf32>) -> tensor<1x128xf32>
// CHECK-NEXT:   relay.split %[[D]] {indices_or_sections = 2, axis = 1} : (tensor<1x128xf32>) -> (tensor<1x64xf32>, tensor<1x64xf32>)
// CHECK:        func.return

func.func @main(%x: tensor<64x16xf32>, %h: tensor<1x16xf32>) -> (tensor<64x64xf32>, tensor<1x64xf32>) {
  %w = relay.constant dense<0.25> : tensor<128x16xf32>
  %b = relay.constant dense<0.5> : tensor<128xf32>
  %d = relay.nn.dense %x, %w {units = 128} : (tensor<64x16xf32>, tensor<128x16xf32>) -> tensor<64x128xf32>
  %y = relay.add %d, %b : (tensor<64x128xf32>, tensor<128xf32>) -> tensor<64x128xf32>
  %a, %g = relay.split %y {indices_or_sections = 2, axis = 1} : (tensor<64x128xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>)
  %s = relay.sigmoid %a : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %sw = relay.multiply %a, %s : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %o = relay.multiply %sw, %g : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %d2 = relay.nn.dense %h, %w {units = 128} : (tensor<1x16xf32>, tensor<128x16xf32>) -> tensor<1x128xf32>
  %a2, %g2 = relay.split %d2 {indices_or_sections = 2, axis = 1} : (tensor<1x128xf32>) -> (tensor<1x64xf32>, tensor<1x64xf32>)
  %s2 = relay.sigmoid %a2 : (tensor<1x64xf32>) -> tensor<1x64xf32>
  %o2 = relay.multiply %s2, %g2 : (tensor<1x64xf32>, tensor<1x64xf32>) -> tensor<1x64xf32>
  func.return %o, %o2 : tensor<64x64xf32>, tensor<1x64xf32>
}
