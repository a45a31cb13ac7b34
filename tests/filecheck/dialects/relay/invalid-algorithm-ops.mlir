// RUN: relay-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// One case per verifier rule of the scans, scatters, einsum, reinterpret, reverse_sequence and grid_sample.

%a = "test.op"() : () -> tensor<2x3xf32>
%r = relay.cumsum %a {axis = 2} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK{LITERAL}: relay.cumsum: axis 2 is out of range for rank 2

// -----

%a = "test.op"() : () -> tensor<2x3xf32>
%r = relay.cumprod %a {dtype = "float7"} : (tensor<2x3xf32>) -> tensor<6xf32>
// CHECK{LITERAL}: relay.cumprod: unknown dtype 'float7'

// -----

%a = "test.op"() : () -> tensor<2x3xf32>
%r = relay.cumsum %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK{LITERAL}: relay.cumsum: result 0 has type tensor<2x3xf32> but the operands (tensor<2x3xf32>) give tensor<6xf32>

// -----

%d = "test.op"() : () -> tensor<1x5xf32>
%i = "test.op"() : () -> tensor<1x2xf32>
%r = relay.scatter_elements %d, %i, %i : (tensor<1x5xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x5xf32>
// CHECK{LITERAL}: relay.scatter_elements: indices must be integers, got tensor<1x2xf32>

// -----

%d = "test.op"() : () -> tensor<1x5xf32>
%i = "test.op"() : () -> tensor<1x2xi64>
%u = "test.op"() : () -> tensor<1x2xf32>
%r = relay.scatter_elements %d, %i, %u {reduction = "sub"} : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<1x5xf32>
// CHECK{LITERAL}: relay.scatter_elements: reduction must be one of update, add, mul, mean, min, max, got 'sub'

// -----

%d = "test.op"() : () -> tensor<1x5xf32>
%i = "test.op"() : () -> tensor<2xi64>
%u = "test.op"() : () -> tensor<2xf32>
%r = relay.scatter_elements %d, %i, %u : (tensor<1x5xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<1x5xf32>
// CHECK{LITERAL}: relay.scatter_elements: data tensor<1x5xf32>, indices tensor<2xi64> and updates tensor<2xf32> must have one rank

// -----

%d = "test.op"() : () -> tensor<1x5xf32>
%i = "test.op"() : () -> tensor<1x2xi64>
%u = "test.op"() : () -> tensor<1x3xf32>
%r = relay.scatter_elements %d, %i, %u : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x3xf32>) -> tensor<1x5xf32>
// CHECK{LITERAL}: relay.scatter_elements: indices tensor<1x2xi64> and updates tensor<1x3xf32> must have one shape

// -----

%d = "test.op"() : () -> tensor<1x5xf32>
%i = "test.op"() : () -> tensor<2x2xi64>
%u = "test.op"() : () -> tensor<2x2xf32>
%r = relay.scatter_elements %d, %i, %u {axis = 1} : (tensor<1x5xf32>, tensor<2x2xi64>, tensor<2x2xf32>) -> tensor<1x5xf32>
// CHECK{LITERAL}: relay.scatter_elements: indices tensor<2x2xi64> exceed data tensor<1x5xf32> along axis 0

// -----

%d = "test.op"() : () -> tensor<1x5xf32>
%i = "test.op"() : () -> tensor<1x2xi64>
%u = "test.op"() : () -> tensor<1x2xf64>
%r = relay.scatter_elements %d, %i, %u : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x2xf64>) -> tensor<1x5xf32>
// CHECK{LITERAL}: relay.scatter_elements: updates tensor<1x2xf64> and data tensor<1x5xf32> have different element types

// -----

%d = "test.op"() : () -> tensor<4x4xf32>
%i = "test.op"() : () -> tensor<1x2xi64>
%u = "test.op"() : () -> tensor<2x3xf32>
%r = relay.scatter_nd %d, %i, %u : (tensor<4x4xf32>, tensor<1x2xi64>, tensor<2x3xf32>) -> tensor<4x4xf32>
// CHECK{LITERAL}: relay.scatter_nd: updates tensor<2x3xf32> must have shape [2x4] for indices tensor<1x2xi64> into tensor<4x4xf32>

// -----

%d = "test.op"() : () -> tensor<4x4xf32>
%i = "test.op"() : () -> tensor<3x2xi64>
%u = "test.op"() : () -> tensor<2xf32>
%r = relay.scatter_nd %d, %i, %u : (tensor<4x4xf32>, tensor<3x2xi64>, tensor<2xf32>) -> tensor<4x4xf32>
// CHECK{LITERAL}: relay.scatter_nd: index depth 3 exceeds the rank of tensor<4x4xf32>

// -----

%d = "test.op"() : () -> tensor<4x4xf32>
%i = "test.op"() : () -> tensor<1x2xi64>
%u = "test.op"() : () -> tensor<2x4xf32>
%r = relay.scatter_nd %d, %i, %u {mode = "mean"} : (tensor<4x4xf32>, tensor<1x2xi64>, tensor<2x4xf32>) -> tensor<4x4xf32>
// CHECK{LITERAL}: relay.scatter_nd: mode must be one of update, add, mul, min, max, got 'mean'

// -----

%a = "test.op"() : () -> tensor<2x3xf32>
%b = "test.op"() : () -> tensor<4x5xf32>
%r = relay.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
// CHECK{LITERAL}: relay.einsum: equation 'ij,jk->ik': 'j' is 3 and 4

// -----

%a = "test.op"() : () -> tensor<2x3xf32>
%r = relay.einsum %a {equation = "ij,jk->ik"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK{LITERAL}: relay.einsum: equation 'ij,jk->ik' has 2 input term(s) for 1 operand(s)

// -----

%a = "test.op"() : () -> tensor<2x3xf32>
%r = relay.einsum %a {equation = "ijk->i"} : (tensor<2x3xf32>) -> tensor<2xf32>
// CHECK{LITERAL}: relay.einsum: equation 'ijk->i': term 'ijk' has 3 letters for rank 2

// -----

%a = "test.op"() : () -> tensor<2x3xf32>
%r = relay.einsum %a {equation = "ij->iz"} : (tensor<2x3xf32>) -> tensor<2xf32>
// CHECK{LITERAL}: relay.einsum: equation 'ij->iz': output letter 'z' is in no input

// -----

%a = "test.op"() : () -> tensor<2x3xf32>
%b = "test.op"() : () -> tensor<3x4xi32>
%r = relay.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<3x4xi32>) -> tensor<2x4xf32>
// CHECK{LITERAL}: relay.einsum: operands have different dtypes: tensor<2x3xf32>, tensor<3x4xi32>

// -----

%a = "test.op"() : () -> tensor<3xf32>
%r = relay.reinterpret %a {dtype = "int64"} : (tensor<3xf32>) -> tensor<3xi64>
// CHECK{LITERAL}: relay.reinterpret: cannot reinterpret float32 (32 bits) as int64 (64 bits)

// -----

%a = "test.op"() : () -> tensor<4x3xf32>
%l = "test.op"() : () -> tensor<3xi64>
%r = relay.reverse_sequence %a, %l {seq_axis = 1, batch_axis = 1} : (tensor<4x3xf32>, tensor<3xi64>) -> tensor<4x3xf32>
// CHECK{LITERAL}: relay.reverse_sequence: seq_axis and batch_axis are both 1

// -----

%a = "test.op"() : () -> tensor<4x3xf32>
%l = "test.op"() : () -> tensor<3xi64>
%r = relay.reverse_sequence %a, %l : (tensor<4x3xf32>, tensor<3xi64>) -> tensor<4x3xf32>
// CHECK{LITERAL}: relay.reverse_sequence: seq_lengths tensor<3xi64> must be 1-D of the batch size of tensor<4x3xf32>

// -----

%x = "test.op"() : () -> tensor<1x1x3x2x2xf32>
%g = "test.op"() : () -> tensor<1x3x2x4x2xf32>
%r = relay.image.grid_sample %x, %g {method = "bicubic", layout = "NCDHW"} : (tensor<1x1x3x2x2xf32>, tensor<1x3x2x4x2xf32>) -> tensor<1x1x2x4x2xf32>
// CHECK{LITERAL}: relay.image.grid_sample: method 'bicubic' is not supported for layout NCDHW

// -----

%x = "test.op"() : () -> tensor<1x1x3x2xf32>
%g = "test.op"() : () -> tensor<1x3x2x4xf32>
%r = relay.image.grid_sample %x, %g : (tensor<1x1x3x2xf32>, tensor<1x3x2x4xf32>) -> tensor<1x1x2x4xf32>
// CHECK{LITERAL}: relay.image.grid_sample: grid tensor<1x3x2x4xf32> must have 2 coordinates along axis 1

// -----

%x = "test.op"() : () -> tensor<1x1x3x2xf32>
%g = "test.op"() : () -> tensor<1x2x2x4xf32>
%r = relay.image.grid_sample %x, %g {padding_mode = "wrap"} : (tensor<1x1x3x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x1x2x4xf32>
// CHECK{LITERAL}: relay.image.grid_sample: padding_mode must be one of zeros, border, reflection, got 'wrap'

// -----

%x = "test.op"() : () -> tensor<1x1x3x2xi32>
%g = "test.op"() : () -> tensor<1x2x2x4xi32>
%r = relay.image.grid_sample %x, %g : (tensor<1x1x3x2xi32>, tensor<1x2x2x4xi32>) -> tensor<1x1x2x4xi32>
// CHECK{LITERAL}: relay.image.grid_sample: data tensor<1x1x3x2xi32> and grid tensor<1x2x2x4xi32> must be of one float type

// -----

%a = "test.op"() : () -> tensor<2x8xf32>
%b = "test.op"() : () -> tensor<2x4xf32>
%re, %im = relay.dft %a, %b : (tensor<2x8xf32>, tensor<2x4xf32>) -> (tensor<2x8xf32>, tensor<2x4xf32>)
// CHECK{LITERAL}: relay.dft: re_data tensor<2x8xf32> and im_data tensor<2x4xf32> must have one type

// -----

%a = "test.op"() : () -> tensor<8xi32>
%re, %im = relay.dft %a, %a : (tensor<8xi32>, tensor<8xi32>) -> (tensor<8xi32>, tensor<8xi32>)
// CHECK{LITERAL}: relay.dft: the signal must be floating point, got tensor<8xi32>

// -----

%a = "test.op"() : () -> tensor<3x4xf32>
%v, %i = relay.topk %a {k = 5} : (tensor<3x4xf32>) -> (tensor<3x5xf32>, tensor<3x5xi32>)
// CHECK{LITERAL}: relay.topk: k = 5 exceeds axis 1 of tensor<3x4xf32>

// -----

%a = "test.op"() : () -> tensor<3x4xf32>
%v = relay.topk %a {ret_type = "value"} : (tensor<3x4xf32>) -> tensor<3x1xf32>
// CHECK{LITERAL}: relay.topk: ret_type must be one of both, values, indices, got 'value'

// -----

%a = "test.op"() : () -> tensor<3x4xf32>
%v, %i = relay.topk %a {dtype = "float7"} : (tensor<3x4xf32>) -> (tensor<3x1xf32>, tensor<3x1xf32>)
// CHECK{LITERAL}: relay.topk: unknown dtype 'float7'

// -----

%i = "test.op"() : () -> tensor<4xi64>
%on = "test.op"() : () -> tensor<1xf32>
%r = relay.one_hot %i, %on, %on {depth = 3, dtype = "float32"} : (tensor<4xi64>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x3xf32>
// CHECK{LITERAL}: relay.one_hot: on_value tensor<1xf32> and off_value tensor<1xf32> must be scalars

// -----

%i = "test.op"() : () -> tensor<4xi64>
%on = "test.op"() : () -> tensor<f32>
%r = relay.one_hot %i, %on, %on {depth = 3, dtype = "int32"} : (tensor<4xi64>, tensor<f32>, tensor<f32>) -> tensor<4x3xi32>
// CHECK{LITERAL}: relay.one_hot: on_value tensor<f32> and off_value tensor<f32> must be of dtype int32

// -----

%i = "test.op"() : () -> tensor<4xi64>
%on = "test.op"() : () -> tensor<f32>
%r = relay.one_hot %i, %on, %on {depth = 3, axis = 2, dtype = "float32"} : (tensor<4xi64>, tensor<f32>, tensor<f32>) -> tensor<4x3xf32>
// CHECK{LITERAL}: relay.one_hot: axis 2 is out of range for 2 output axes

// -----

%x = "test.op"() : () -> tensor<1x3x8x8xf32>
%r = "test.op"() : () -> tensor<4x4xf32>
%y = relay.vision.roi_align %x, %r {pooled_size = [2, 2], spatial_scale = 1.0} : (tensor<1x3x8x8xf32>, tensor<4x4xf32>) -> tensor<4x3x2x2xf32>
// CHECK{LITERAL}: relay.vision.roi_align: expects 4-D data and (num_roi, 5) rois, got tensor<1x3x8x8xf32> and tensor<4x4xf32>

// -----

%x = "test.op"() : () -> tensor<1x3x8x8xf32>
%r = "test.op"() : () -> tensor<4x5xf32>
%y = relay.vision.roi_align %x, %r {pooled_size = [2, 2], spatial_scale = 1.0, mode = "sum"} : (tensor<1x3x8x8xf32>, tensor<4x5xf32>) -> tensor<4x3x2x2xf32>
// CHECK{LITERAL}: relay.vision.roi_align: mode must be avg, max or max_corner, got 'sum'

// -----

%x = "test.op"() : () -> tensor<1x3x8x8xf32>
%r = "test.op"() : () -> tensor<4x5xf32>
%y = relay.vision.roi_align %x, %r {pooled_size = [2, 2], spatial_scale = 1.0, min_roi_size = -1.0} : (tensor<1x3x8x8xf32>, tensor<4x5xf32>) -> tensor<4x3x2x2xf32>
// CHECK{LITERAL}: relay.vision.roi_align: min_roi_size must not be negative, got -1.0

// -----

%x = "test.op"() : () -> tensor<1x3x8x8xf32>
%r = "test.op"() : () -> tensor<4x5xf32>
%y = relay.vision.roi_align %x, %r {pooled_size = [0, 2], spatial_scale = 1.0} : (tensor<1x3x8x8xf32>, tensor<4x5xf32>) -> tensor<4x3x0x2xf32>
// CHECK{LITERAL}: relay.vision.roi_align: pooled_size must be two positive sizes, got [0, 2]

// -----

%x = "test.op"() : () -> tensor<2x3xf32>
%u, %i, %inv, %n = relay.unique %x : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<1xi32>)
// CHECK{LITERAL}: relay.unique: expects 1-D data, got tensor<2x3xf32>

// -----

%b = "test.op"() : () -> tensor<1x6x4xf32>
%s = "test.op"() : () -> tensor<1x2x5xf32>
%m = "test.op"() : () -> tensor<i64>
%t = "test.op"() : () -> tensor<f32>
%sel, %n = relay.vision.all_class_non_max_suppression %b, %s, %m, %t, %t : (tensor<1x6x4xf32>, tensor<1x2x5xf32>, tensor<i64>, tensor<f32>, tensor<f32>) -> (tensor<12x3xi64>, tensor<1xi64>)
// CHECK{LITERAL}: relay.vision.all_class_non_max_suppression: boxes tensor<1x6x4xf32> and scores tensor<1x2x5xf32> disagree on the batch or box count

// -----

%b = "test.op"() : () -> tensor<1x6x4xf32>
%s = "test.op"() : () -> tensor<1x2x6xf32>
%m = "test.op"() : () -> tensor<2xi64>
%t = "test.op"() : () -> tensor<f32>
%sel, %n = relay.vision.all_class_non_max_suppression %b, %s, %m, %t, %t : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<2xi64>, tensor<f32>, tensor<f32>) -> (tensor<12x3xi64>, tensor<1xi64>)
// CHECK{LITERAL}: relay.vision.all_class_non_max_suppression: max_output_boxes_per_class must be a scalar, got tensor<2xi64>

// -----

%b = "test.op"() : () -> tensor<1x6x4xf32>
%s = "test.op"() : () -> tensor<1x2x6xf32>
%m = "test.op"() : () -> tensor<f32>
%t = "test.op"() : () -> tensor<f32>
%sel, %n = relay.vision.all_class_non_max_suppression %b, %s, %m, %t, %t : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<12x3xi64>, tensor<1xi64>)
// CHECK{LITERAL}: relay.vision.all_class_non_max_suppression: max_output_boxes_per_class must be integers, got tensor<f32>

// -----

%x = "test.op"() : () -> tensor<1x3x8x8xf32>
%r = "test.op"() : () -> tensor<4x5xf32>
%y = relay.vision.roi_pool %x, %r {pooled_size = [2, 2], spatial_scale = 1.0, layout = "NCHW4c"} : (tensor<1x3x8x8xf32>, tensor<4x5xf32>) -> tensor<4x3x2x2xf32>
// CHECK{LITERAL}: relay.vision.roi_pool: vision.roi_pool does not support NCHW4c layout

// -----

%x = "test.op"() : () -> tensor<1x3x8x8xf32>
%r = "test.op"() : () -> tensor<4x5xf16>
%y = relay.vision.roi_pool %x, %r {pooled_size = [2, 2], spatial_scale = 1.0} : (tensor<1x3x8x8xf32>, tensor<4x5xf16>) -> tensor<4x3x2x2xf32>
// CHECK{LITERAL}: relay.vision.roi_pool: data tensor<1x3x8x8xf32> and rois tensor<4x5xf16> must be of one float type
