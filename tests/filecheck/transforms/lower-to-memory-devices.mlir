// RUN: relay-opt %s -p 'plan-devices,fuse-ops,lower-to-memory' | filecheck %s
// RUN: relay-opt %s -p 'plan-devices,fuse-ops,lower-to-memory,plan-memory{pool-algorithms="cpu1=optimal"},verify-memory-plan' | filecheck %s --check-prefix=PLAN
// RUN: relay-opt %s -p 'plan-devices,fuse-ops' | filecheck %s --check-prefix=FUSE
// RUN: not relay-opt %s -p 'plan-devices,fuse-ops,lower-to-memory,plan-memory{pool-algorithms="dram=optimal"}' 2>&1 | filecheck %s --check-prefix=BADPOOL

// exp on cpu(1), the rest on cpu(0): fuse-ops never fuses across the copies (each copy is a
// primitive function of its own), lower-to-memory declares one pool per memory space with its
// device, pins every storage to its space and drops the annotations; plan-memory plans each
// space apart, each with its algorithm
func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = relay.negative %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %3 = relay.on_device %0 {virtual_device = "cpu"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = relay.exp %3 : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = relay.on_device %1 {virtual_device = "cpu(1)"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %4 = relay.add %2, %3 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %5 = relay.on_device %4 {virtual_device = "cpu"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %5 : tensor<4x4xf32>
}

// FUSE-DAG: func.func private @fused_negative(
// FUSE-DAG: func.func private @fused_device_copy(
// FUSE-DAG: func.func private @fused_exp(
// FUSE-DAG: func.func private @fused_device_copy_1(
// FUSE-DAG: func.func private @fused_add(
// FUSE-LABEL: func.func @main
// FUSE-NEXT: %[[N:.*]] = func.call @fused_negative(%x)
// FUSE-NEXT: %[[A:.*]] = relay.on_device %[[N]] {virtual_device = #relay.virtual_device<cpu(0)>, constrain_result = true}
// FUSE-NEXT: %[[C:.*]] = func.call @fused_device_copy(%[[A]])
// FUSE-NEXT: %[[E:.*]] = func.call @fused_exp(%[[C]])
// FUSE-NEXT: %[[B:.*]] = relay.on_device %[[E]] {virtual_device = #relay.virtual_device<cpu(1)>, constrain_result = true}
// FUSE-NEXT: %[[D:.*]] = func.call @fused_device_copy_1(%[[B]])
// FUSE-NEXT: %[[R:.*]] = func.call @fused_add(%[[D]], %[[N]])

// CHECK: memory.pool @cpu0 {alignment = 16, device = #relay.virtual_device<cpu(0)>}
// CHECK-NEXT: memory.pool @cpu1 {alignment = 16, device = #relay.virtual_device<cpu(1)>}
// CHECK-LABEL: func.func @main
// CHECK-NOT: relay.on_device
// CHECK: kind = "input", {{.*}}pools = ["cpu0"]}
// CHECK: memory.invoke @fused_negative
// CHECK: kind = "intermediate", {{.*}}pools = ["cpu1"]}
// CHECK: memory.invoke @fused_device_copy(
// CHECK: kind = "intermediate", {{.*}}pools = ["cpu1"]}
// CHECK: memory.invoke @fused_exp(
// CHECK: kind = "intermediate", {{.*}}pools = ["cpu0"]}
// CHECK: memory.invoke @fused_device_copy_1(
// CHECK: kind = "output", {{.*}}pools = ["cpu0"]}
// CHECK: memory.invoke @fused_add(

// PLAN: memory.pool @cpu0 {alignment = 16, size = {{[0-9]+}}, device = #relay.virtual_device<cpu(0)>}
// PLAN-NEXT: memory.pool @cpu1 {alignment = 16, size = 128, device = #relay.virtual_device<cpu(1)>}
// PLAN: pool = "cpu1", offset = {{[0-9]+}}, pools = ["cpu1"]}

// BADPOOL: plan-memory: pool-algorithms names unknown pool(s) dram
