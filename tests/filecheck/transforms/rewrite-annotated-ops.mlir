// RUN: relay-opt %s -p 'rewrite-annotated-ops{fallback-device=1}' --split-input-file | filecheck %s

// seed 002's graph: sqrt and exp annotated on cuda, the rest on the fallback (cpu); a copy on
// every edge between devices, the annotations gone, the result left where exp computed it
func.func @main(%x: tensor<1x10xf32>, %y: tensor<1x10xf32>) -> tensor<1x10xf32> {
  %0 = relay.add %x, %y : (tensor<1x10xf32>, tensor<1x10xf32>) -> tensor<1x10xf32>
  %1 = relay.sqrt %0 : (tensor<1x10xf32>) -> tensor<1x10xf32>
  %2 = relay.on_device %1 {virtual_device = "cuda"} : (tensor<1x10xf32>) -> tensor<1x10xf32>
  %3 = relay.log %0 : (tensor<1x10xf32>) -> tensor<1x10xf32>
  %4 = relay.subtract %2, %3 : (tensor<1x10xf32>, tensor<1x10xf32>) -> tensor<1x10xf32>
  %5 = relay.exp %4 : (tensor<1x10xf32>) -> tensor<1x10xf32>
  %6 = relay.on_device %5 {virtual_device = "cuda"} : (tensor<1x10xf32>) -> tensor<1x10xf32>
  func.return %6 : tensor<1x10xf32>
}

// CHECK-LABEL: func.func @main
// CHECK-NEXT: %[[ADD:.*]] = relay.add %x, %y
// CHECK-NEXT: %[[C1:.*]] = relay.device_copy %[[ADD]] {src_virtual_device = #relay.virtual_device<cpu(0)>, dst_virtual_device = #relay.virtual_device<cuda(0)>}
// CHECK-NEXT: %[[SQRT:.*]] = relay.sqrt %[[C1]]
// CHECK-NEXT: %[[LOG:.*]] = relay.log %[[ADD]]
// CHECK-NEXT: %[[C2:.*]] = relay.device_copy %[[SQRT]] {src_virtual_device = #relay.virtual_device<cuda(0)>, dst_virtual_device = #relay.virtual_device<cpu(0)>}
// CHECK-NEXT: %[[SUB:.*]] = relay.subtract %[[C2]], %[[LOG]]
// CHECK-NEXT: %[[C3:.*]] = relay.device_copy %[[SUB]] {src_virtual_device = #relay.virtual_device<cpu(0)>, dst_virtual_device = #relay.virtual_device<cuda(0)>}
// CHECK-NEXT: %[[EXP:.*]] = relay.exp %[[C3]]
// CHECK-NEXT: func.return %[[EXP]]
// CHECK-NOT: relay.on_device

// -----

// a parameter used on another device is copied from the fallback device, once per use
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.negative %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #relay.virtual_device<cpu(1)>} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = relay.add %1, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// CHECK-LABEL: func.func @main
// CHECK-NEXT: %0 = relay.device_copy %x {src_virtual_device = #relay.virtual_device<cpu(0)>, dst_virtual_device = #relay.virtual_device<cpu(1)>}
// CHECK-NEXT: %1 = relay.negative %0
// CHECK-NEXT: %2 = relay.device_copy %1 {src_virtual_device = #relay.virtual_device<cpu(1)>, dst_virtual_device = #relay.virtual_device<cpu(0)>}
// CHECK-NEXT: %3 = relay.add %2, %x
