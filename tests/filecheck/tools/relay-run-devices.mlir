// relay-run with devices: a device registered on the command line with two memory scopes, the
// negative in its DRAM and the exp in its 1 KiB SRAM, each scope planned into its own pool
// (the SRAM with the exact planner), outputs equal to the reference interpreter's.

// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.arange(16, dtype='float32').reshape(4, 4) / 8)"
// RUN: relay-run %s --input x=%t.x.npy | filecheck %s --check-prefix=REF
// RUN: relay-run %s --input x=%t.x.npy --register-device 'mcu:dram=0:64,sram=1024:16' --devices mcu --pool-algorithms mcu0.sram=optimal --memory-report | filecheck %s
// RUN: not relay-run %s --input x=%t.x.npy --devices cpu,cuda 2>&1 | filecheck %s --check-prefix=CUDA
// RUN: not relay-run %s --input x=%t.x.npy --devices mcu 2>&1 | filecheck %s --check-prefix=UNREGISTERED
// RUN: not relay-run %s --input x=%t.x.npy --register-device 'mcu:sram=1k' --devices mcu 2>&1 | filecheck %s --check-prefix=BADREG
// RUN: not relay-run %s --input x=%t.x.npy --register-device 'mcu:dram=0:64,sram=32:16' --devices mcu 2>&1 | filecheck %s --check-prefix=SMALL

func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = relay.negative %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = relay.on_device %0 {virtual_device = #relay.virtual_device<mcu(0), memory_scope = "dram">} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = relay.exp %1 : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %3 = relay.on_device %2 {virtual_device = #relay.virtual_device<mcu(0), memory_scope = "sram">} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %3 : tensor<4x4xf32>
}

// REF: output 0: shape (4, 4) float32  min 0.153355 max 1 mean 0.459916  [1, 0.882497, 0.778801, 0.687289, 0.606531, 0.535261, ...]
// CHECK: output 0: shape (4, 4) float32  min 0.153355 max 1 mean 0.459916  [1, 0.882497, 0.778801, 0.687289, 0.606531, 0.535261, ...]
// CHECK: | mcu0.dram {{.*}}| unbounded {{.*}}|
// CHECK: | mcu0.sram {{.*}}| 1024 {{.*}}|
// CHECK: | Algorithm {{.*}}| greedy-by-size+optimal

// CUDA: relay-run: error: {{.*}}cuda
// UNREGISTERED: relay-run: error: target {'mcu': 'llvm'}: xrelay compiles for the host CPU only, not for device 'mcu' (devices that run here: cpu and those registered with xrelay.register_device)
// BADREG: relay-run: error: --register-device 'mcu:sram=1k': expected SCOPE=SIZE[:ALIGN], got 'sram=1k'
// SMALL: relay-run: error: {{.*}}fits in no pool: pool 'mcu0.sram' (32 bytes
