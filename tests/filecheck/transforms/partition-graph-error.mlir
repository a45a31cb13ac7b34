// RUN: not relay-opt %s -p partition-graph 2>&1 | filecheck %s
// RUN: not relay-opt %s -p merge-compiler-regions 2>&1 | filecheck %s
// RUN: not relay-opt %s -p 'annotate-target{targets=nope}' 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: not relay-opt %s -p 'merge-composite{pattern-table=nope}' 2>&1 | filecheck %s --check-prefix=TABLE

// one region whose begin and end name different compilers
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.annotation.compiler_begin %x {compiler = "a"} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.abs %0 : (tensor<4xf32>) -> tensor<4xf32>
  %2 = relay.annotation.compiler_end %1 {compiler = "b"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// CHECK: relay-opt: error: partition: one annotated region has annotations for several compilers: a, b
// CHECK-NOT: Traceback
// TARGET: relay-opt: error: annotate-target: unknown target 'nope' (known: dnnl)
// TABLE: relay-opt: error: merge-composite: unknown pattern table 'nope' (known: dnnl)
