// RUN: relay-opt %s -p dead-code-elimination --split-input-file | filecheck %s
// RUN: relay-opt %s -p 'dead-code-elimination{ignore-impurity=true}' --split-input-file | filecheck %s --check-prefix=IMPURE
// RUN: relay-opt %s -p 'dead-code-elimination{inline-once=true}' --split-input-file | filecheck %s --check-prefix=ONCE

// inline-once (Relay's inline_once): a let-bound value used once loses its name (the Relay
// text then prints it in place instead of as a let).
// ONCE-LABEL: func.func @main
// ONCE-NEXT:    %d, %m = relay.nn.dropout %x
// ONCE-NEXT:    %0 = relay.exp %x
// ONCE-NEXT:    func.return %0

// Dead chains go; the unused stateful dropout stays (Relay keeps impure calls).
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %d, %m = relay.nn.dropout %x
// CHECK-NEXT:    %e = relay.exp %x
// CHECK-NEXT:    func.return %e
// IMPURE-LABEL: func.func @main
// IMPURE-NEXT:    %e = relay.exp %x
// IMPURE-NEXT:    func.return %e
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = relay.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = relay.multiply %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = relay.constant dense<1.0> : tensor<4xf32>
  %d, %m = relay.nn.dropout %x : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %e = relay.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %e : tensor<4xf32>
}
