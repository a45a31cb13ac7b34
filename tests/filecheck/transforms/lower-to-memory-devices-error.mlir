// RUN: not relay-opt %s -p 'fuse-ops,lower-to-memory' 2>&1 | filecheck %s

// A planned module edited by hand: %x lives on cpu(0) but the negative (whose result is the
// function's, on cpu(1)) reads it there without a copy. Lowering names the value and both devices.
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {relay.param_virtual_devices = [#relay.virtual_device<cpu(0)>], relay.result_virtual_device = #relay.virtual_device<cpu(1)>} {
  %0 = relay.negative %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// CHECK: relay-opt: error: lower-to-memory: %x lives on #relay.virtual_device<cpu(0)> but 'func.call' uses it on #relay.virtual_device<cpu(1)> without a device_copy (run plan-devices)
