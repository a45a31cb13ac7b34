// RUN: relay-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// One case per verifier rule of the relay dialect: each message names the op and the mismatch.

%a = "test.op"() : () -> tensor<2x3xf32>
%b = "test.op"() : () -> tensor<3xf32>
%r = relay.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x4xf32>
// CHECK{LITERAL}: relay.add: result 0 has type tensor<2x4xf32> but the operands (tensor<2x3xf32>, tensor<3xf32>) give tensor<2x3xf32>

// -----

%a = "test.op"() : () -> tensor<2x3xf32>
%b = "test.op"() : () -> tensor<4xf32>
%r = relay.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
// CHECK{LITERAL}: relay.add: operands cannot be broadcast together: tensor<2x3xf32>, tensor<4xf32>

// -----

%a = "test.op"() : () -> tensor<3xf32>
%b = "test.op"() : () -> tensor<3xi32>
%r = relay.multiply %a, %b : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
// CHECK{LITERAL}: relay.multiply: operand dtypes differ: tensor<3xf32>, tensor<3xi32>

// -----

%a = "test.op"() : () -> tensor<3xf32>
%b = "test.op"() : () -> tensor<3xf32>
%r = relay.less %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK{LITERAL}: relay.less: result 0 has type tensor<3xf32> but the operands (tensor<3xf32>, tensor<3xf32>) give tensor<3xi1>

// -----

%a = "test.op"() : () -> tensor<3xf32>
%r = relay.cast %a {dtype = "float8"} : (tensor<3xf32>) -> tensor<3xf32>
// CHECK{LITERAL}: relay.cast: unknown dtype 'float8'

// -----

%a = "test.op"() : () -> tensor<3xf32>
%r = relay.nn.relu %a {alpha = 1.0} : (tensor<3xf32>) -> tensor<3xf32>
// CHECK{LITERAL}: relay.nn.relu has no attribute 'alpha' (known: none)

// -----

%a = "test.op"() : () -> tensor<3xf32>
%r = relay.clip %a {a_min = 0.0} : (tensor<3xf32>) -> tensor<3xf32>
// CHECK{LITERAL}: relay.clip: attribute 'a_max' is required

// -----

%a = "test.op"() : () -> tensor<3xf32>
%r = relay.nn.leaky_relu %a {alpha = "x"} : (tensor<3xf32>) -> tensor<3xf32>
// CHECK{LITERAL}: attribute 'alpha' expects a number, got 'x'

// -----

%a = "test.op"() : () -> tensor<1x3x8x8xf32>
%b = "test.op"() : () -> tensor<4x2x3x3xf32>
%r = relay.nn.conv2d %a, %b : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
// CHECK{LITERAL}: relay.nn.conv2d: data tensor<1x3x8x8xf32> has 3 input channels but weight tensor<4x2x3x3xf32> expects 2 x groups 1 = 2

// -----

%a = "test.op"() : () -> tensor<1x4x8x8xf32>
%b = "test.op"() : () -> tensor<3x2x3x3xf32>
%r = relay.nn.conv2d %a, %b {groups = 2} : (tensor<1x4x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32>
// CHECK{LITERAL}: relay.nn.conv2d: output channels 3 of weight tensor<3x2x3x3xf32> not divisible by groups 2

// -----

%a = "test.op"() : () -> tensor<1x3x8x8xf32>
%b = "test.op"() : () -> tensor<4x3x3x3xf32>
%r = relay.nn.conv2d %a, %b {groups = 0} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
// CHECK{LITERAL}: relay.nn.conv2d: groups must be positive, got 0

// -----

%a = "test.op"() : () -> tensor<1x3x8x8xf32>
%b = "test.op"() : () -> tensor<4x3x3x3xf32>
%r = relay.nn.conv2d %a, %b {channels = 8} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
// CHECK{LITERAL}: relay.nn.conv2d: channels = 8 but weight tensor<4x3x3x3xf32> has 4 output channels

// -----

%a = "test.op"() : () -> tensor<1x3x8x8xf32>
%b = "test.op"() : () -> tensor<4x3x3x3xf32>
%r = relay.nn.conv2d %a, %b {kernel_size = [5, 5]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
// CHECK{LITERAL}: relay.nn.conv2d: kernel_size = [5, 5] but weight tensor<4x3x3x3xf32> has 3x3

// -----

%a = "test.op"() : () -> tensor<1x3x2x2xf32>
%b = "test.op"() : () -> tensor<4x3x3x3xf32>
%r = relay.nn.conv2d %a, %b : (tensor<1x3x2x2xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x0x0xf32>
// CHECK{LITERAL}: relay.nn.conv2d: output spatial size 0x0 is empty for data tensor<1x3x2x2xf32> and weight tensor<4x3x3x3xf32>

// -----

%a = "test.op"() : () -> tensor<1x3x8x8xf32>
%b = "test.op"() : () -> tensor<4x3x3x3xf32>
%r = relay.nn.conv2d %a, %b {data_layout = "NCWX"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
// CHECK{LITERAL}: relay.nn.conv2d: unsupported layout 'NCWX' (expected a permutation of NCHW)

// -----

%a = "test.op"() : () -> tensor<1x3x8x8xf32>
%b = "test.op"() : () -> tensor<4x3x3x3xf32>
%r = relay.nn.conv2d %a, %b {padding = [1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
// CHECK{LITERAL}: relay.nn.conv2d: padding must have 1, 2 or 4 values, got 3

// -----

%a = "test.op"() : () -> tensor<1x3x8x8xf32>
%b = "test.op"() : () -> tensor<4x3x3x3xf32>
%r = relay.nn.conv2d %a, %b {strides = [1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
// CHECK{LITERAL}: relay.nn.conv2d: 'strides' must have 2 values, got 3

// -----

%a = "test.op"() : () -> tensor<3x8x8xf32>
%b = "test.op"() : () -> tensor<4x3x3x3xf32>
%r = relay.nn.conv2d %a, %b : (tensor<3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
// CHECK{LITERAL}: relay.nn.conv2d: data must have rank 4, got tensor<3x8x8xf32>

// -----

%a = "test.op"() : () -> tensor<1x8x4x4xf32>
%b = "test.op"() : () -> tensor<4x4x3x3xf32>
%r = relay.nn.conv2d_transpose %a, %b : (tensor<1x8x4x4xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
// CHECK{LITERAL}: relay.nn.conv2d_transpose: data tensor<1x8x4x4xf32> has 8 channels but weight tensor<4x4x3x3xf32> expects 4

// -----

%a = "test.op"() : () -> tensor<1x8x4x4xf32>
%b = "test.op"() : () -> tensor<8x4x3x3xf32>
%r = relay.nn.conv2d_transpose %a, %b {channels = 2} : (tensor<1x8x4x4xf32>, tensor<8x4x3x3xf32>) -> tensor<1x4x6x6xf32>
// CHECK{LITERAL}: relay.nn.conv2d_transpose: channels = 2 but weight tensor<8x4x3x3xf32> gives 4

// -----

%a = "test.op"() : () -> tensor<1x1x2x2xf32>
%r = relay.nn.max_pool2d %a {pool_size = [3, 3]} : (tensor<1x1x2x2xf32>) -> tensor<1x1x1x1xf32>
// CHECK{LITERAL}: relay.nn.max_pool2d: pool window 3x3 larger than padded input tensor<1x1x2x2xf32>

// -----

%a = "test.op"() : () -> tensor<1x1x4x4xf32>
%r = relay.nn.max_pool2d %a : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
// CHECK{LITERAL}: relay.nn.max_pool2d: attribute 'pool_size' is required

// -----

%a = "test.op"() : () -> tensor<1x4x8x8xf32>
%b = "test.op"() : () -> tensor<3xf32>
%c = "test.op"() : () -> tensor<4xf32>
%d = "test.op"() : () -> tensor<4xf32>
%e = "test.op"() : () -> tensor<4xf32>
%r:3 = relay.nn.batch_norm %a, %b, %c, %d, %e : (tensor<1x4x8x8xf32>, tensor<3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK{LITERAL}: relay.nn.batch_norm: gamma tensor<3xf32> must be a vector of 4 elements to match tensor<1x4x8x8xf32>

// -----

%a = "test.op"() : () -> tensor<1x4x8x8xf32>
%b = "test.op"() : () -> tensor<4xf32>
%c = "test.op"() : () -> tensor<4xf32>
%d = "test.op"() : () -> tensor<4xf32>
%e = "test.op"() : () -> tensor<4xf32>
%r:3 = relay.nn.batch_norm %a, %b, %c, %d, %e {axis = 4} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK{LITERAL}: relay.nn.batch_norm: axis 4 is out of range for rank 4

// -----

%a = "test.op"() : () -> tensor<2x8xf32>
%b = "test.op"() : () -> tensor<8xf32>
%c = "test.op"() : () -> tensor<4xf32>
%r = relay.nn.layer_norm %a, %b, %c : (tensor<2x8xf32>, tensor<8xf32>, tensor<4xf32>) -> tensor<2x8xf32>
// CHECK{LITERAL}: relay.nn.layer_norm: beta tensor<4xf32> must be a vector of 8 elements to match tensor<2x8xf32>

// -----

%a = "test.op"() : () -> tensor<2x8xf32>
%r:2 = relay.nn.dropout %a {rate = 1.5} : (tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>)
// CHECK{LITERAL}: relay.nn.dropout: rate must be in [0, 1), got 1.5

// -----

%a = "test.op"() : () -> tensor<2x8xf32>
%r = relay.nn.dropout %a : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK{LITERAL}: relay.nn.dropout has 2 result(s), but the type lists 1

// -----

%a = "test.op"() : () -> tensor<2x8xf32>
%b = "test.op"() : () -> tensor<4x7xf32>
%r = relay.nn.dense %a, %b : (tensor<2x8xf32>, tensor<4x7xf32>) -> tensor<2x4xf32>
// CHECK{LITERAL}: relay.nn.dense: reduction dims differ: data tensor<2x8xf32> has 8, weight tensor<4x7xf32> has 7

// -----

%a = "test.op"() : () -> tensor<2x8xf32>
%b = "test.op"() : () -> tensor<8xf32>
%r = relay.nn.dense %a, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2xf32>
// CHECK{LITERAL}: relay.nn.dense: expects data of rank >= 1 and a 2-D weight, got tensor<2x8xf32> and tensor<8xf32>

// -----

%a = "test.op"() : () -> tensor<2x8xf32>
%b = "test.op"() : () -> tensor<4x8xf32>
%r = relay.nn.dense %a, %b {units = 5} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
// CHECK{LITERAL}: relay.nn.dense: units = 5 but weight tensor<4x8xf32> has 4 rows

// -----

%a = "test.op"() : () -> tensor<2x8xf32>
%b = "test.op"() : () -> tensor<7x4xf32>
%r = relay.nn.matmul %a, %b : (tensor<2x8xf32>, tensor<7x4xf32>) -> tensor<2x4xf32>
// CHECK{LITERAL}: relay.nn.matmul: reduction dims differ: tensor<2x8xf32> and tensor<7x4xf32>

// -----

%a = "test.op"() : () -> tensor<2x8xf32>
%b = "test.op"() : () -> tensor<8xf32>
%r = relay.nn.matmul %a, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2xf32>
// CHECK{LITERAL}: relay.nn.matmul: unsupported operand ranks tensor<2x8xf32> and tensor<8xf32>

// -----

%a = "test.op"() : () -> tensor<2x4x8xf32>
%b = "test.op"() : () -> tensor<2x3x7xf32>
%r = relay.nn.batch_matmul %a, %b {transpose_b = true} : (tensor<2x4x8xf32>, tensor<2x3x7xf32>) -> tensor<2x4x3xf32>
// CHECK{LITERAL}: relay.nn.batch_matmul: reduction dims differ: tensor<2x4x8xf32> and tensor<2x3x7xf32>

// -----

%a = "test.op"() : () -> tensor<2x4x8xf32>
%b = "test.op"() : () -> tensor<3x8x5xf32>
%r = relay.nn.batch_matmul %a, %b : (tensor<2x4x8xf32>, tensor<3x8x5xf32>) -> tensor<2x4x5xf32>
// CHECK{LITERAL}: relay.nn.batch_matmul: batch dims differ: tensor<2x4x8xf32> and tensor<3x8x5xf32>

// -----

%a = "test.op"() : () -> tensor<2x4xf32>
%b = "test.op"() : () -> tensor<3xf32>
%r = relay.nn.bias_add %a, %b : (tensor<2x4xf32>, tensor<3xf32>) -> tensor<2x4xf32>
// CHECK{LITERAL}: relay.nn.bias_add: bias tensor<3xf32> must be a vector of 4 elements to match tensor<2x4xf32>

// -----

%a = "test.op"() : () -> tensor<2x4xf32>
%r = relay.nn.softmax %a {axis = 2} : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK{LITERAL}: relay.nn.softmax: axis 2 is out of range for rank 2

// -----

%a = "test.op"() : () -> tensor<2x4xf32>
%b = "test.op"() : () -> tensor<f32>
%r = relay.nn.pad %a, %b {pad_width = [[1, 1]]} : (tensor<2x4xf32>, tensor<f32>) -> tensor<4x4xf32>
// CHECK{LITERAL}: relay.nn.pad: pad_width needs one [before, after] pair per axis of tensor<2x4xf32>

// -----

%a = "test.op"() : () -> tensor<2x4xf32>
%b = "test.op"() : () -> tensor<1xf32>
%r = relay.nn.pad %a, %b {pad_width = [[1, 1], [0, 0]]} : (tensor<2x4xf32>, tensor<1xf32>) -> tensor<4x4xf32>
// CHECK{LITERAL}: relay.nn.pad: pad_value must be a scalar tensor, got tensor<1xf32>

// -----

%a = "test.op"() : () -> tensor<2x4xf32>
%b = "test.op"() : () -> tensor<f32>
%r = relay.nn.pad %a, %b {pad_width = [[1, 1], [0, 0]], pad_mode = "wrap"} : (tensor<2x4xf32>, tensor<f32>) -> tensor<4x4xf32>
// CHECK{LITERAL}: relay.nn.pad: unknown pad_mode 'wrap'

// -----

%a = "test.op"() : () -> tensor<2x4xf32>
%r = relay.sum %a {axis = [2]} : (tensor<2x4xf32>) -> tensor<2xf32>
// CHECK{LITERAL}: relay.sum: axis 2 is out of range for rank 2

// -----

%a = "test.op"() : () -> tensor<2x4xf32>
%r = relay.reshape %a {newshape = [3, -1]} : (tensor<2x4xf32>) -> tensor<3x3xf32>
// CHECK{LITERAL}: relay.reshape: cannot reshape [2, 4] to [3, -1]

// -----

%a = "test.op"() : () -> tensor<2x4xf32>
%r = relay.reshape %a {newshape = [-1, -1]} : (tensor<2x4xf32>) -> tensor<8xf32>
// CHECK{LITERAL}: relay.reshape: newshape [-1, -1] has more than one -1

// -----

%a = "test.op"() : () -> tensor<2x4xf32>
%r = relay.reshape %a {newshape = [0, 0, 0]} : (tensor<2x4xf32>) -> tensor<8xf32>
// CHECK{LITERAL}: relay.reshape: newshape [0, 0, 0]: 0 copies a dimension beyond rank 2

// -----

%a = "test.op"() : () -> tensor<2x4xf32>
%r = relay.reshape %a {newshape = [0, -3]} : (tensor<2x4xf32>) -> tensor<8xf32>
// CHECK{LITERAL}: relay.reshape: newshape [0, -3]: -3 needs two input dimensions

// -----

%a = "test.op"() : () -> tensor<2x4xf32>
%r = relay.reshape %a {newshape = [-4, 2]} : (tensor<2x4xf32>) -> tensor<8xf32>
// CHECK{LITERAL}: relay.reshape: newshape [-4, 2]: -4 needs two following values

// -----

%a = "test.op"() : () -> tensor<2x4xf32>
%r = relay.reshape %a {newshape = [-4, -1, -1, 4]} : (tensor<2x4xf32>) -> tensor<8xf32>
// CHECK{LITERAL}: relay.reshape: newshape [-4, -1, -1, 4]: -4 with two -1

// -----

%a = "test.op"() : () -> tensor<6x4xf32>
%r = relay.reshape %a {newshape = [-4, 4, 2, 0]} : (tensor<6x4xf32>) -> tensor<8xf32>
// CHECK{LITERAL}: relay.reshape: newshape [-4, 4, 2, 0]: -4 split 4x2 does not equal 6

// -----

%a = "test.op"() : () -> tensor<2x4xf32>
%r = relay.reshape %a {newshape = [-5, 8]} : (tensor<2x4xf32>) -> tensor<8xf32>
// CHECK{LITERAL}: relay.reshape: newshape [-5, 8]: invalid value -5

// -----

%a = "test.op"() : () -> tensor<2x4xf32>
%r = relay.reshape %a {newshape = [3, 3]} : (tensor<2x4xf32>) -> tensor<3x3xf32>
// CHECK{LITERAL}: relay.reshape: cannot reshape [2, 4] (8 elements) to [3, 3]

// -----

%a = "test.op"() : () -> tensor<2x4xf32>
%r = relay.transpose %a {axes = [0, 0]} : (tensor<2x4xf32>) -> tensor<2x2xf32>
// CHECK{LITERAL}: relay.transpose: axes [0, 0] is not a permutation of rank 2

// -----

%a = "test.op"() : () -> tensor<2x4xf32>
%b = "test.op"() : () -> tensor<4xf32>
%r = relay.concatenate %a, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
// CHECK{LITERAL}: relay.concatenate: operand ranks differ: tensor<2x4xf32>, tensor<4xf32>

// -----

%a = "test.op"() : () -> tensor<2x4xf32>
%b = "test.op"() : () -> tensor<2x5xf32>
%r = relay.concatenate %a, %b : (tensor<2x4xf32>, tensor<2x5xf32>) -> tensor<4x4xf32>
// CHECK{LITERAL}: relay.concatenate: dimension 1 differs: tensor<2x4xf32>, tensor<2x5xf32>

// -----

%r = relay.concatenate : () -> tensor<4xf32>
// CHECK{LITERAL}: relay.concatenate: needs at least one operand

// -----

%r = relay.stack : () -> tensor<4xf32>
// CHECK{LITERAL}: relay.stack: needs at least one operand

// -----

%a = "test.op"() : () -> tensor<2x4xf32>
%b = "test.op"() : () -> tensor<2x5xf32>
%r = relay.stack %a, %b : (tensor<2x4xf32>, tensor<2x5xf32>) -> tensor<2x2x4xf32>
// CHECK{LITERAL}: relay.stack: operand shapes differ: tensor<2x4xf32>, tensor<2x5xf32>

// -----

%a = "test.op"() : () -> tensor<2x5xf32>
%r:2 = relay.split %a {indices_or_sections = 2, axis = 1} : (tensor<2x5xf32>) -> (tensor<2x2xf32>, tensor<2x3xf32>)
// CHECK{LITERAL}: relay.split: axis 1 of size 5 is not divisible into 2 sections

// -----

%a = "test.op"() : () -> tensor<2x5xf32>
%r = relay.split %a {indices_or_sections = 0} : (tensor<2x5xf32>) -> tensor<2x5xf32>
// CHECK{LITERAL}: relay.split: sections must be positive, got 0

// -----

%a = "test.op"() : () -> tensor<2x5xf32>
%r:3 = relay.split %a {indices_or_sections = [3, 1], axis = 1} : (tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<2x0xf32>, tensor<2x4xf32>)
// CHECK{LITERAL}: relay.split: indices [3, 1] must be increasing within 5

// -----

%a = "test.op"() : () -> tensor<2x1xf32>
%r = relay.squeeze %a {axis = [0]} : (tensor<2x1xf32>) -> tensor<1xf32>
// CHECK{LITERAL}: relay.squeeze: axis 0 of tensor<2x1xf32> has size 2, not 1

// -----

%a = "test.op"() : () -> tensor<2xf32>
%r = relay.expand_dims %a {axis = 0, num_newaxis = -1} : (tensor<2xf32>) -> tensor<2xf32>
// CHECK{LITERAL}: relay.expand_dims: num_newaxis must be >= 0, got -1

// -----

%a = "test.op"() : () -> tensor<4x4xf32>
%r = relay.strided_slice %a {begin = [0], end = [2], slice_mode = "stride"} : (tensor<4x4xf32>) -> tensor<2x4xf32>
// CHECK{LITERAL}: relay.strided_slice: slice_mode must be 'end' or 'size', got 'stride'

// -----

%a = "test.op"() : () -> tensor<4x4xf32>
%r = relay.strided_slice %a {begin = [0, 0, 0], end = [2]} : (tensor<4x4xf32>) -> tensor<2x4xf32>
// CHECK{LITERAL}: relay.strided_slice: begin/end longer than the 2 sliced axes of tensor<4x4xf32>

// -----

%a = "test.op"() : () -> tensor<4x4xf32>
%r = relay.strided_slice %a {begin = [0], end = [2], strides = [0]} : (tensor<4x4xf32>) -> tensor<2x4xf32>
// CHECK{LITERAL}: relay.strided_slice: strides must be non-zero

// -----

%a = "test.op"() : () -> tensor<1x8x2x2xf32>
%r = relay.layout_transform %a {src_layout = "NCHW", dst_layout = "NCHW3c"} : (tensor<1x8x2x2xf32>) -> tensor<1x2x2x2x4xf32>
// CHECK{LITERAL}: relay.layout_transform: axis C of size 8 is not divisible by 3

// -----

%a = "test.op"() : () -> tensor<1x8x2x2xf32>
%r = relay.layout_transform %a {src_layout = "NCH", dst_layout = "NHC"} : (tensor<1x8x2x2xf32>) -> tensor<1x2x8xf32>
// CHECK{LITERAL}: relay.layout_transform: layout 'NCH' has 3 axes but the input has rank 4

// -----

%a = "test.op"() : () -> tensor<1x8x2x2xf32>
%r = relay.layout_transform %a {src_layout = "NCHW", dst_layout = "NCDW"} : (tensor<1x8x2x2xf32>) -> tensor<1x8x2x2xf32>
// CHECK{LITERAL}: relay.layout_transform: layouts 'NCHW' and 'NCDW' have different primal axes

// -----

%a = "test.op"() : () -> tensor<1x8x2x2xf32>
%r = relay.layout_transform %a {src_layout = "NCHW", dst_layout = "NCHw8"} : (tensor<1x8x2x2xf32>) -> tensor<1x8x2x2xf32>
// CHECK{LITERAL}: relay.layout_transform: layout 'NCHw8': sub-axis 'w' needs a positive factor

// -----

%a = "test.op"() : () -> tensor<1x2x2x2x4xf32>
%r = relay.layout_transform %a {src_layout = "NCHW8c", dst_layout = "NCHW"} : (tensor<1x2x2x2x4xf32>) -> tensor<1x16x2x2xf32>
// CHECK{LITERAL}: relay.layout_transform: sub-axis 8c of 'NCHW8c' has size 4

// -----

%a = "test.op"() : () -> tensor<2x3xf32>
%r = relay.broadcast_to %a {shape = [4, 3, 1]} : (tensor<2x3xf32>) -> tensor<4x3x1xf32>
// CHECK{LITERAL}: relay.broadcast_to: operands cannot be broadcast together

// -----

%a = "test.op"() : () -> tensor<2x3xf32>
%r = relay.broadcast_to %a {shape = [3]} : (tensor<2x3xf32>) -> tensor<3xf32>
// CHECK{LITERAL}: relay.broadcast_to: cannot broadcast tensor<2x3xf32> to [3]

// -----

%a = "test.op"() : () -> tensor<4x3xf32>
%b = "test.op"() : () -> tensor<2xf32>
%r = relay.take %a, %b {axis = 0} : (tensor<4x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
// CHECK{LITERAL}: relay.take: indices must be integers, got tensor<2xf32>

// -----

%a = "test.op"() : () -> tensor<4x3xf32>
%b = "test.op"() : () -> tensor<2xi32>
%r = relay.take %a, %b {axis = 0, mode = "nearest"} : (tensor<4x3xf32>, tensor<2xi32>) -> tensor<2x3xf32>
// CHECK{LITERAL}: relay.take: unknown mode 'nearest'

// -----

%a = "test.op"() : () -> tensor<2x3xf32>
%r = relay.where %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK{LITERAL}: relay.where takes 3 operand(s), got 2

// -----

%a = "test.op"() : () -> tensor<2x3xf32>
%r = relay.nn.batch_flatten %a : (tensor<2x3xf32>) -> tensor<2x3x1xf32>
// CHECK{LITERAL}: relay.nn.batch_flatten: result 0 has type tensor<2x3x1xf32> but the operands (tensor<2x3xf32>) give tensor<2x3xf32>

// -----

%r = relay.constant dense<[1.0, 2.0]> : tensor<3xf32>
