// relay-run reports errors as one message on stderr, exit code 1, no traceback.

// RUN: not relay-run %s --random-inputs 2>&1 | filecheck %s --check-prefix=NOIMPL
// NOIMPL: relay-run: error: @main, op #2 (%t = test.op): no implementation for op 'test.op'
// NOIMPL-NOT: Traceback

// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.zeros((3, 2), 'float32')); np.save('%t.i.npy', np.zeros((2, 3), 'int32'))"
// RUN: not relay-run %s --input x=%t.x.npy 2>&1 | filecheck %s --check-prefix=SHAPE
// SHAPE: relay-run: error: input 'x' has shape (3, 2), expected (2, 3) (type tensor<2x3xf32>)
// RUN: not relay-run %s --input x=%t.i.npy 2>&1 | filecheck %s --check-prefix=DTYPE
// DTYPE: relay-run: error: input 'x' has dtype int32, expected float32 (type tensor<2x3xf32>)

// RUN: not relay-run %s --input y=%t.x.npy 2>&1 | filecheck %s --check-prefix=UNKNOWN
// UNKNOWN: relay-run: error: unknown input(s) 'y'; @main takes: x

func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = relay.nn.relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %t = "test.op"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %t : tensor<2x3xf32>
}
