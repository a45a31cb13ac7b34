// Every relay-opt error is one message, exit code 1, and no Python traceback.

// RUN: not relay-opt %s -p no-such-pass 2>&1 | filecheck %s --check-prefix=UNKNOWN
// UNKNOWN: relay-opt: error: Unrecognized passes: ['no-such-pass']
// UNKNOWN-NEXT: known passes: {{.*}}infer-type
// UNKNOWN-NOT: Traceback

// RUN: not relay-opt %S/Inputs/syntax-error.mlir 2>&1 | filecheck %s --check-prefix=SYNTAX
// SYNTAX: syntax-error.mlir:3:32
// SYNTAX: relay.nn.conv2d has no attribute 'stride' (known: strides,
// SYNTAX-NOT: Traceback

// RUN: not relay-opt %S/Inputs/type-error.mlir 2>&1 | filecheck %s --check-prefix=TYPE
// TYPE: relay-opt: error: {{.*}}type-error.mlir:2:3: relay.add: result 0 has type tensor<2x4xf32> but the operands (tensor<2x3xf32>, tensor<3xf32>) give tensor<2x3xf32>
// TYPE-NOT: Traceback

// RUN: not relay-opt %S/does-not-exist.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: relay-opt: error: no such file: '{{.*}}does-not-exist.mlir'

// RUN: not relay-opt %s -p 'infer-type{' 2>&1 | filecheck %s --check-prefix=PIPE
// PIPE: relay-opt: error: bad pass pipeline

// RUN: not relay-opt %s -p 'fuse-ops{max-depth=x}' 2>&1 | filecheck %s --check-prefix=OPTION
// OPTION: relay-opt: error: pass 'fuse-ops': {{.*}} (options: opt-level, max-depth, max-function-args)

// Relay's names work in -p as well.
// RUN: relay-opt %s -p InferType,FuseOps | filecheck %s --check-prefix=RELAYNAME
// RELAYNAME: func.func @main

func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}
