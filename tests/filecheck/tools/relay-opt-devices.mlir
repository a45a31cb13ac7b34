// relay-opt --register-device: a device with two memory scopes that the pipeline's passes know.

// RUN: relay-opt %s --register-device 'mcu:dram=0:64,sram=1024:16' -p 'plan-devices{default-device=mcu},fuse-ops,lower-to-memory,plan-memory{pool-algorithms="mcu0.sram=optimal"},verify-memory-plan' | filecheck %s
// RUN: not relay-opt %s --register-device 'mcu:dram' -p plan-devices 2>&1 | filecheck %s --check-prefix=BADSPEC
// RUN: not relay-opt %s -p 'plan-devices{default-device=mcu}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not relay-opt %s -p 'plan-devices,fuse-ops,lower-to-memory' 2>&1 | filecheck %s --check-prefix=LOWER

func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = relay.negative %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = relay.on_device %0 {virtual_device = #relay.virtual_device<mcu(0), memory_scope = "dram">} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = relay.exp %1 : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %3 = relay.on_device %2 {virtual_device = #relay.virtual_device<mcu(0), memory_scope = "sram">} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %3 : tensor<4x4xf32>
}

// CHECK: memory.pool @mcu0.dram {alignment = 64, size = 128, device = #relay.virtual_device<mcu(0), memory_scope = "dram">}
// CHECK-NEXT: memory.pool @mcu0.sram {capacity = 1024, alignment = 16, size = 128, device = #relay.virtual_device<mcu(0), memory_scope = "sram">}
// CHECK: memory.invoke @fused_device_copy

// BADSPEC: relay-opt: error: --register-device 'mcu:dram': expected SCOPE=SIZE[:ALIGN], got 'dram'
// UNKNOWN: relay-opt: error: plan-devices: default-device: unknown device 'mcu' (known: cpu, {{.*}}; register one with xrelay.register_device or --register-device)
// LOWER: relay-opt: error: lower-to-memory: %x: unknown device 'mcu'
