// RUN: relay-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// CHECK: ref.write: writing a tensor<f32> into a reference of tensor<i32>
func.func @f(%r: !ref.ref<tensor<i32>>, %v: tensor<f32>) {
  "ref.write"(%r, %v) : (!ref.ref<tensor<i32>>, tensor<f32>) -> ()
  func.return
}

// -----

// CHECK: ref.read: result tensor<f32> is not the type !ref.ref<tensor<i32>> holds
func.func @f(%r: !ref.ref<tensor<i32>>) -> tensor<f32> {
  %v = "ref.read"(%r) : (!ref.ref<tensor<i32>>) -> tensor<f32>
  func.return %v : tensor<f32>
}

// -----

// CHECK: ref.create: result !ref.ref<tensor<f32>> does not hold the value's type tensor<i32>
func.func @f(%v: tensor<i32>) -> !ref.ref<tensor<f32>> {
  %r = "ref.create"(%v) : (tensor<i32>) -> !ref.ref<tensor<f32>>
  func.return %r : !ref.ref<tensor<f32>>
}

// -----

// CHECK: ref.read: expected a !ref.ref<...> type, got tensor<i32>
func.func @f(%v: tensor<i32>) -> tensor<i32> {
  %r = ref.read %v : tensor<i32>
  func.return %r : tensor<i32>
}
