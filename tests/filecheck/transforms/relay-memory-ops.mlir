// RUN: relay-opt %s -p dead-code-elimination | filecheck %s
// RUN: relay-opt %s -p fuse-ops | filecheck %s --check-prefix=FUSE
// RUN: relay-opt %s -p fold-constant | filecheck %s --check-prefix=FOLD
// RUN: not relay-opt %s -p lower-to-memory 2>&1 | filecheck %s --check-prefix=LOWER

// Relay's memory.kill is stateful (TVM's TOpIsStateful): it stays, and with it the
// memory.alloc_storage it frees; an alloc_storage nothing uses is dead (not stateful).
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %size = relay.constant dense<1024> : tensor<i64>
  %align = relay.constant dense<64> : tensor<i64>
  %shape = relay.constant dense<[64, 2]> : tensor<2xi64>
  %s = relay.memory.alloc_storage %size, %shape, %align {virtual_device = #relay.virtual_device<cpu(0)>} : (tensor<i64>, tensor<2xi64>, tensor<i64>) -> !relay.storage
  relay.memory.kill %s : (!relay.storage) -> ()
  %unused = relay.memory.alloc_storage %size, %shape, %align : (tensor<i64>, tensor<2xi64>, tensor<i64>) -> !relay.storage
  %r = relay.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK: %s = relay.memory.alloc_storage %size, %shape, %align {virtual_device = #relay.virtual_device<cpu(0)>} : (tensor<i64>, tensor<2xi64>, tensor<i64>) -> !relay.storage
// CHECK-NEXT: relay.memory.kill %s : (!relay.storage) -> ()
// CHECK-NOT: relay.memory.alloc_storage
// CHECK: relay.add

// fuse-ops: the kill is an effect Relay keeps (a let), not a dead op; both memory ops are
// non-computational (TNonComputational), so neither becomes a primitive function.
// FUSE-LABEL: func.func private @fused_add(
// FUSE-LABEL: func.func @main(
// FUSE: %s = relay.memory.alloc_storage %size, %shape, %align
// FUSE-NEXT: relay.memory.kill %s : (!relay.storage) -> ()
// FUSE-NEXT: %r = func.call @fused_add(%a)

// fold-constant: a Storage is not a constant (all operands constant, nothing folded)
// FOLD: %s = relay.memory.alloc_storage %size, %shape, %align
// FOLD-NEXT: relay.memory.kill %s

// LOWER: relay-opt: error: lower-to-memory: @main holds Relay's 'memory.alloc_storage' (op #3); this pass plans storage itself and does not take Relay's memory ops
