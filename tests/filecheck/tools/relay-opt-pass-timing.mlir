// --pass-timing prints Relay's nested timing profile to stderr; stdout keeps the module.

// RUN: relay-opt %s -p infer-type,cse,dce --pass-timing -o %t 2>&1 | filecheck %s --strict-whitespace
// CHECK:      {{^}}InferType: {{[0-9]+}}us [{{[0-9]+}}us] ({{[0-9]+\.[0-9][0-9]}}%; {{[0-9]+\.[0-9][0-9]}}%){{$}}
// CHECK-NEXT: {{^}}cse: {{[0-9]+}}us [{{[0-9]+}}us] ({{[0-9]+\.[0-9][0-9]}}%; {{[0-9]+\.[0-9][0-9]}}%){{$}}
// CHECK-NEXT: {{^}}dce: {{[0-9]+}}us [{{[0-9]+}}us] ({{[0-9]+\.[0-9][0-9]}}%; {{[0-9]+\.[0-9][0-9]}}%){{$}}
// CHECK-NOT:  us [

// Passes inside the -O pipeline are nested one tab deep under "sequential" (the passes
// they require as well), and nothing else is at the top level.
// RUN: relay-opt %s -O3 --pass-timing -o %t 2>&1 | filecheck %s --strict-whitespace --check-prefix=NESTED
// NESTED:      {{^}}sequential: {{[0-9]+}}us [{{[0-9]+}}us] (100.00%; 100.00%){{$}}
// NESTED-NEXT: {{^}}	RemoveUnusedFunctions: {{[0-9]+}}us [{{[0-9]+}}us] ({{[0-9.]+}}%; {{[0-9.]+}}%){{$}}
// NESTED-NOT:  {{^[^	]}}
// NESTED:      {{^}}	InferType: {{[0-9]+}}us
// NESTED-NOT:  {{^[^	]}}
// NESTED:      {{^}}	EliminateCommonSubexpr: {{[0-9]+}}us
// NESTED-NOT:  {{^[^	]}}

// The profile goes to stderr only.
// RUN: relay-opt %s -p cse --pass-timing 2>/dev/null | filecheck %s --check-prefix=OUT
// OUT:     builtin.module {
// OUT-NOT: us [

func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = relay.add %x, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %b = relay.add %x, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = relay.multiply %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %c : tensor<2x3xf32>
}
