// -O<n> runs relay.build's pipeline at level n after the -p passes; a pass runs if its
// opt_level <= n and it is not disabled; the passes it requires run before it.

// FuseOps is disabled below so the checks do not depend on the fusion result.

// -O0: RemoveUnusedFunctions (opt_level 1) and EliminateCommonSubexpr (3) do not run.
// RUN: relay-opt %s -O0 --disable-pass=fuse-ops --pass-timing 2>%t.err | filecheck %s --check-prefix=O0
// RUN: filecheck %s --check-prefix=O0-TIME --input-file=%t.err
// O0:      func.func private @unused
// O0:      func.func @main
// O0:      %b = relay.add
// O0-TIME:     sequential:
// O0-TIME-NOT: RemoveUnusedFunctions
// O0-TIME-NOT: EliminateCommonSubexpr

// -O1 removes unused functions, -O3 also merges common subexpressions.
// RUN: relay-opt %s -O1 --disable-pass=fuse-ops | filecheck %s --check-prefix=O1
// O1-NOT:  @unused
// O1:      %b = relay.add
// RUN: relay-opt %s -O3 --disable-pass=fuse-ops | filecheck %s --check-prefix=O3
// O3-NOT:  @unused
// O3-NOT:  %b = relay.add
// O3:      relay.multiply %a, %a

// --disable-pass takes CLI or Relay names.
// RUN: relay-opt %s -O3 --disable-pass=eliminate-common-subexpr,RemoveUnusedFunctions,FuseOps | filecheck %s --check-prefix=DISABLED
// DISABLED: @unused
// DISABLED: %b = relay.add

// The -p passes run first, called directly: whatever the opt level.
// RUN: relay-opt %s -O0 -p remove-unused-functions --pass-timing 2>&1 -o %t | filecheck %s --check-prefix=ORDER --strict-whitespace
// ORDER:      {{^}}RemoveUnusedFunctions:
// ORDER-NEXT: {{^}}sequential:

// RUN: not relay-opt %s -O5 2>&1 | filecheck %s --check-prefix=BAD
// BAD: argument -O: invalid choice: 5 (choose from 0, 1, 2, 3, 4)

func.func private @unused(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  func.return %x : tensor<2x3xf32>
}

func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = relay.add %x, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %b = relay.add %x, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = relay.multiply %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %c : tensor<2x3xf32>
}
