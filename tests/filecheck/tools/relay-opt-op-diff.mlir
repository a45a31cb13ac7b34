// --print-op-diff prints, for every pass that changed the op counts, the change per op
// (nested passes indented under their Sequential, which comes after them).

// RUN: relay-opt %s -p infer-type,cse --print-op-diff -o %t 2>&1 | filecheck %s
// CHECK:      pass  op             change
// CHECK-NEXT: cse   relay.add      -1
// CHECK-NEXT:       relay.nn.relu  -1
// CHECK-NOT:  InferType

// RUN: relay-opt %s -O3 --print-op-diff -o %t 2>&1 | filecheck %s --check-prefix=O3 --strict-whitespace
// O3:      {{^}}pass                      op             change{{$}}
// O3-NEXT: {{^}}  EliminateCommonSubexpr  relay.add      -1{{$}}
// O3-NEXT: {{^}}                          relay.nn.relu  -1{{$}}
// O3-NEXT: {{^}}  FuseOps                 func.call      +1{{$}}
// O3-NEXT: {{^}}                          func.func      +1{{$}}
// O3-NEXT: {{^}}                          func.return    +1{{$}}
// O3-NEXT: {{^}}sequential                func.call      +1{{$}}
// O3-NEXT: {{^}}                          func.func      +1{{$}}
// O3-NEXT: {{^}}                          func.return    +1{{$}}
// O3-NEXT: {{^}}                          relay.add      -1{{$}}
// O3-NEXT: {{^}}                          relay.nn.relu  -1{{$}}

// RUN: relay-opt %s -p infer-type --print-op-diff -o %t 2>&1 | filecheck %s --check-prefix=NONE
// NONE: no pass changed the op counts

func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = relay.add %x, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %b = relay.add %x, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %dead = relay.nn.relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = relay.multiply %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %c : tensor<2x3xf32>
}
