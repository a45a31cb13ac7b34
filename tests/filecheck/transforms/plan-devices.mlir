// RUN: relay-opt %s -p 'plan-devices{default-device=cuda}' --split-input-file | filecheck %s
// RUN: relay-opt %s -p 'plan-devices{default-device=cuda},plan-devices{default-device=cpu}' --split-input-file | filecheck %s
// RUN: relay-opt %s -p 'plan-devices{default-device=cuda memory-scope=sram}' --split-input-file | filecheck %s --check-prefix=SCOPE
// RUN: not relay-opt %s -p 'plan-devices{default-device=tpu}' --split-input-file 2>&1 | filecheck %s --check-prefix=BAD

// the left add on cpu (Relay's test_left_add_on_cpu): its result is copied to the default
// device where subtract uses it; parameters take their users' devices; a second run (with
// another default) changes nothing
func.func @main(%a: tensor<5x7xf32>, %b: tensor<5x7xf32>, %c: tensor<5x7xf32>) -> tensor<5x7xf32> {
  %0 = relay.add %a, %b : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
  %1 = relay.on_device %0 {virtual_device = "cpu"} : (tensor<5x7xf32>) -> tensor<5x7xf32>
  %2 = relay.subtract %1, %c : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
  func.return %2 : tensor<5x7xf32>
}

// CHECK-LABEL: func.func @main
// CHECK-SAME: relay.param_virtual_devices = [#relay.virtual_device<cpu(0)>, #relay.virtual_device<cpu(0)>, #relay.virtual_device<cuda(0)>]
// CHECK-SAME: relay.result_virtual_device = #relay.virtual_device<cuda(0)>
// CHECK-NEXT: %0 = relay.add %a, %b
// CHECK-NEXT: %1 = relay.on_device %0 {virtual_device = #relay.virtual_device<cpu(0)>, constrain_result = true}
// CHECK-NEXT: %2 = relay.device_copy %1 {src_virtual_device = #relay.virtual_device<cpu(0)>, dst_virtual_device = #relay.virtual_device<cuda(0)>}
// CHECK-NEXT: %3 = relay.subtract %2, %c
// CHECK-NEXT: func.return %3

// SCOPE-LABEL: func.func @main
// SCOPE-SAME: relay.result_virtual_device = #relay.virtual_device<cuda(0), memory_scope = "sram">
// SCOPE: relay.device_copy %1 {src_virtual_device = #relay.virtual_device<cpu(0)>, dst_virtual_device = #relay.virtual_device<cuda(0), memory_scope = "sram">}

// BAD: plan-devices: default-device: unknown device 'tpu'

// -----

// a value whose uses want two devices is copied at the use met last (Relay's
// test_conflicated_inputs): %b feeds the cpu add and the cuda add
func.func @main(%a: tensor<5x7xf32>, %b: tensor<5x7xf32>, %c: tensor<5x7xf32>) -> tensor<5x7xf32> {
  %0 = relay.add %a, %b : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
  %1 = relay.on_device %0 {virtual_device = "cpu"} : (tensor<5x7xf32>) -> tensor<5x7xf32>
  %2 = relay.add %b, %c : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
  %3 = relay.on_device %2 {virtual_device = "cuda"} : (tensor<5x7xf32>) -> tensor<5x7xf32>
  %4 = relay.subtract %1, %3 : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
  func.return %4 : tensor<5x7xf32>
}

// CHECK-LABEL: func.func @main
// CHECK-SAME: relay.param_virtual_devices = [#relay.virtual_device<cpu(0)>, #relay.virtual_device<cpu(0)>, #relay.virtual_device<cuda(0)>]
// CHECK: %[[A:.*]] = relay.add %a, %b
// CHECK: %[[B:.*]] = relay.device_copy %b {src_virtual_device = #relay.virtual_device<cpu(0)>, dst_virtual_device = #relay.virtual_device<cuda(0)>}
// CHECK: relay.add %[[B]], %c

// -----

// functions are not device polymorphic: @f's parameters take the devices of its call
func.func private @f(%p: tensor<4xf32>, %q: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.on_device %q {virtual_device = "cpu"} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.add %p, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @f(%y, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func private @f
// CHECK-SAME: relay.param_virtual_devices = [#relay.virtual_device<cuda(0)>, #relay.virtual_device<cpu(0)>]
// CHECK-NEXT: %0 = relay.device_copy %q {src_virtual_device = #relay.virtual_device<cpu(0)>, dst_virtual_device = #relay.virtual_device<cuda(0)>}
// CHECK-LABEL: func.func @main
// CHECK-SAME: relay.param_virtual_devices = [#relay.virtual_device<cpu(0)>, #relay.virtual_device<cuda(0)>]


// -----

// an unannotated op pulled two ways (exp: its operand is pinned to cpu(0), its user sqrt runs
// on cpu(1)): the edge into exp gets a copy (Relay stops with an error here)
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.negative %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = "cpu", constrain_result = true} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = relay.exp %1 : (tensor<4xf32>) -> tensor<4xf32>
  %3 = relay.sqrt %2 : (tensor<4xf32>) -> tensor<4xf32>
  %4 = relay.on_device %3 {virtual_device = "cpu(1)"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %4 : tensor<4xf32>
}

// CHECK-LABEL: func.func @main
// CHECK-SAME: relay.param_virtual_devices = [#relay.virtual_device<cpu(0)>], relay.result_virtual_device = #relay.virtual_device<cpu(1)>
// CHECK-NEXT: %[[N:.*]] = relay.negative %x
// CHECK-NEXT: %[[P:.*]] = relay.on_device %[[N]] {virtual_device = #relay.virtual_device<cpu(0)>, constrain_result = true}
// CHECK-NEXT: %[[C:.*]] = relay.device_copy %[[P]] {src_virtual_device = #relay.virtual_device<cpu(0)>, dst_virtual_device = #relay.virtual_device<cpu(1)>}
// CHECK-NEXT: %[[E:.*]] = relay.exp %[[C]]
// CHECK-NEXT: %[[S:.*]] = relay.sqrt %[[E]]
// CHECK-NEXT: func.return %[[S]]
