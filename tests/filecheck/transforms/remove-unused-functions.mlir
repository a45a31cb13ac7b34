// RUN: relay-opt %s -p remove-unused-functions --split-input-file | filecheck %s
// RUN: relay-opt %s -p 'remove-unused-functions{entry-functions=fn2}' --split-input-file | filecheck %s --check-prefix=FN2
// RUN: not relay-opt %s -p 'remove-unused-functions{entry-functions=nope}' --split-input-file 2>&1 | filecheck %s --check-prefix=ERR

// The seed example: @fn2 is unreachable from @main.
// CHECK-LABEL: func.func @fn1
// CHECK-NOT:   func.func @fn2
// CHECK-LABEL: func.func @main
// CHECK:       func.call @fn1(%z)
// FN2-NOT:     func.func @fn1
// FN2:         func.func @fn2
// FN2-NOT:     func.func @main
// ERR: relay-opt: error: remove-unused-functions: none of the entry functions @nope exists (functions: @fn1, @fn2, @main)
func.func @fn1(%x: tensor<1x1000xf32>) -> tensor<1x1000xf32> {
  func.return %x : tensor<1x1000xf32>
}
func.func @fn2(%y: tensor<1x1000xf32>) -> tensor<1x1000xf32> {
  func.return %y : tensor<1x1000xf32>
}
func.func @main(%z: tensor<1x1000xf32>) -> tensor<1x1000xf32> {
  %0 = func.call @fn1(%z) : (tensor<1x1000xf32>) -> tensor<1x1000xf32>
  %1 = relay.add %z, %0 : (tensor<1x1000xf32>, tensor<1x1000xf32>) -> tensor<1x1000xf32>
  func.return %1 : tensor<1x1000xf32>
}

// -----

// Transitive calls are followed, cycles terminate, and a function referenced as a value
// (a symbol in an attribute) counts as used. Unreachable mutually recursive functions go.
// CHECK-LABEL: func.func @leaf
// CHECK-LABEL: func.func @mid
// CHECK-LABEL: func.func private @by_ref
// CHECK-NOT:   func.func @fn2
// CHECK-NOT:   func.func @dead_a
// CHECK-NOT:   func.func @dead_b
// CHECK-LABEL: func.func @main
// FN2-LABEL:   func.func @leaf
// FN2-NEXT:      func.call @mid
// FN2-LABEL:   func.func @mid
// FN2-LABEL:   func.func @fn2
// FN2-NOT:     func.func
func.func @leaf(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = func.call @mid(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
func.func @mid(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = func.call @leaf(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
func.func private @by_ref(%x: tensor<2xf32>) -> tensor<2xf32>
func.func @dead_a(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = func.call @dead_b(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
func.func @dead_b(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = func.call @dead_a(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
func.func @fn2(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = func.call @leaf(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = func.call @leaf(%x) : (tensor<2xf32>) -> tensor<2xf32>
  "test.op"() {callee = [@by_ref]} : () -> ()
  func.return %0 : tensor<2xf32>
}
