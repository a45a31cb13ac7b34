// relay-build{...}: what xrelay.build runs before lowering (xrelay.backend.pipeline), from the
// command line. At opt level 3 the constant arithmetic is folded and dense + add + relu fuse
// into one primitive function; at opt level 0 nothing is folded and every op is its own.

// RUN: relay-opt %s -p 'relay-build{opt-level=3 engines=native}' | filecheck %s --check-prefix=O3
// RUN: relay-opt %s -p 'relay-build{opt-level=0 engines=native}' | filecheck %s --check-prefix=O0
// RUN: not relay-opt %s -p 'relay-build{engines=gpu}' 2>&1 | filecheck %s --check-prefix=ERR

// O3:      func.func private @fused_nn_dense_add_nn_relu(%p0: tensor<1x4xf32>, %p1: tensor<4x4xf32>) -> tensor<1x4xf32> attributes {relay.primitive = 1 : i64} {
// O3-NEXT:   %d = relay.nn.dense %p0, %p1
// O3-NEXT:   %two = relay.constant dense<2.000000e+00> : tensor<f32>
// O3-NEXT:   %a = relay.add %d, %two
// O3-NEXT:   %r = relay.nn.relu %a
// O3:      func.func @main
// O3-NOT:  relay.add
// O3:        %r = func.call @fused_nn_dense_add_nn_relu(%x, %w)

// O0:      func.func private @fused_nn_dense(
// O0:      func.func private @fused_add(
// O0:      func.func private @fused_add_1(
// O0:      func.func private @fused_nn_relu(
// O0:      func.func @main
// O0:        %two = func.call @fused_add(%one)

// ERR: relay-opt: error: relay-build: unknown engine(s) ['gpu'] (known: dnnl, native)

func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %w = relay.constant dense<[[1.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 3.0, 0.0], [0.0, 0.0, 0.0, 4.0]]> : tensor<4x4xf32>
  %one = relay.constant dense<1.0> : tensor<f32>
  %two = relay.add %one, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %d = relay.nn.dense %x, %w : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
  %a = relay.add %d, %two : (tensor<1x4xf32>, tensor<f32>) -> tensor<1x4xf32>
  %r = relay.nn.relu %a : (tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %r : tensor<1x4xf32>
}
