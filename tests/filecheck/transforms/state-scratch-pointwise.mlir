// RUN: env XRELAY_DNNL_POINTWISE=packed relay-opt %s -p 'partition-for-engines{engines=dnnl},state-scratch' | filecheck %s
// RUN: env XRELAY_DNNL_POINTWISE=dnnl relay-opt %s -p 'partition-for-engines{engines=dnnl},state-scratch' | filecheck %s --check-prefix=DNNL
// RUN: env XRELAY_DNNL_POINTWISE=fast not relay-opt %s -p 'partition-for-engines{engines=dnnl},state-scratch' 2>&1 | filecheck %s --check-prefix=BAD

// oneDNN's scratch for a 1x1 convolution over channels-last data, which the packed dense
// kernel can run as the dense of its 36 pixels' rows (the way "pointwise"): with
// XRELAY_DNNL_POINTWISE=packed it is the function's way (its workspace holds the rows packed
// by six: 36 x 32 x 4 bytes), with =dnnl oneDNN's convolution is the only way and no option
// is stated; the default, =measure, times both at build time.
// CHECK:      func.func @tvmgen_default_dnnl_main_0({{.*}}) -> tensor<1x6x6x48xf32> attributes {{{.*}}relay.compiler = "dnnl"{{.*}}relay.scratch_bytes = 4608 : i64, relay.scratch_options = [["pointwise", 4608 : i64]{{.*}}]}
// CHECK-NEXT:   %c = relay.nn.conv2d

// DNNL:       func.func @tvmgen_default_dnnl_main_0({{.*}}) -> tensor<1x6x6x48xf32> attributes {{{.*}}relay.compiler = "dnnl"
// DNNL-NOT:   scratch_options
// DNNL:       func.func @main

// BAD: error: XRELAY_DNNL_POINTWISE must be measure, packed or dnnl, not 'fast'

func.func @main(%x: tensor<1x6x6x32xf32>) -> tensor<1x6x6x48xf32> {
  %w = relay.constant dense<0.5> : tensor<1x1x32x48xf32>
  %c = relay.nn.conv2d %x, %w {channels = 48, kernel_size = [1, 1], data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x6x6x32xf32>, tensor<1x1x32x48xf32>) -> tensor<1x6x6x48xf32>
  func.return %c : tensor<1x6x6x48xf32>
}
