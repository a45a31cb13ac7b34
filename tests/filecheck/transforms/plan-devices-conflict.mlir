// RUN: not relay-opt %s -p plan-devices 2>&1 | filecheck %s

// a device_copy whose operand is pinned elsewhere: the error names the value and both devices
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.negative %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = "cpu", constrain_result = true} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = relay.device_copy %1 {src_virtual_device = "cuda", dst_virtual_device = "cpu"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// CHECK: relay-opt: error: plan-devices: result 0 of 'relay.on_device' in @main must be on #relay.virtual_device<cpu(0)> but a device_copy puts it on #relay.virtual_device<cuda(0)>
// CHECK-NOT: Traceback
