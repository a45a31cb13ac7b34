// RUN: relay-opt %s -p inline --split-input-file --verify-diagnostics | filecheck %s
// RUN: not relay-opt %s -p inline --split-input-file 2>&1 | filecheck %s --check-prefix=ERR

// The seed example: @g1 (inline) is inlined and deleted, @g2 stays a call.
// CHECK-LABEL: func.func @g2
// CHECK-NOT:   func.func @g1
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %{{.*}} = func.call @g2(%p0)
// CHECK-NEXT:    %{{.*}} = relay.add %p0, %{{.*}}
func.func @g1(%x1: tensor<1x10xf32>) -> tensor<1x10xf32> attributes {relay.inline = 1 : i64} {
  func.return %x1 : tensor<1x10xf32>
}
func.func @g2(%x2: tensor<1x10xf32>) -> tensor<1x10xf32> {
  func.return %x2 : tensor<1x10xf32>
}
func.func @main(%p0: tensor<1x10xf32>) -> tensor<1x10xf32> {
  %0 = func.call @g1(%p0) : (tensor<1x10xf32>) -> tensor<1x10xf32>
  %1 = func.call @g2(%p0) : (tensor<1x10xf32>) -> tensor<1x10xf32>
  %2 = relay.add %0, %1 : (tensor<1x10xf32>, tensor<1x10xf32>) -> tensor<1x10xf32>
  func.return %2 : tensor<1x10xf32>
}

// -----

// Transitive, bottom-up: @outer calls @inner, both inline; two call sites each get a copy.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[A:.*]] = relay.exp %x
// CHECK-NEXT:    %[[B:.*]] = relay.multiply %[[A]], %x
// CHECK-NEXT:    %[[C:.*]] = relay.exp %[[B]]
// CHECK-NEXT:    %[[D:.*]] = relay.multiply %[[C]], %[[B]]
// CHECK-NEXT:    func.return %[[D]]
// CHECK-NOT:   func.func
func.func @inner(%a: tensor<4xf32>) -> tensor<4xf32> attributes {relay.inline = 1 : i64} {
  %0 = relay.exp %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func @outer(%a: tensor<4xf32>) -> tensor<4xf32> attributes {relay.inline = 1 : i64} {
  %0 = func.call @inner(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.multiply %0, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @outer(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = func.call @outer(%0) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// -----

// A recursive inline function is neither inlined nor deleted; an entry marked inline stays;
// a function with an external compiler stays a call.
// CHECK-LABEL: func.func @rec
// CHECK:         func.call @rec
// CHECK-LABEL: func.func @ext
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    func.call @rec
// CHECK-NEXT:    func.call @ext
func.func @rec(%a: tensor<4xf32>) -> tensor<4xf32> attributes {relay.inline = 1 : i64} {
  %0 = func.call @rec(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func @ext(%a: tensor<4xf32>) -> tensor<4xf32> attributes {relay.compiler = "ccompiler"} {
  func.return %a : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {relay.inline = 1 : i64} {
  %0 = func.call @rec(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = func.call @ext(%0) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// -----

// Multiple results are mapped one to one.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[S:.*]] = relay.add %x, %x
// CHECK-NEXT:    %[[R:.*]] = relay.add %x, %[[S]]
// CHECK-NEXT:    func.return %[[R]]
func.func private @two(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {relay.inline = 1 : i64} {
  %0 = relay.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %a, %0 : tensor<4xf32>, tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0, %1 = func.call @two(%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %2 = relay.add %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// -----

// Relay's error: an inline function that calls a non-inline one is not a leaf.
// ERR: relay-opt: error: inline: @wrapper is marked as inline but not inlined
// CHECK: inline: @wrapper is marked as inline but not inlined
func.func @plain(%a: tensor<4xf32>) -> tensor<4xf32> {
  func.return %a : tensor<4xf32>
}
func.func @wrapper(%a: tensor<4xf32>) -> tensor<4xf32> attributes {relay.inline = 1 : i64} {
  %0 = func.call @plain(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @wrapper(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
