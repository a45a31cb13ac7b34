// RUN: relay-opt %s -p choose-scratch | filecheck %s
// RUN: relay-opt %s -p 'choose-scratch{priority=speed}' | filecheck %s --check-prefix=SPEED
// RUN: relay-opt %s -p 'choose-scratch{priority=memory}' | filecheck %s --check-prefix=MEMORY
// RUN: relay-opt %s -p 'choose-scratch{budget=6144}' | filecheck %s --check-prefix=BUDGET
// RUN: relay-opt %s -p 'choose-scratch,plan-memory' | filecheck %s --check-prefix=PLAN
// RUN: not relay-opt %s -p 'choose-scratch{priority=fast}' 2>&1 | filecheck %s --check-prefix=BAD

// Three 1 KiB tensors are live at step 2 (3072 bytes). @g can run three ways: its fastest
// needs 4096 bytes of scratch, which would make step 3 (%c, %d and the scratch) the peak at
// 6144; "half" keeps step 3 at 3072, the peak the other steps set anyway; "tiny" would not
// lower the peak further, so balanced (the default) takes "half", the faster of the two.

func.func private @f(%p: tensor<256xf32>) -> tensor<256xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.negative %p : (tensor<256xf32>) -> tensor<256xf32>
  func.return %r : tensor<256xf32>
}
func.func private @sub(%p: tensor<256xf32>, %q: tensor<256xf32>) -> tensor<256xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.subtract %p, %q : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  func.return %r : tensor<256xf32>
}
func.func private @g(%p: tensor<256xf32>) -> tensor<256xf32> attributes {relay.primitive = 1 : i64, relay.scratch_bytes = 4096 : i64, relay.scratch_options = [["whole", 4096], ["half", 1024], ["tiny", 64]]} {
  %r = relay.negative %p : (tensor<256xf32>) -> tensor<256xf32>
  func.return %r : tensor<256xf32>
}
func.func @main(%x: tensor<256xf32>) -> tensor<256xf32> {
  %a = memory.alloc_storage {size = 1024, alignment = 64, kind = "intermediate", lifetime = [0, 2]}
  %ta = memory.alloc_tensor %a {offset = 0} : tensor<256xf32>
  memory.invoke @f(%x) outs(%ta) {step = 0} : (tensor<256xf32>) -> (tensor<256xf32>)
  %b = memory.alloc_storage {size = 1024, alignment = 64, kind = "intermediate", lifetime = [1, 2]}
  %tb = memory.alloc_tensor %b {offset = 0} : tensor<256xf32>
  memory.invoke @f(%ta) outs(%tb) {step = 1} : (tensor<256xf32>) -> (tensor<256xf32>)
  %c = memory.alloc_storage {size = 1024, alignment = 64, kind = "intermediate", lifetime = [2, 3]}
  %tc = memory.alloc_tensor %c {offset = 0} : tensor<256xf32>
  memory.invoke @sub(%ta, %tb) outs(%tc) {step = 2} : (tensor<256xf32>, tensor<256xf32>) -> (tensor<256xf32>)
  memory.kill %a : !memory.storage
  memory.kill %b : !memory.storage
  %d = memory.alloc_storage {size = 1024, alignment = 64, kind = "output", lifetime = [3, 3]}
  %td = memory.alloc_tensor %d {offset = 0} : tensor<256xf32>
  %ws = memory.alloc_storage {size = 4096, alignment = 64, kind = "workspace", lifetime = [3, 3]}
  memory.invoke @g(%tc) outs(%td) workspace(%ws) {step = 3} : (tensor<256xf32>) -> (tensor<256xf32>)
  memory.kill %c : !memory.storage
  memory.kill %ws : !memory.storage
  func.return %td : tensor<256xf32>
}

// CHECK:      func.func private @g({{.*}} attributes {relay.primitive = 1 : i64, relay.scratch_bytes = 1024 : i64, relay.scratch_options = {{\[}}["whole", 4096 : i64], ["half", 1024 : i64], ["tiny", 64 : i64]], relay.scratch_choice = "half"}
// CHECK:      %ws = memory.alloc_storage {size = 1024, alignment = 64, kind = "workspace", lifetime = [3, 3]}

// SPEED:      relay.scratch_bytes = 4096 : i64, {{.*}}, relay.scratch_choice = "whole"
// SPEED:      %ws = memory.alloc_storage {size = 4096,

// MEMORY:     relay.scratch_bytes = 64 : i64, {{.*}}, relay.scratch_choice = "tiny"
// MEMORY:     %ws = memory.alloc_storage {size = 64,

// a budget of 6144 bytes lets the fastest way set the peak
// BUDGET:     relay.scratch_bytes = 4096 : i64, {{.*}}, relay.scratch_choice = "whole"

// PLAN:       memory.pool @global {alignment = 16, size = 3072}

// BAD:        relay-opt: error: choose-scratch: unknown priority 'fast' (known: balanced, speed, memory)
