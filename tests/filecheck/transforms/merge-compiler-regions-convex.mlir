// RUN: relay-opt %s -p 'annotate-target{targets=dnnl},merge-compiler-regions' | filecheck %s

// A merge must keep the region graph acyclic, also through merges made earlier. The default
// ops %b0 and %b2 merge (%b0 -> %b2); %b2 reads %a0, so %a0 (with %a2) is above that default
// region and %a1 below it: %a0/%a2 and %a1/%a3 stay two dnnl regions. One region of all four
// (what an earlier version made: %b2's region was merged before %a3 joined %a1 to %a2) would
// leave through %b0 -> %b2 and come back through %b0 -> %a1 ... %a0 -> %b2: a cycle, and
// partition-graph then used a call's results before the call.
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %b0 = relay.negative %x : (tensor<4xf32>) -> tensor<4xf32>
  %a0 = relay.tanh %x : (tensor<4xf32>) -> tensor<4xf32>
  %a1 = relay.nn.relu %b0 : (tensor<4xf32>) -> tensor<4xf32>
  %a2 = relay.nn.relu %a0 : (tensor<4xf32>) -> tensor<4xf32>
  %a3 = relay.add %a2, %a1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b2 = relay.subtract %b0, %a0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %b2, %a3 : tensor<4xf32>, tensor<4xf32>
}

// CHECK:      %0 = relay.annotation.compiler_begin %x {compiler = "default"}
// CHECK-NEXT: %b0 = relay.negative %0
// CHECK-NEXT: %1 = relay.annotation.compiler_begin %x {compiler = "dnnl"}
// CHECK-NEXT: %a0 = relay.tanh %1
// CHECK-NEXT: %2 = relay.annotation.compiler_end %b0 {compiler = "default"}
// CHECK-NEXT: %3 = relay.annotation.compiler_begin %2 {compiler = "dnnl"}
// CHECK-NEXT: %a1 = relay.nn.relu %3
// CHECK-NEXT: %a2 = relay.nn.relu %a0
// CHECK-NEXT: %4 = relay.annotation.compiler_end %a2 {compiler = "dnnl"}
// CHECK-NEXT: %5 = relay.annotation.compiler_begin %4 {compiler = "dnnl"}
// CHECK-NEXT: %a3 = relay.add %5, %a1
// CHECK-NEXT: %6 = relay.annotation.compiler_end %a0 {compiler = "dnnl"}
// CHECK-NEXT: %7 = relay.annotation.compiler_begin %6 {compiler = "default"}
// CHECK-NEXT: %b2 = relay.subtract %b0, %7
// CHECK-NEXT: %8 = relay.annotation.compiler_end %b2 {compiler = "default"}
// CHECK-NEXT: %9 = relay.annotation.compiler_end %a3 {compiler = "dnnl"}
// CHECK-NEXT: func.return %8, %9
