// RUN: RELAY_VERIFY_DIAG

memory.pool @p {alignment = 24}
// CHECK: memory.pool @p: alignment 24 is not a power of two

// -----

memory.pool @p {capacity = 100, size = 200}
// CHECK: memory.pool @p: size 200 exceeds its capacity 100

// -----

%s = memory.alloc_storage {size = 64, alignment = 64, kind = "scratch"}
// CHECK: memory.alloc_storage: unknown kind 'scratch' (known: intermediate, workspace, input, output)

// -----

%s = memory.alloc_storage {size = 64, alignment = 64, lifetime = [3, 1]}
// CHECK: memory.alloc_storage: lifetime must be [first, last] with 0 <= first <= last, got [3, 1]

// -----

memory.pool @global {size = 1024}
%s = memory.alloc_storage {size = 64, alignment = 64, pool = "global", offset = 32}
// CHECK: memory.alloc_storage: offset 32 is not a non-negative multiple of its alignment 64

// -----

memory.pool @global {size = 64}
%s = memory.alloc_storage {size = 128, alignment = 64, pool = "global", offset = 0}
// CHECK: memory.alloc_storage: bytes [0, 128) exceed pool 'global' of size 64

// -----

%s = memory.alloc_storage {size = 128, alignment = 64, pool = "nowhere", offset = 0}
// CHECK: memory.alloc_storage: placed in pool 'nowhere', which no memory.pool declares

// -----

%s = memory.alloc_storage {size = 64, alignment = 64, kind = "intermediate", external = true}
// CHECK: memory.alloc_storage: only input and output storage can be external, not 'intermediate'

// -----

%s = memory.alloc_storage {size = 64}
%t = memory.alloc_tensor %s {offset = 16} : tensor<16xf32>
// CHECK: memory.alloc_tensor: tensor<16xf32> at offset 16 needs 80 bytes but its storage has 64

// -----

// Found by the fuzzer: Relay's byte size of an element type Relay has no dtype for was a ValueError.
%s = memory.alloc_storage {size = 64}
%t = memory.alloc_tensor %s {offset = 16} : tensor<16xf80>
// CHECK: memory.alloc_tensor: tensor<16xf80> has element type f80, which is no Relay dtype

// -----

%s = memory.alloc_storage {size = 64}
%t = memory.alloc_tensor %s {offset = 0} : tensor<16xf32>
%v = memory.alias %t : tensor<16xf32> to tensor<4x8xf32>
// CHECK: memory.alias: cannot view tensor<16xf32> (64 bytes) as tensor<4x8xf32> (128 bytes): element type and byte size must agree

// -----

func.func private @f(%p: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.negative %p : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>, %y: tensor<8xf32>) {
  memory.invoke @f(%x) outs(%y) : (tensor<4xf32>) -> (tensor<8xf32>)
  func.return
}
// CHECK: memory.invoke @f: operand types (tensor<4xf32>) -> (tensor<8xf32>) do not match the callee's type (tensor<4xf32>) -> tensor<4xf32>

// -----

func.func @main(%x: tensor<4xf32>) {
  memory.invoke @missing(%x) outs(%x) : (tensor<4xf32>) -> (tensor<4xf32>)
  func.return
}
// CHECK: memory.invoke @missing: no function @missing in the module
