// RUN: RELAY_ROUNDTRIP
// RUN: RELAY_GENERIC_ROUNDTRIP

memory.pool @global {alignment = 64, size = 2560}
memory.pool @sram {capacity = 262144, alignment = 16, base_address = 536870912}
func.func private @fused(%p: tensor<1x8x8x4xf32>) -> (tensor<1x8x8x4xf32>, tensor<4xf32>) attributes {relay.primitive = 1 : i64} {
  %r = relay.negative %p : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  %s = relay.sum %p {axis = [0, 1, 2]} : (tensor<1x8x8x4xf32>) -> tensor<4xf32>
  func.return %r, %s : tensor<1x8x8x4xf32>, tensor<4xf32>
}
func.func @main(%x: tensor<1x8x8x4xf32>) -> tensor<256xf32> {
  %s0 = memory.alloc_storage {size = 1024, alignment = 64, kind = "input", lifetime = [0, 0], pool = "global", offset = 0}
  %t0 = memory.alloc_tensor %s0 {offset = 0} : tensor<1x8x8x4xf32>
  memory.copy %x to %t0 : tensor<1x8x8x4xf32>
  %s1 = memory.alloc_storage {size = 1088, alignment = 64, kind = "intermediate", lifetime = [0, 0], pool = "global", offset = 1024, pools = ["global", "sram"], forbidden_pools = ["dram"]}
  %t1 = memory.alloc_tensor %s1 {offset = 0} : tensor<1x8x8x4xf32>
  %t2 = memory.alloc_tensor %s1 {offset = 1024} : tensor<4xf32>
  %w = memory.alloc_storage {size = 512, alignment = 64, kind = "workspace", lifetime = [0, 0], pool = "global", offset = 2048}
  memory.invoke @fused(%t0) outs(%t1, %t2) workspace(%w) {step = 0} : (tensor<1x8x8x4xf32>) -> (tensor<1x8x8x4xf32>, tensor<4xf32>)
  memory.kill %w : !memory.storage
  memory.kill %s0 : !memory.storage
  %s3 = memory.alloc_storage {size = 1024, alignment = 64, kind = "output", lifetime = [1, 1], external = true}
  %t3 = memory.alloc_tensor %s3 {offset = 0} : tensor<1x8x8x4xf32>
  %t4 = memory.alloc_tensor %s1 {offset = 0} : tensor<4xf32>
  memory.invoke @fused(%t1) outs(%t3, %t4) : (tensor<1x8x8x4xf32>) -> (tensor<1x8x8x4xf32>, tensor<4xf32>)
  %v = memory.alias %t3 : tensor<1x8x8x4xf32> to tensor<256xf32>
  func.return %v : tensor<256xf32>
}

// CHECK:       memory.pool @global {alignment = 64, size = 2560}
// CHECK-NEXT:  memory.pool @sram {capacity = 262144, alignment = 16, base_address = 536870912}
// CHECK:       %s0 = memory.alloc_storage {size = 1024, alignment = 64, kind = "input", lifetime = [0, 0], pool = "global", offset = 0}
// CHECK-NEXT:  %t0 = memory.alloc_tensor %s0 {offset = 0} : tensor<1x8x8x4xf32>
// CHECK-NEXT:  memory.copy %x to %t0 : tensor<1x8x8x4xf32>
// CHECK-NEXT:  %s1 = memory.alloc_storage {size = 1088, alignment = 64, kind = "intermediate", lifetime = [0, 0], pool = "global", offset = 1024, pools = ["global", "sram"], forbidden_pools = ["dram"]}
// CHECK-NEXT:  %t1 = memory.alloc_tensor %s1 {offset = 0} : tensor<1x8x8x4xf32>
// CHECK-NEXT:  %t2 = memory.alloc_tensor %s1 {offset = 1024} : tensor<4xf32>
// CHECK-NEXT:  %w = memory.alloc_storage {size = 512, alignment = 64, kind = "workspace", lifetime = [0, 0], pool = "global", offset = 2048}
// CHECK-NEXT:  memory.invoke @fused(%t0) outs(%t1, %t2) workspace(%w) {step = 0} : (tensor<1x8x8x4xf32>) -> (tensor<1x8x8x4xf32>, tensor<4xf32>)
// CHECK-NEXT:  memory.kill %w : !memory.storage
// CHECK-NEXT:  memory.kill %s0 : !memory.storage
// CHECK-NEXT:  %s3 = memory.alloc_storage {size = 1024, alignment = 64, kind = "output", lifetime = [1, 1], external = true}
// CHECK-NEXT:  %t3 = memory.alloc_tensor %s3 {offset = 0} : tensor<1x8x8x4xf32>
// CHECK-NEXT:  %t4 = memory.alloc_tensor %s1 {offset = 0} : tensor<4xf32>
// CHECK-NEXT:  memory.invoke @fused(%t1) outs(%t3, %t4) : (tensor<1x8x8x4xf32>) -> (tensor<1x8x8x4xf32>, tensor<4xf32>)
// CHECK-NEXT:  %v = memory.alias %t3 : tensor<1x8x8x4xf32> to tensor<256xf32>
// CHECK-NEXT:  func.return %v : tensor<256xf32>
