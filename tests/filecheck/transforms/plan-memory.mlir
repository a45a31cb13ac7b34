// RUN: relay-opt %s -p 'plan-memory,verify-memory-plan' --split-input-file --verify-diagnostics | filecheck %s
// RUN: relay-opt %s -p 'plan-memory{algorithm=naive},verify-memory-plan' --split-input-file --verify-diagnostics | filecheck %s --check-prefix=NAIVE
// RUN: relay-opt %s -p 'plan-memory{pools="sram:2048:16,dram:0:64"},verify-memory-plan' --split-input-file --verify-diagnostics | filecheck %s --check-prefix=POOLS
// RUN: relay-opt %s -p 'plan-memory{report=true}' --split-input-file --verify-diagnostics 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// A chain a -> b -> c of 1 KiB buffers: a and c never live together, so they share bytes.

func.func private @f(%p: tensor<256xf32>) -> tensor<256xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.negative %p : (tensor<256xf32>) -> tensor<256xf32>
  func.return %r : tensor<256xf32>
}
func.func @main(%x: tensor<256xf32>) -> tensor<256xf32> {
  %a = memory.alloc_storage {size = 1024, alignment = 64, kind = "intermediate", lifetime = [0, 1]}
  %ta = memory.alloc_tensor %a {offset = 0} : tensor<256xf32>
  memory.invoke @f(%x) outs(%ta) {step = 0} : (tensor<256xf32>) -> (tensor<256xf32>)
  %b = memory.alloc_storage {size = 1024, alignment = 64, kind = "intermediate", lifetime = [1, 2]}
  %tb = memory.alloc_tensor %b {offset = 0} : tensor<256xf32>
  memory.invoke @f(%ta) outs(%tb) {step = 1} : (tensor<256xf32>) -> (tensor<256xf32>)
  memory.kill %a : !memory.storage
  %c = memory.alloc_storage {size = 1024, alignment = 64, kind = "output", lifetime = [2, 2]}
  %tc = memory.alloc_tensor %c {offset = 0} : tensor<256xf32>
  memory.invoke @f(%tb) outs(%tc) {step = 2} : (tensor<256xf32>) -> (tensor<256xf32>)
  memory.kill %b : !memory.storage
  func.return %tc : tensor<256xf32>
}

// CHECK:      memory.pool @global {alignment = 16, size = 2048}
// CHECK:      %a = memory.alloc_storage {{.*}} pool = "global", offset = [[OFF:[0-9]+]]}
// CHECK:      %b = memory.alloc_storage {{.*}} pool = "global", offset = {{[0-9]+}}}
// CHECK:      %c = memory.alloc_storage {{.*}} pool = "global", offset = [[OFF]]}

// NAIVE:      memory.pool @global {alignment = 16, size = 3072}

// POOLS:      memory.pool @sram {capacity = 2048, alignment = 16, size = 2048}
// POOLS-NEXT: memory.pool @dram {alignment = 64, size = 0}

// REPORT:     | global {{ *}} | 0x0 {{ *}} | unbounded {{ *}} | 2048 |
// REPORT:     | Lower bound (max live bytes) | 2048 bytes
// REPORT:     | Total arena size {{.*}} | 2048 bytes | ratio to lower bound 1.0000 |

// -----

// The same chain with %c pinned to dram (an unknown pool without the pools option).

func.func private @f(%p: tensor<256xf32>) -> tensor<256xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.negative %p : (tensor<256xf32>) -> tensor<256xf32>
  func.return %r : tensor<256xf32>
}
func.func @main(%x: tensor<256xf32>) -> tensor<256xf32> {
  %a = memory.alloc_storage {size = 1024, alignment = 64, kind = "intermediate", lifetime = [0, 1]}
  %ta = memory.alloc_tensor %a {offset = 0} : tensor<256xf32>
  memory.invoke @f(%x) outs(%ta) {step = 0} : (tensor<256xf32>) -> (tensor<256xf32>)
  %b = memory.alloc_storage {size = 1024, alignment = 64, kind = "intermediate", lifetime = [1, 2]}
  %tb = memory.alloc_tensor %b {offset = 0} : tensor<256xf32>
  memory.invoke @f(%ta) outs(%tb) {step = 1} : (tensor<256xf32>) -> (tensor<256xf32>)
  memory.kill %a : !memory.storage
  %c = memory.alloc_storage {size = 1024, alignment = 64, kind = "output", lifetime = [2, 2], pools = ["dram"]}
  %tc = memory.alloc_tensor %c {offset = 0} : tensor<256xf32>
  memory.invoke @f(%tb) outs(%tc) {step = 2} : (tensor<256xf32>) -> (tensor<256xf32>)
  memory.kill %b : !memory.storage
  func.return %tc : tensor<256xf32>
}


// CHECK:      plan-memory: buffer 'c' refers to unknown pool 'dram' (pools: global)
// NAIVE:      plan-memory: buffer 'c' refers to unknown pool 'dram' (pools: global)
// POOLS:      memory.pool @sram {capacity = 2048, alignment = 16, size = 2048}
// POOLS-NEXT: memory.pool @dram {alignment = 64, size = 1024}
// POOLS:      %a = memory.alloc_storage {{.*}} pool = "sram"
// POOLS:      %b = memory.alloc_storage {{.*}} pool = "sram"
// POOLS:      %c = memory.alloc_storage {{.*}} pool = "dram", offset = 0, pools = ["dram"]}

// -----

// Pools declared in the module are the configuration when no option is given. The buffer
// does not fit: the error is the planner's, and nothing is written.

memory.pool @tiny {capacity = 512, alignment = 16}
func.func private @f(%p: tensor<256xf32>) -> tensor<256xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.negative %p : (tensor<256xf32>) -> tensor<256xf32>
  func.return %r : tensor<256xf32>
}
func.func @main(%x: tensor<256xf32>) -> tensor<256xf32> {
  %a = memory.alloc_storage {size = 1024, alignment = 64, kind = "output", lifetime = [0, 0]}
  %ta = memory.alloc_tensor %a {offset = 0} : tensor<256xf32>
  memory.invoke @f(%x) outs(%ta) {step = 0} : (tensor<256xf32>) -> (tensor<256xf32>)
  func.return %ta : tensor<256xf32>
}

// CHECK:  plan-memory: buffer 'a' (1024 bytes, steps 0..0) fits in no pool: pool 'tiny' (512 bytes, alignment 64)
// NAIVE:  plan-memory: {{.*}}'a'{{.*}}
// POOLS:  memory.pool @sram {capacity = 2048, alignment = 16, size = 1024}
