// RUN: rm -rf %t && relay-build %s -o %t --name net --pools sram:4096:16 --section sram=.sram_bss | filecheck %s --check-prefix=SUMMARY
// RUN: filecheck %s --input-file %t/net.c
// RUN: filecheck %s --input-file %t/net.h --check-prefix=HEADER

// A dense + bias + relu step and a softmax step: the first writes its dense result to its
// output and the add + relu chain runs as one loop in place there (no scratch, no temporary
// tensor); the softmax calls its kernel.
func.func @main(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w = relay.constant dense<0.5> : tensor<4x8xf32>
  %b = relay.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = relay.nn.dense %x, %w {units = 4} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  %1 = relay.add %0, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %2 = relay.nn.relu %1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %3 = relay.nn.softmax %2 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %3 : tensor<2x4xf32>
}

// CHECK:      #define XRELAY_POOL_ALIGNED XRELAY_ALIGNED(64)
// CHECK:      static uint8_t net_pool_sram[{{[0-9]+}}] XRELAY_ALIGNED(16) XRELAY_POOL_ALIGNED XRELAY_SECTION(".sram_bss");
// CHECK:      static const float net_const0[32] = {0x1.0000000000000p-1f,
// CHECK:      static const float net_const1[4] = {0x1.0000000000000p+0f, 0x1.0000000000000p+1f, 0x1.8000000000000p+1f, 0x1.0000000000000p+2f};
// CHECK:      XRELAY_FN void net_fused_nn_dense_add_nn_relu(const float *in0, const float *in1, const float *in2, float *out0, uint8_t *ws) {
// CHECK-NEXT:   (void)ws;
// CHECK-NEXT:   /* nn.dense */
// CHECK-NEXT:   xr_dense_f32(in0, in1, out0, 2, 4, 8);
// CHECK-NEXT:   /* nn.relu */
// CHECK-NEXT:   for (int64_t i0 = 0; i0 < 2; ++i0) {
// CHECK-NEXT:     for (int64_t i1 = 0; i1 < 4; ++i1) {
// CHECK-NEXT:       float t0; { const float va = out0[i0 * 4 + i1], vb = in2[i1]; t0 = (va + vb); }
// CHECK-NEXT:       float t1; { const float v = t0; t1 = (v > 0 ? v : (v != v ? v : 0)); }
// CHECK-NEXT:       out0[i0 * 4 + i1] = t1;
// CHECK:      XRELAY_FN void net_fused_nn_softmax(const float *in0, float *out0, uint8_t *ws) {
// CHECK-NEXT:   (void)ws;
// CHECK-NEXT:   /* nn.softmax */
// CHECK-NEXT:   xr_softmax_f32(in0, out0, 2, 4, 1, 0);
// CHECK:      int net_run(const net_inputs *inputs, net_outputs *outputs) {
// CHECK:        net_fused_nn_dense_add_nn_relu(((float *)inputs->x), net_const0, net_const1, ((float *)((net_pool_sram + {{[0-9]+}}) + 0)), (uint8_t *)0);  /* step 0 */
// CHECK-NEXT:   net_fused_nn_softmax(((float *)((net_pool_sram + {{[0-9]+}}) + 0)), ((float *)outputs->output0), (uint8_t *)0);  /* step 1 */
// CHECK-NEXT:   return 0;
// CHECK-NOT:  malloc

// HEADER:      typedef struct {
// HEADER-NEXT:   const float *x; /* 2x8 f32 */
// HEADER-NEXT: } net_inputs;
// HEADER:      typedef struct {
// HEADER-NEXT:   float *output0; /* 2x4 f32 */
// HEADER-NEXT: } net_outputs;
// HEADER:      int net_run(const net_inputs *inputs, net_outputs *outputs);

// SUMMARY:      wrote {{.*}}net.c
// SUMMARY:      memory summary (bytes)
// SUMMARY-NEXT:   RAM  pool sram {{ +}}{{[0-9]+}}
// SUMMARY:        ROM  constants {{ +}}144
// SUMMARY-NEXT:   ROM  code {{ +}}{{[0-9]+}}
