// RUN: relay-opt %s -p annotate-used-memory --split-input-file --verify-diagnostics | filecheck %s

// One primitive function: its input and output are live (16 + 16 bytes).

func.func private @fused_max_pool2d(%x: tensor<1x2x2x4xi8>) -> tensor<1x2x2x4xi8> attributes {relay.primitive = 1 : i64} {
  %y = relay.nn.max_pool2d %x {pool_size = [1, 1]} : (tensor<1x2x2x4xi8>) -> tensor<1x2x2x4xi8>
  func.return %y : tensor<1x2x2x4xi8>
}
func.func @main(%input: tensor<1x2x2x4xi8>) -> tensor<1x2x2x4xi8> {
  %0 = func.call @fused_max_pool2d(%input) : (tensor<1x2x2x4xi8>) -> tensor<1x2x2x4xi8>
  func.return %0 : tensor<1x2x2x4xi8>
}

// CHECK-LABEL: func.func private @fused_max_pool2d
// CHECK-SAME: relay.used_memory = [32 : i64]
// CHECK-LABEL: func.func @main
// CHECK-SAME: relay.io_used_memory = 32 : i64

// -----

// Three chained pools: each call sees its input and its output (128+98, 98+72, 72+50).

func.func private @pool_a(%x: tensor<1x8x8x2xi8>) -> tensor<1x7x7x2xi8> attributes {relay.primitive = 1 : i64} {
  %y = relay.nn.max_pool2d %x {pool_size = [2, 2], layout = "NHWC"} : (tensor<1x8x8x2xi8>) -> tensor<1x7x7x2xi8>
  func.return %y : tensor<1x7x7x2xi8>
}
func.func private @pool_b(%x: tensor<1x7x7x2xi8>) -> tensor<1x6x6x2xi8> attributes {relay.primitive = 1 : i64} {
  %y = relay.nn.max_pool2d %x {pool_size = [2, 2], layout = "NHWC"} : (tensor<1x7x7x2xi8>) -> tensor<1x6x6x2xi8>
  func.return %y : tensor<1x6x6x2xi8>
}
func.func private @pool_c(%x: tensor<1x6x6x2xi8>) -> tensor<1x5x5x2xi8> attributes {relay.primitive = 1 : i64} {
  %y = relay.nn.max_pool2d %x {pool_size = [2, 2], layout = "NHWC"} : (tensor<1x6x6x2xi8>) -> tensor<1x5x5x2xi8>
  func.return %y : tensor<1x5x5x2xi8>
}
func.func @main(%input: tensor<1x8x8x2xi8>) -> tensor<1x5x5x2xi8> {
  %0 = func.call @pool_a(%input) : (tensor<1x8x8x2xi8>) -> tensor<1x7x7x2xi8>
  %1 = func.call @pool_b(%0) : (tensor<1x7x7x2xi8>) -> tensor<1x6x6x2xi8>
  %2 = func.call @pool_c(%1) : (tensor<1x6x6x2xi8>) -> tensor<1x5x5x2xi8>
  func.return %2 : tensor<1x5x5x2xi8>
}

// CHECK-LABEL: func.func private @pool_a
// CHECK-SAME: relay.used_memory = [226 : i64]
// CHECK-LABEL: func.func private @pool_b
// CHECK-SAME: relay.used_memory = [170 : i64]
// CHECK-LABEL: func.func private @pool_c
// CHECK-SAME: relay.used_memory = [122 : i64]
// CHECK-LABEL: func.func @main
// CHECK-SAME: relay.io_used_memory = 178 : i64

// -----

// Mixed dtypes: 8 x int16 in, 8 x uint32 out.

func.func private @fused_cast(%x: tensor<1x2x2x2xi16>) -> tensor<1x2x2x2xui32> attributes {relay.primitive = 1 : i64} {
  %y = relay.cast %x {dtype = "uint32"} : (tensor<1x2x2x2xi16>) -> tensor<1x2x2x2xui32>
  func.return %y : tensor<1x2x2x2xui32>
}
func.func @main(%input: tensor<1x2x2x2xi16>) -> tensor<1x2x2x2xui32> {
  %0 = func.call @fused_cast(%input) : (tensor<1x2x2x2xi16>) -> tensor<1x2x2x2xui32>
  func.return %0 : tensor<1x2x2x2xui32>
}

// CHECK-LABEL: func.func private @fused_cast
// CHECK-SAME: relay.used_memory = [48 : i64]
// CHECK-LABEL: func.func @main
// CHECK-SAME: relay.io_used_memory = 48 : i64

// -----

// Two reshapes of one input, concatenated: the second call also sees the first result.

func.func private @reshape_a(%x: tensor<1x4x5x6xi8>) -> tensor<1x4x30xi8> attributes {relay.primitive = 1 : i64, relay.reshape_only = 1 : i64} {
  %y = relay.reshape %x {newshape = [1, 4, 30]} : (tensor<1x4x5x6xi8>) -> tensor<1x4x30xi8>
  func.return %y : tensor<1x4x30xi8>
}
func.func private @reshape_b(%x: tensor<1x4x5x6xi8>) -> tensor<1x4x30xi8> attributes {relay.primitive = 1 : i64, relay.reshape_only = 1 : i64} {
  %y = relay.reshape %x {newshape = [1, 4, 30]} : (tensor<1x4x5x6xi8>) -> tensor<1x4x30xi8>
  func.return %y : tensor<1x4x30xi8>
}
func.func @main(%input: tensor<1x4x5x6xi8>) -> tensor<2x4x30xi8> {
  %0 = func.call @reshape_a(%input) : (tensor<1x4x5x6xi8>) -> tensor<1x4x30xi8>
  %1 = func.call @reshape_b(%input) : (tensor<1x4x5x6xi8>) -> tensor<1x4x30xi8>
  %2 = relay.concatenate %0, %1 {axis = 0} : (tensor<1x4x30xi8>, tensor<1x4x30xi8>) -> tensor<2x4x30xi8>
  func.return %2 : tensor<2x4x30xi8>
}

// CHECK-LABEL: func.func private @reshape_a
// CHECK-SAME: relay.used_memory = [240 : i64]
// CHECK-LABEL: func.func private @reshape_b
// CHECK-SAME: relay.used_memory = [360 : i64]
// CHECK-LABEL: func.func @main
// CHECK-SAME: relay.io_used_memory = 360 : i64

// -----

// A function called twice gets one value per call site, in program order.

func.func private @neg(%x: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive = 1 : i64} {
  %y = relay.negative %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @neg(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = func.call @neg(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = relay.add %1, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// %b is live across both calls; %a only across the first.
// CHECK-LABEL: func.func private @neg
// CHECK-SAME: relay.used_memory = [48 : i64, 48 : i64]
// CHECK-LABEL: func.func @main
// CHECK-SAME: relay.io_used_memory = 48 : i64

// -----

func.func private @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {relay.primitive = 1 : i64} {
  %y = relay.negative %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
func.func @main(%dyn: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = func.call @f(%dyn) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %0 : tensor<?x4xf32>
}

// CHECK: AnnotateUsedMemory does not support dynamic shapes: %dyn has type tensor<?x4xf32>

// -----

func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// CHECK: @main calls @g, which is not primitive: expect top-level functions to be primitive

// -----

// on_device (as plan-devices leaves it) is transparent: %b is %a, so at the copy only %a and
// %c are live (32 bytes; counting the annotation as a tensor of its own would give 48)
func.func private @f(%p: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive = 1 : i64} {
  %0 = relay.negative %p : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func private @copy(%p: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive = 1 : i64} {
  %0 = relay.device_copy %p {src_virtual_device = #relay.virtual_device<cpu(1)>, dst_virtual_device = #relay.virtual_device<cpu(0)>} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func private @g(%p: tensor<4xf32>, %q: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive = 1 : i64} {
  %0 = relay.add %p, %q : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = relay.on_device %a {virtual_device = #relay.virtual_device<cpu(1)>, constrain_result = true} : (tensor<4xf32>) -> tensor<4xf32>
  %c = func.call @copy(%b) : (tensor<4xf32>) -> tensor<4xf32>
  %d = func.call @g(%a, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %d : tensor<4xf32>
}

// CHECK-LABEL: func.func private @f
// CHECK-SAME: relay.used_memory = [32 : i64]
// CHECK-LABEL: func.func private @copy
// CHECK-SAME: relay.used_memory = [32 : i64]
// CHECK-LABEL: func.func private @g
// CHECK-SAME: relay.used_memory = [48 : i64]
