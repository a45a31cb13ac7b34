// RUN: relay-opt %s -p lower-to-memory,place-concat-inputs --split-input-file | filecheck %s
// RUN: relay-opt %s -p lower-to-memory,place-concat-inputs,plan-memory,verify-memory-plan --split-input-file | filecheck %s --check-prefix=PLAN

// Two steps produce the inputs of a channel concatenation with batch 1 (NCHW): each slice is
// a contiguous byte range of the result, so each producer writes its slice and the
// concatenation step is gone. The result's storage lives from the first producer (step 0).

func.func private @neg(%p: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.negative %p : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  func.return %r : tensor<1x4x4x4xf32>
}
func.func private @wide(%p: tensor<1x4x4x4xf32>) -> tensor<1x8x4x4xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.concatenate %p, %p {axis = 1} : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x8x4x4xf32>
  %s = relay.exp %r : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  func.return %s : tensor<1x8x4x4xf32>
}
func.func private @cat(%a: tensor<1x4x4x4xf32>, %b: tensor<1x8x4x4xf32>) -> tensor<1x12x4x4xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.concatenate %a, %b {axis = 1} : (tensor<1x4x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x12x4x4xf32>
  func.return %r : tensor<1x12x4x4xf32>
}
func.func private @sum(%p: tensor<1x12x4x4xf32>) -> tensor<1x12x4x4xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.add %p, %p : (tensor<1x12x4x4xf32>, tensor<1x12x4x4xf32>) -> tensor<1x12x4x4xf32>
  func.return %r : tensor<1x12x4x4xf32>
}
func.func @main(%x: tensor<1x4x4x4xf32>) -> tensor<1x12x4x4xf32> {
  %a = func.call @neg(%x) : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %b = func.call @wide(%x) : (tensor<1x4x4x4xf32>) -> tensor<1x8x4x4xf32>
  %c = func.call @cat(%a, %b) : (tensor<1x4x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x12x4x4xf32>
  %d = func.call @sum(%c) : (tensor<1x12x4x4xf32>) -> tensor<1x12x4x4xf32>
  func.return %d : tensor<1x12x4x4xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK:         %c_storage = memory.alloc_storage {size = 768, alignment = 64, kind = "intermediate", lifetime = [0, 2]}
// CHECK-NEXT:    %a = memory.alloc_tensor %c_storage {offset = 0} : tensor<1x4x4x4xf32>
// CHECK-NEXT:    memory.invoke @neg(%x_in) outs(%a) {step = 0}
// CHECK-NEXT:    %b = memory.alloc_tensor %c_storage {offset = 256} : tensor<1x8x4x4xf32>
// CHECK-NEXT:    memory.invoke @wide(%x_in) outs(%b) {step = 1}
// CHECK-NEXT:    memory.kill %x_storage
// CHECK-NEXT:    %c = memory.alloc_tensor %c_storage {offset = 0} : tensor<1x12x4x4xf32>
// CHECK-NOT:     memory.invoke @cat
// CHECK:         memory.invoke @sum(%c) outs(%d) {step = 2}
// CHECK-NEXT:    memory.kill %c_storage
// PLAN: memory.pool @global {alignment = 16, size = 1536}

// -----

// NHWC: the joined slices are strided (the rows before the axis are not 1), so the step stays.

func.func private @neg(%p: tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.negative %p : (tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  func.return %r : tensor<1x2x2x4xf32>
}
func.func private @cat(%a: tensor<1x2x2x4xf32>, %b: tensor<1x2x2x4xf32>) -> tensor<1x2x2x8xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.concatenate %a, %b {axis = 3} : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x8xf32>
  func.return %r : tensor<1x2x2x8xf32>
}
func.func @main(%x: tensor<1x2x2x4xf32>) -> tensor<1x2x2x8xf32> {
  %a = func.call @neg(%x) : (tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  %b = func.call @neg(%a) : (tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  %c = func.call @cat(%a, %b) : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x8xf32>
  func.return %c : tensor<1x2x2x8xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK:         %a_storage = memory.alloc_storage {size = 64, alignment = 64, kind = "intermediate", lifetime = [0, 2]}
// CHECK:         %b_storage = memory.alloc_storage {size = 64, alignment = 64, kind = "intermediate", lifetime = [1, 2]}
// CHECK:         memory.invoke @cat(%a, %b) outs(%c) {step = 2}
// PLAN: memory.pool @global {alignment = 16, size = 256}

// -----

// %a feeds two concatenations: it keeps its copies (a memory.copy into each slice); %b and
// %e, each read by one, are placed. The graph input %x (here in its arena copy, an "input"
// storage) and the constant are copied too.

func.func private @neg(%p: tensor<1x16xf32>) -> tensor<1x16xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.negative %p : (tensor<1x16xf32>) -> tensor<1x16xf32>
  func.return %r : tensor<1x16xf32>
}
func.func private @cat3(%a: tensor<1x16xf32>, %b: tensor<1x16xf32>, %c: tensor<1x16xf32>) -> tensor<1x48xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.concatenate %a, %b, %c {axis = 1} : (tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x48xf32>
  func.return %r : tensor<1x48xf32>
}
func.func private @add(%p: tensor<1x48xf32>, %q: tensor<1x48xf32>) -> tensor<1x48xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.add %p, %q : (tensor<1x48xf32>, tensor<1x48xf32>) -> tensor<1x48xf32>
  func.return %r : tensor<1x48xf32>
}
func.func @main(%x: tensor<1x16xf32>) -> tensor<1x48xf32> {
  %k = relay.constant dense<2.0> : tensor<1x16xf32>
  %a = func.call @neg(%x) : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %b = func.call @neg(%a) : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %c = func.call @cat3(%a, %b, %x) : (tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x48xf32>
  %e = func.call @neg(%b) : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %f = func.call @cat3(%k, %e, %a) : (tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x48xf32>
  %g = func.call @add(%c, %f) : (tensor<1x48xf32>, tensor<1x48xf32>) -> tensor<1x48xf32>
  func.return %g : tensor<1x48xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK:         %a_storage = memory.alloc_storage {size = 64, alignment = 64, kind = "intermediate", lifetime = [0, 3]}
// CHECK-NEXT:    %a = memory.alloc_tensor %a_storage {offset = 0} : tensor<1x16xf32>
// CHECK-NEXT:    memory.invoke @neg(%x_in) outs(%a) {step = 0}
// CHECK-NEXT:    %c_storage = memory.alloc_storage {size = 192, alignment = 64, kind = "intermediate", lifetime = [1, 3]}
// CHECK-NEXT:    %b = memory.alloc_tensor %c_storage {offset = 64} : tensor<1x16xf32>
// CHECK-NEXT:    memory.invoke @neg(%a) outs(%b) {step = 1}
// CHECK-NEXT:    %c = memory.alloc_tensor %c_storage {offset = 0} : tensor<1x48xf32>
// CHECK-NEXT:    %[[A1:.*]] = memory.alloc_tensor %c_storage {offset = 0} : tensor<1x16xf32>
// CHECK-NEXT:    memory.copy %a to %[[A1]] : tensor<1x16xf32>
// CHECK-NEXT:    %[[X1:.*]] = memory.alloc_tensor %c_storage {offset = 128} : tensor<1x16xf32>
// CHECK-NEXT:    memory.copy %x_in to %[[X1]] : tensor<1x16xf32>
// CHECK-NEXT:    %f_storage = memory.alloc_storage {size = 192, alignment = 64, kind = "intermediate", lifetime = [2, 3]}
// CHECK-NEXT:    %e = memory.alloc_tensor %f_storage {offset = 64} : tensor<1x16xf32>
// CHECK-NEXT:    memory.invoke @neg(%b) outs(%e) {step = 2}
// CHECK-NEXT:    memory.kill %x_storage
// CHECK-NEXT:    %f = memory.alloc_tensor %f_storage {offset = 0} : tensor<1x48xf32>
// CHECK-NEXT:    %[[K1:.*]] = memory.alloc_tensor %f_storage {offset = 0} : tensor<1x16xf32>
// CHECK-NEXT:    memory.copy %k to %[[K1]] : tensor<1x16xf32>
// CHECK-NEXT:    %[[A2:.*]] = memory.alloc_tensor %f_storage {offset = 128} : tensor<1x16xf32>
// CHECK-NEXT:    memory.copy %a to %[[A2]] : tensor<1x16xf32>
// CHECK-NOT:     memory.invoke @cat3
// CHECK:         memory.invoke @add(%c, %f) outs(%g) {step = 3}
// PLAN: memory.pool @global {alignment = 16, size = 640}

// -----

// A concatenation of a concatenation: the inner one is placed first, then the whole inner
// storage (its two slices) moves into the outer one's; no concatenation step is left.

func.func private @neg(%p: tensor<2x16xf32>) -> tensor<2x16xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.negative %p : (tensor<2x16xf32>) -> tensor<2x16xf32>
  func.return %r : tensor<2x16xf32>
}
func.func private @cat2(%a: tensor<2x16xf32>, %b: tensor<2x16xf32>) -> tensor<4x16xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.concatenate %a, %b {axis = 0} : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<4x16xf32>
  func.return %r : tensor<4x16xf32>
}
func.func private @cat_outer(%a: tensor<2x16xf32>, %b: tensor<4x16xf32>) -> tensor<6x16xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.concatenate %b, %a {axis = 0} : (tensor<4x16xf32>, tensor<2x16xf32>) -> tensor<6x16xf32>
  func.return %r : tensor<6x16xf32>
}
func.func private @twice(%p: tensor<6x16xf32>) -> tensor<6x16xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.add %p, %p : (tensor<6x16xf32>, tensor<6x16xf32>) -> tensor<6x16xf32>
  func.return %r : tensor<6x16xf32>
}
func.func @main(%x: tensor<2x16xf32>) -> tensor<6x16xf32> {
  %a = func.call @neg(%x) : (tensor<2x16xf32>) -> tensor<2x16xf32>
  %b = func.call @neg(%a) : (tensor<2x16xf32>) -> tensor<2x16xf32>
  %c = func.call @neg(%b) : (tensor<2x16xf32>) -> tensor<2x16xf32>
  %i = func.call @cat2(%a, %b) : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<4x16xf32>
  %o = func.call @cat_outer(%c, %i) : (tensor<2x16xf32>, tensor<4x16xf32>) -> tensor<6x16xf32>
  %t = func.call @twice(%o) : (tensor<6x16xf32>) -> tensor<6x16xf32>
  func.return %t : tensor<6x16xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK:         %o_storage = memory.alloc_storage {size = 384, alignment = 64, kind = "intermediate", lifetime = [0, 3]}
// CHECK-NEXT:    %a = memory.alloc_tensor %o_storage {offset = 0} : tensor<2x16xf32>
// CHECK-NEXT:    memory.invoke @neg(%x_in) outs(%a) {step = 0}
// CHECK-NEXT:    memory.kill %x_storage
// CHECK-NEXT:    %b = memory.alloc_tensor %o_storage {offset = 128} : tensor<2x16xf32>
// CHECK-NEXT:    memory.invoke @neg(%a) outs(%b) {step = 1}
// CHECK-NEXT:    %c = memory.alloc_tensor %o_storage {offset = 256} : tensor<2x16xf32>
// CHECK-NEXT:    memory.invoke @neg(%b) outs(%c) {step = 2}
// CHECK-NEXT:    %i = memory.alloc_tensor %o_storage {offset = 0} : tensor<4x16xf32>
// CHECK-NEXT:    %o = memory.alloc_tensor %o_storage {offset = 0} : tensor<6x16xf32>
// CHECK-NOT:     memory.invoke @cat
// CHECK:         memory.invoke @twice(%o) outs(%t) {step = 3}
// PLAN: memory.pool @global {alignment = 16, size = 768}

// -----

// The peak: @big needs 4096 bytes of scratch while it produces %b. With every input placed,
// the whole concatenation (3072 bytes) would be live beside that scratch, %e's slice too,
// before %e is computed: the most bytes live at once would grow (7168 -> 8192). So would
// placing %b and %e. Placing %e alone does not: %a and %b are copied into their slices
// after the last step (and die after those copies).

func.func private @neg(%p: tensor<1x256xf32>) -> tensor<1x256xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.negative %p : (tensor<1x256xf32>) -> tensor<1x256xf32>
  func.return %r : tensor<1x256xf32>
}
func.func private @big(%p: tensor<1x256xf32>) -> tensor<1x256xf32> attributes {relay.primitive = 1 : i64, relay.kernel_scratch_bytes = 4096 : i64} {
  %r = relay.exp %p : (tensor<1x256xf32>) -> tensor<1x256xf32>
  func.return %r : tensor<1x256xf32>
}
func.func private @cat(%a: tensor<1x256xf32>, %b: tensor<1x256xf32>, %e: tensor<1x256xf32>) -> tensor<1x768xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.concatenate %a, %b, %e {axis = 1} : (tensor<1x256xf32>, tensor<1x256xf32>, tensor<1x256xf32>) -> tensor<1x768xf32>
  func.return %r : tensor<1x768xf32>
}
func.func @main(%x: tensor<1x256xf32>) -> tensor<1x768xf32> {
  %a = func.call @neg(%x) : (tensor<1x256xf32>) -> tensor<1x256xf32>
  %b = func.call @big(%x) : (tensor<1x256xf32>) -> tensor<1x256xf32>
  %e = func.call @neg(%x) : (tensor<1x256xf32>) -> tensor<1x256xf32>
  %c = func.call @cat(%a, %b, %e) : (tensor<1x256xf32>, tensor<1x256xf32>, tensor<1x256xf32>) -> tensor<1x768xf32>
  func.return %c : tensor<1x768xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK:         %a_storage = memory.alloc_storage {size = 1024, alignment = 64, kind = "intermediate", lifetime = [0, 2]}
// CHECK:         %b_storage = memory.alloc_storage {size = 1024, alignment = 64, kind = "intermediate", lifetime = [1, 2]}
// CHECK:         %c_storage = memory.alloc_storage {size = 3072, alignment = 64, kind = "output", lifetime = [2, 2]}
// CHECK-NEXT:    %e = memory.alloc_tensor %c_storage {offset = 2048} : tensor<1x256xf32>
// CHECK-NEXT:    memory.invoke @neg(%x_in) outs(%e) {step = 2}
// CHECK-NEXT:    %c = memory.alloc_tensor %c_storage {offset = 0} : tensor<1x768xf32>
// CHECK-NEXT:    %[[A:.*]] = memory.alloc_tensor %c_storage {offset = 0} : tensor<1x256xf32>
// CHECK-NEXT:    memory.copy %a to %[[A]] : tensor<1x256xf32>
// CHECK-NEXT:    %[[B:.*]] = memory.alloc_tensor %c_storage {offset = 1024} : tensor<1x256xf32>
// CHECK-NEXT:    memory.copy %b to %[[B]] : tensor<1x256xf32>
// CHECK-NEXT:    memory.kill %x_storage
// CHECK-NEXT:    memory.kill %a_storage
// CHECK-NEXT:    memory.kill %b_storage
// CHECK-NEXT:    func.return %c
// PLAN: memory.pool @global {alignment = 16, size = 7168}
