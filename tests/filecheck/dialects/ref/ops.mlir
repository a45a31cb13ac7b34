// RUN: relay-opt %s | relay-opt | filecheck %s
// RUN: relay-opt %s -p dead-code-elimination | filecheck %s --check-prefix=DCE

// The ref dialect's ops print and parse back; ref.write has no result.
// CHECK-LABEL: func.func @main
// CHECK:      %r = ref.create %v : tensor<i32>
// CHECK-NEXT: %x = ref.read %r : !ref.ref<tensor<i32>>
// CHECK-NEXT: ref.write %r, %x : !ref.ref<tensor<i32>>
// CHECK-NEXT: %y = ref.read %r : !ref.ref<tensor<i32>>

// Reference ops have memory effects: dead-code-elimination keeps the write and what it uses,
// in their order; a read whose value is unused has no effect and goes, as the unused add.
// DCE-LABEL: func.func @main
// DCE:      ref.create
// DCE-NEXT: ref.read
// DCE-NEXT: ref.write
// DCE-NEXT: func.return
func.func @main(%v: tensor<i32>) -> tensor<i32> {
  %r = ref.create %v : tensor<i32>
  %x = ref.read %r : !ref.ref<tensor<i32>>
  ref.write %r, %x : !ref.ref<tensor<i32>>
  %y = ref.read %r : !ref.ref<tensor<i32>>
  %dead = relay.add %v, %v : (tensor<i32>, tensor<i32>) -> tensor<i32>
  func.return %v : tensor<i32>
}

// A reference parameter and a reference to a reference.
// CHECK-LABEL: func.func @nested(%rr: !ref.ref<!ref.ref<tensor<2xf32>>>) -> tensor<2xf32>
// CHECK:       %r = ref.read %rr : !ref.ref<!ref.ref<tensor<2xf32>>>
func.func @nested(%rr: !ref.ref<!ref.ref<tensor<2xf32>>>) -> tensor<2xf32> {
  %r = ref.read %rr : !ref.ref<!ref.ref<tensor<2xf32>>>
  %v = ref.read %r : !ref.ref<tensor<2xf32>>
  func.return %v : tensor<2xf32>
}
