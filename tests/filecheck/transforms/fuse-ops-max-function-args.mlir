// RUN: relay-opt %s -p 'fuse-ops{max-function-args=3}' | filecheck %s
// RUN: relay-opt %s -p 'fuse-ops{max-function-args=0}' | filecheck %s --check-prefix=NOLIMIT
// RUN: not relay-opt %s -p 'fuse-ops{max-function-args=-1}' 2>&1 | filecheck %s --check-prefix=ERR

// ERR: relay-opt: error: fuse-ops: max-function-args must be >= 0, got -1

// Relay's max_function_args (a target attribute: Metal 31, OpenCL 128): a fusion is refused
// when the consumer's group would take more arguments than the limit less its outputs (here
// 3 - 1). exp(x0), exp(x1) and their add take x0 and x1: 2, fused. Adding exp(x2) to that
// group would make 3: each further exp and add stays alone.
func.func @main(%x0: tensor<4xf32>, %x1: tensor<4xf32>, %x2: tensor<4xf32>, %x3: tensor<4xf32>) -> tensor<4xf32> {
  %e0 = relay.exp %x0 : (tensor<4xf32>) -> tensor<4xf32>
  %e1 = relay.exp %x1 : (tensor<4xf32>) -> tensor<4xf32>
  %e2 = relay.exp %x2 : (tensor<4xf32>) -> tensor<4xf32>
  %e3 = relay.exp %x3 : (tensor<4xf32>) -> tensor<4xf32>
  %a = relay.add %e0, %e1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = relay.add %a, %e2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = relay.add %b, %e3 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// CHECK-LABEL: func.func private @fused_exp_exp_add(
// CHECK-SAME: %p0: tensor<4xf32>, %p1: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive = 1 : i64} {
// CHECK-NEXT: %e0 = relay.exp %p0
// CHECK-NEXT: %e1 = relay.exp %p1
// CHECK-NEXT: %a = relay.add %e0, %e1
// CHECK-NEXT: func.return %a
// CHECK-LABEL: func.func private @fused_exp(
// CHECK-SAME: %p0: tensor<4xf32>)
// CHECK-NEXT: %e2 = relay.exp %p0
// CHECK-LABEL: func.func private @fused_add(
// CHECK-SAME: %p0: tensor<4xf32>, %p1: tensor<4xf32>)
// CHECK-NEXT: %b = relay.add %p0, %p1
// CHECK-LABEL: func.func private @fused_exp_1(
// CHECK-LABEL: func.func private @fused_add_1(
// CHECK-LABEL: func.func @main(
// CHECK-NEXT: %e2 = func.call @fused_exp(%x2)
// CHECK-NEXT: %e3 = func.call @fused_exp_1(%x3)
// CHECK-NEXT: %a = func.call @fused_exp_exp_add(%x0, %x1)
// CHECK-NEXT: %b = func.call @fused_add(%a, %e2)
// CHECK-NEXT: %c = func.call @fused_add_1(%b, %e3)
// CHECK-NEXT: func.return %c

// No limit: one function of all seven ops.
// NOLIMIT: func.func private @fused_exp_exp_add_exp_add_exp_add(%p0: tensor<4xf32>, %p1: tensor<4xf32>, %p2: tensor<4xf32>, %p3: tensor<4xf32>)
// NOLIMIT-NOT: func.func private
// NOLIMIT: func.call @fused_exp_exp_add_exp_add_exp_add(%x0, %x1, %x2, %x3)
