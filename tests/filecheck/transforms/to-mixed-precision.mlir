// RUN: relay-opt %s -p to-mixed-precision --split-input-file | filecheck %s
// RUN: relay-opt %s -p 'to-mixed-precision{mixed-precision-type=bfloat16}' --split-input-file | filecheck %s --check-prefix=BF16

// conv2d (ALWAYS) in float16 with float16 accumulation, relu (FOLLOW) follows it, softmax
// (NEVER) goes back to float32; the add wants relu's result in float32 again and gets the
// same cast (the cache), not a second one.
// CHECK-LABEL: func.func @conv_softmax
// CHECK-NEXT:    %[[X:.*]] = relay.cast %x {dtype = "float16"} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf16>
// CHECK-NEXT:    %[[W:.*]] = relay.cast %w {dtype = "float16"} : (tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xf16>
// CHECK-NEXT:    %[[C:.*]] = relay.nn.conv2d %[[X]], %[[W]] {padding = [1, 1, 1, 1], out_dtype = "float16"} : (tensor<1x3x8x8xf16>, tensor<4x3x3x3xf16>) -> tensor<1x4x8x8xf16>
// CHECK-NEXT:    %[[R:.*]] = relay.nn.relu %[[C]] : (tensor<1x4x8x8xf16>) -> tensor<1x4x8x8xf16>
// CHECK-NEXT:    %[[R32:.*]] = relay.cast %[[R]] {dtype = "float32"} : (tensor<1x4x8x8xf16>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT:    %[[S:.*]] = relay.nn.softmax %[[R32]] : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT:    %[[A:.*]] = relay.add %[[S]], %[[R32]] : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT:    func.return %[[A]] : tensor<1x4x8x8xf32>
// BF16-LABEL: func.func @conv_softmax
// BF16:         relay.nn.conv2d %{{.*}}, %{{.*}} {padding = [1, 1, 1, 1], out_dtype = "bfloat16"} : (tensor<1x3x8x8xbf16>, tensor<4x3x3x3xbf16>) -> tensor<1x4x8x8xbf16>
// BF16:         relay.cast %{{.*}} {dtype = "float32"} : (tensor<1x4x8x8xbf16>) -> tensor<1x4x8x8xf32>
func.func @conv_softmax(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %0 = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %1 = relay.nn.relu %0 : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %2 = relay.nn.softmax %1 : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %3 = relay.add %2, %1 : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return %3 : tensor<1x4x8x8xf32>
}

// -----

// A FOLLOW op whose operand comes out of a NEVER op stays in float32; parameters and constants
// count as convertible, so dense's result type becomes the function's.
// CHECK-LABEL: func.func @follow
// CHECK-NEXT:    %[[C:.*]] = relay.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[E:.*]] = relay.exp %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[M:.*]] = relay.multiply %[[E]], %[[C]] : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[M16:.*]] = relay.cast %[[M]] {dtype = "float16"}
// CHECK-NEXT:    %[[W16:.*]] = relay.cast %w {dtype = "float16"}
// CHECK-NEXT:    %[[D:.*]] = relay.nn.dense %[[M16]], %[[W16]] {units = 3, out_dtype = "float16"} : (tensor<2x4xf16>, tensor<3x4xf16>) -> tensor<2x3xf16>
// CHECK-NEXT:    %[[C16:.*]] = relay.cast %[[C]] {dtype = "float16"} : (tensor<f32>) -> tensor<f16>
// CHECK-NEXT:    %[[A:.*]] = relay.add %[[D]], %[[C16]] : (tensor<2x3xf16>, tensor<f16>) -> tensor<2x3xf16>
// CHECK-NEXT:    func.return %[[A]] : tensor<2x3xf16>
// CHECK-NEXT:  }
func.func @follow(%x: tensor<2x4xf32>, %w: tensor<3x4xf32>) -> tensor<2x3xf32> {
  %c = relay.constant dense<2.0> : tensor<f32>
  %0 = relay.exp %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %1 = relay.multiply %0, %c : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %2 = relay.nn.dense %1, %w {units = 3} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  %3 = relay.add %2, %c : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  func.return %3 : tensor<2x3xf32>
}

// -----

// Integers are never cast; a clip whose bounds float16 cannot hold stays in float32 (bfloat16
// holds them). A multi-result op follows when all its operands do.
// CHECK-LABEL: func.func @ints_clip_tuple
// CHECK-NEXT:    %[[X:.*]] = relay.cast %x {dtype = "float16"}
// CHECK-NEXT:    %[[T:.*]] = relay.take %[[X]], %i {axis = 0} : (tensor<4x2xf16>, tensor<3xi32>) -> tensor<3x2xf16>
// CHECK-NEXT:    %[[T32:.*]] = relay.cast %[[T]] {dtype = "float32"}
// CHECK-NEXT:    %[[K:.*]] = relay.clip %[[T32]] {a_min = -100000.0, a_max = 100000.0} : (tensor<3x2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    %[[S:.*]], %[[S1:.*]] = relay.split %[[T]] {indices_or_sections = 2, axis = 1} : (tensor<3x2xf16>) -> (tensor<3x1xf16>, tensor<3x1xf16>)
// CHECK-NEXT:    func.return %[[K]], %[[S1]] : tensor<3x2xf32>, tensor<3x1xf16>
// BF16-LABEL: func.func @ints_clip_tuple
// BF16:         relay.clip %{{.*}} {a_min = -100000.0, a_max = 100000.0} : (tensor<3x2xbf16>) -> tensor<3x2xbf16>
func.func @ints_clip_tuple(%x: tensor<4x2xf32>, %i: tensor<3xi32>) -> (tensor<3x2xf32>, tensor<3x1xf32>) {
  %0 = relay.take %x, %i {axis = 0} : (tensor<4x2xf32>, tensor<3xi32>) -> tensor<3x2xf32>
  %1 = relay.clip %0 {a_min = -100000.0, a_max = 100000.0} : (tensor<3x2xf32>) -> tensor<3x2xf32>
  %2, %3 = relay.split %0 {indices_or_sections = 2, axis = 1} : (tensor<3x2xf32>) -> (tensor<3x1xf32>, tensor<3x1xf32>)
  func.return %1, %3 : tensor<3x2xf32>, tensor<3x1xf32>
}

// -----

// A called function is converted on its own (its parameters keep their types, its result takes
// the type it computes in); the caller passes float32 and takes the new result type.
// CHECK-LABEL: func.func private @fused
// CHECK-SAME:    (%p: tensor<2x2xf32>, %q: tensor<2x2xf32>) -> tensor<2x2xf16>
// CHECK:         relay.nn.batch_matmul %{{.*}}, %{{.*}} {out_dtype = "float16"}
// CHECK-LABEL: func.func @caller
// CHECK-NEXT:    %[[E:.*]] = relay.exp %a : (tensor<2x2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT:    %[[F:.*]] = func.call @fused(%[[E]], %a) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf16>
// CHECK-NEXT:    %[[N:.*]] = relay.negative %[[F]] : (tensor<2x2xf16>) -> tensor<2x2xf16>
// CHECK-NEXT:    func.return %[[N]] : tensor<2x2xf16>
func.func private @fused(%p: tensor<2x2xf32>, %q: tensor<2x2xf32>) -> tensor<2x2xf32> attributes {relay.primitive = 1 : i64} {
  %0 = relay.reshape %p {newshape = [1, 2, 2]} : (tensor<2x2xf32>) -> tensor<1x2x2xf32>
  %1 = relay.reshape %q {newshape = [1, 2, 2]} : (tensor<2x2xf32>) -> tensor<1x2x2xf32>
  %2 = relay.nn.batch_matmul %0, %1 : (tensor<1x2x2xf32>, tensor<1x2x2xf32>) -> tensor<1x2x2xf32>
  %3 = relay.reshape %2 {newshape = [2, 2]} : (tensor<1x2x2xf32>) -> tensor<2x2xf32>
  func.return %3 : tensor<2x2xf32>
}
func.func @caller(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = relay.exp %a : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %1 = func.call @fused(%0, %a) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = relay.negative %1 : (tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %2 : tensor<2x2xf32>
}
