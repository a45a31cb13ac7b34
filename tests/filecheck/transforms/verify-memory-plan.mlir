// RUN: relay-opt %s -p verify-memory-plan --split-input-file --verify-diagnostics | filecheck %s

// A valid plan: a and c share bytes but never live together.

memory.pool @global {alignment = 16, size = 2048}
func.func private @f(%p: tensor<256xf32>) -> tensor<256xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.negative %p : (tensor<256xf32>) -> tensor<256xf32>
  func.return %r : tensor<256xf32>
}
func.func @main(%x: tensor<256xf32>) -> tensor<256xf32> {
  %a = memory.alloc_storage {size = 1024, alignment = 64, kind = "intermediate", lifetime = [0, 1], pool = "global", offset = 0}
  %ta = memory.alloc_tensor %a {offset = 0} : tensor<256xf32>
  memory.invoke @f(%x) outs(%ta) {step = 0} : (tensor<256xf32>) -> (tensor<256xf32>)
  %b = memory.alloc_storage {size = 1024, alignment = 64, kind = "intermediate", lifetime = [1, 2], pool = "global", offset = 1024}
  %tb = memory.alloc_tensor %b {offset = 0} : tensor<256xf32>
  memory.invoke @f(%ta) outs(%tb) {step = 1} : (tensor<256xf32>) -> (tensor<256xf32>)
  memory.kill %a : !memory.storage
  %c = memory.alloc_storage {size = 1024, alignment = 64, kind = "output", lifetime = [2, 2], pool = "global", offset = 0}
  %tc = memory.alloc_tensor %c {offset = 0} : tensor<256xf32>
  memory.invoke @f(%tb) outs(%tc) {step = 2} : (tensor<256xf32>) -> (tensor<256xf32>)
  memory.kill %b : !memory.storage
  func.return %tc : tensor<256xf32>
}

// CHECK: memory.pool @global {alignment = 16, size = 2048}

// -----

// b overlaps a while both are live (step 1).

memory.pool @global {alignment = 16, size = 2048}
func.func private @f(%p: tensor<256xf32>) -> tensor<256xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.negative %p : (tensor<256xf32>) -> tensor<256xf32>
  func.return %r : tensor<256xf32>
}
func.func @main(%x: tensor<256xf32>) -> tensor<256xf32> {
  %a = memory.alloc_storage {size = 1024, alignment = 64, kind = "intermediate", lifetime = [0, 1], pool = "global", offset = 0}
  %ta = memory.alloc_tensor %a {offset = 0} : tensor<256xf32>
  memory.invoke @f(%x) outs(%ta) {step = 0} : (tensor<256xf32>) -> (tensor<256xf32>)
  %b = memory.alloc_storage {size = 1024, alignment = 64, kind = "output", lifetime = [1, 1], pool = "global", offset = 512}
  %tb = memory.alloc_tensor %b {offset = 0} : tensor<256xf32>
  memory.invoke @f(%ta) outs(%tb) {step = 1} : (tensor<256xf32>) -> (tensor<256xf32>)
  memory.kill %a : !memory.storage
  func.return %tb : tensor<256xf32>
}

// CHECK: verify-memory-plan: buffers 'a' (steps 0..1, bytes [0, 1024)) and 'b' (steps 1..1, bytes [512, 1536)) are live at the same time and overlap in pool 'global'

// -----

// A printed lifetime that liveness does not confirm.

memory.pool @global {alignment = 16, size = 1024}
func.func private @f(%p: tensor<256xf32>) -> tensor<256xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.negative %p : (tensor<256xf32>) -> tensor<256xf32>
  func.return %r : tensor<256xf32>
}
func.func @main(%x: tensor<256xf32>) -> tensor<256xf32> {
  %a = memory.alloc_storage {size = 1024, alignment = 64, kind = "output", lifetime = [0, 3], pool = "global", offset = 0}
  %ta = memory.alloc_tensor %a {offset = 0} : tensor<256xf32>
  memory.invoke @f(%x) outs(%ta) {step = 0} : (tensor<256xf32>) -> (tensor<256xf32>)
  func.return %ta : tensor<256xf32>
}

// CHECK: verify-memory-plan: storage 'a' says lifetime [0, 3] but liveness gives [0, 0]

// -----

// Not planned yet.

func.func private @f(%p: tensor<256xf32>) -> tensor<256xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.negative %p : (tensor<256xf32>) -> tensor<256xf32>
  func.return %r : tensor<256xf32>
}
func.func @main(%x: tensor<256xf32>) -> tensor<256xf32> {
  %a = memory.alloc_storage {size = 1024, alignment = 64, kind = "output"}
  %ta = memory.alloc_tensor %a {offset = 0} : tensor<256xf32>
  memory.invoke @f(%x) outs(%ta) : (tensor<256xf32>) -> (tensor<256xf32>)
  func.return %ta : tensor<256xf32>
}

// CHECK: verify-memory-plan: the module declares no memory.pool (run plan-memory)
