// RUN: relay-opt %s -p to-a-normal-form | filecheck %s --check-prefix=ANF
// RUN: relay-opt %s -p to-a-normal-form,to-graph-normal-form | filecheck %s --check-prefix=GNF
// RUN: relay-opt %s -p ToANormalForm,AnnotateUsedMemory | filecheck %s --check-prefix=AUM

// SSA is already in A-normal form: the ops stay as they are, the module is marked (visitors
// then walk arguments before callees, the order of Relay's let chain) and
// to-graph-normal-form removes the mark.

func.func private @fused_relu(%x: tensor<1x4xi8>) -> tensor<1x4xi8> attributes {relay.primitive = 1 : i64} {
  %y = relay.nn.relu %x : (tensor<1x4xi8>) -> tensor<1x4xi8>
  func.return %y : tensor<1x4xi8>
}
func.func @main(%input: tensor<1x4xi8>) -> tensor<1x4xi8> {
  %0 = func.call @fused_relu(%input) : (tensor<1x4xi8>) -> tensor<1x4xi8>
  %1 = func.call @fused_relu(%0) : (tensor<1x4xi8>) -> tensor<1x4xi8>
  func.return %1 : tensor<1x4xi8>
}

// ANF:      builtin.module attributes {relay.a_normal_form} {
// ANF-NEXT:   func.func private @fused_relu(%x: tensor<1x4xi8>) -> tensor<1x4xi8> attributes {relay.primitive = 1 : i64} {
// ANF-NEXT:     %y = relay.nn.relu %x : (tensor<1x4xi8>) -> tensor<1x4xi8>
// ANF-NEXT:     func.return %y : tensor<1x4xi8>
// ANF-NEXT:   }
// ANF-NEXT:   func.func @main(%input: tensor<1x4xi8>) -> tensor<1x4xi8> {
// ANF-NEXT:     %0 = func.call @fused_relu(%input) : (tensor<1x4xi8>) -> tensor<1x4xi8>
// ANF-NEXT:     %1 = func.call @fused_relu(%0) : (tensor<1x4xi8>) -> tensor<1x4xi8>
// ANF-NEXT:     func.return %1 : tensor<1x4xi8>
// ANF-NEXT:   }
// ANF-NEXT: }

// GNF:      builtin.module {
// GNF-NOT:  relay.a_normal_form
// GNF:        %0 = func.call @fused_relu(%input)
// GNF-NEXT:   %1 = func.call @fused_relu(%0)

// The mark does not disturb later passes.
// AUM:      builtin.module attributes {relay.a_normal_form} {
// AUM:      relay.used_memory = [8 : i64, 8 : i64]
// AUM:      relay.io_used_memory = 8 : i64
