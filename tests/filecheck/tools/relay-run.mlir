// relay-run runs a module with the reference interpreter and prints one line per result.

// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.arange(6, dtype='float32').reshape(2, 3)); np.savez('%t.params.npz', bias=np.array([0.0, 1.0, 2.0], 'float32'))"
// RUN: relay-run %s --input x=%t.x.npy --params %t.params.npz --output %t.out.npz | filecheck %s
// CHECK:      output 0: shape (2, 3) float32  min 0 max 7 mean 3.5  [0, 2, 4, 3, 5, 7]
// CHECK-NEXT: output 1: shape (2,) int32  min 2 max 2 mean 2  [2, 2]
// CHECK-NEXT: output 2: shape (2, 3) float32  min 0 max 5 mean 2.5  [0, 1, 2, 3, 4, 5]
// CHECK-EMPTY:

// RUN: python -c "import numpy as np; d = np.load('%t.out.npz'); print(sorted(d.files), d['output_0'].tolist())" | filecheck %s --check-prefix=SAVED
// SAVED: ['output_0', 'output_1', 'output_2'] {{\[}}[0.0, 2.0, 4.0], [3.0, 5.0, 7.0]]

// Through a pipe from relay-opt ('-' reads stdin), with random inputs:
// RUN: relay-opt %s -p cse --params %t.params.npz | relay-run - --random-inputs 1 | filecheck %s --check-prefix=PIPE
// PIPE:      output 0: shape (2, 3) float32
// PIPE-NEXT: output 1: shape (2,) int32
// PIPE-NEXT: output 2: shape (2, 3) float32

// RUN: not relay-run %s --params %t.params.npz 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: relay-run: error: missing input(s) x; @main takes: x: tensor<2x3xf32>
// MISSING-NOT: Traceback

func.func private @fused_add(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> attributes {relay.primitive = 1 : i64} {
  %0 = relay.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

func.func @main(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2xi32>, tensor<2x3xf32>) {
  %c = relay.constant @bias : tensor<3xf32>
  %z = func.call @fused_add(%x, %c) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %a = relay.argmax %z {axis = [1]} : (tensor<2x3xf32>) -> tensor<2xi32>
  func.return %z, %a, %x : tensor<2x3xf32>, tensor<2xi32>, tensor<2x3xf32>
}
