// RUN: not relay-opt %s -p plan-devices 2>&1 | filecheck %s

// Relay's If (scf.if) inside a function to plan: one clear error naming it.
func.func @main(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %b = tensor.extract %c[] : tensor<i1>
  %r = scf.if %b -> (tensor<4xf32>) {
    %n = relay.negative %x : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// CHECK: relay-opt: error: plan-devices: 'scf.if' in @main has regions (Relay's If): planning devices inside it is not supported
// CHECK-NOT: Traceback
