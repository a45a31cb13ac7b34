// RUN: relay-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// One case per verifier rule of the 1-D/3-D, resize, normalisation, gather and *_like ops.

%a = "test.op"() : () -> tensor<1x4x8xf32>
%w = "test.op"() : () -> tensor<2x4x3xf32>
%r = relay.nn.conv1d %a, %w {padding = [1, 1, 1]} : (tensor<1x4x8xf32>, tensor<2x4x3xf32>) -> tensor<1x2x8xf32>
// CHECK{LITERAL}: relay.nn.conv1d: padding must have 1 or 2 values, got 3

// -----

%a = "test.op"() : () -> tensor<1x4x4x4x4xf32>
%w = "test.op"() : () -> tensor<2x3x1x1x1xf32>
%r = relay.nn.conv3d %a, %w : (tensor<1x4x4x4x4xf32>, tensor<2x3x1x1x1xf32>) -> tensor<1x2x4x4x4xf32>
// CHECK{LITERAL}: relay.nn.conv3d: data tensor<1x4x4x4x4xf32> has 4 input channels but weight tensor<2x3x1x1x1xf32> expects 3 x groups 1

// -----

%a = "test.op"() : () -> tensor<1x4x3x3x3xf32>
%w = "test.op"() : () -> tensor<3x2x3x3x3xf32>
%r = relay.nn.conv3d_transpose %a, %w : (tensor<1x4x3x3x3xf32>, tensor<3x2x3x3x3xf32>) -> tensor<1x2x5x5x5xf32>
// CHECK{LITERAL}: relay.nn.conv3d_transpose: data tensor<1x4x3x3x3xf32> has 4 channels but weight tensor<3x2x3x3x3xf32> expects 3

// -----

%a = "test.op"() : () -> tensor<1x4x2x2x2xf32>
%r = relay.nn.max_pool3d %a {pool_size = [3, 3, 3]} : (tensor<1x4x2x2x2xf32>) -> tensor<1x4x1x1x1xf32>
// CHECK{LITERAL}: relay.nn.max_pool3d: pool window [3, 3, 3] larger than padded input tensor<1x4x2x2x2xf32>

// -----

%a = "test.op"() : () -> tensor<1x4x8x8xf32>
%r = relay.nn.upsampling %a {scale_h = 2.0, scale_w = 2.0, method = "area"} : (tensor<1x4x8x8xf32>) -> tensor<1x4x16x16xf32>
// CHECK{LITERAL}: relay.nn.upsampling: unknown method 'area'

// -----

%a = "test.op"() : () -> tensor<1x4x8x8xf32>
%r = relay.image.resize2d %a {size = [4, 4], coordinate_transformation_mode = "corners"} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
// CHECK{LITERAL}: relay.image.resize2d: coordinate_transformation_mode 'corners' is not one of 'half_pixel', 'align_corners', 'asymmetric', 'pytorch_half_pixel', 'tf_half_pixel_for_nn', 'tf_crop_and_resize'

// -----

%a = "test.op"() : () -> tensor<1x4x8x8xf32>
%r = relay.image.resize2d %a {size = [4, 4], roi = [0.0, 1.0]} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
// CHECK{LITERAL}: relay.image.resize2d: roi must have 4 values, got 2

// -----

%a = "test.op"() : () -> tensor<1x6x4x4xf32>
%g = "test.op"() : () -> tensor<6xf32>
%r = relay.nn.group_norm %a, %g, %g {num_groups = 4} : (tensor<1x6x4x4xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>
// CHECK{LITERAL}: relay.nn.group_norm: 6 channels do not split into num_groups = 4 groups

// -----

%a = "test.op"() : () -> tensor<1x6xi32>
%r = relay.nn.l2_normalize %a {eps = 0.0} : (tensor<1x6xi32>) -> tensor<1x6xi32>
// CHECK{LITERAL}: relay.nn.l2_normalize: expects a floating-point tensor, got tensor<1x6xi32>

// -----

%a = "test.op"() : () -> tensor<3x4xf32>
%i = "test.op"() : () -> tensor<3x2xi64>
%r = relay.gather_nd %a, %i : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<2xf32>
// CHECK{LITERAL}: relay.gather_nd: batch_dims 0 + index depth 3 exceed the rank of tensor<3x4xf32>

// -----

%a = "test.op"() : () -> tensor<3x4xf32>
%r = relay.repeat %a {repeats = 0, axis = 1} : (tensor<3x4xf32>) -> tensor<3x0xf32>
// CHECK{LITERAL}: relay.repeat: repeats must be at least 1, got 0

// -----

%a = "test.op"() : () -> tensor<2x6xf32>
%r = relay.contrib_reverse_reshape %a {newshape = [-4, 1, 2, -1]} : (tensor<2x6xf32>) -> tensor<1x2x6xf32>
// CHECK{LITERAL}: relay.contrib_reverse_reshape: -4 (split a dimension) is not supported in reverse

// -----

%v = "test.op"() : () -> tensor<2xf32>
%r = relay.full %v {shape = [2, 2]} : (tensor<2xf32>) -> tensor<2x2xf32>
// CHECK{LITERAL}: relay.full: fill_value must be a scalar (rank 0), got tensor<2xf32>

// -----

%a = "test.op"() : () -> tensor<4x3xf32>
%s = "test.op"() : () -> tensor<2xi32>
%r = relay.collapse_sum_to %a, %s {shape = [2, 3]} : (tensor<4x3xf32>, tensor<2xi32>) -> tensor<2x3xf32>
// CHECK{LITERAL}: relay.collapse_sum_to: cannot collapse tensor<4x3xf32> to [2, 3]

// -----

%r = relay.zeros {shape = [2], dtype = "float8"} : () -> tensor<2xf32>
// CHECK{LITERAL}: relay.zeros: unknown dtype 'float8'

// -----

%a = "test.op"() : () -> tensor<2x6xf32>
%l = "test.op"() : () -> tensor<5x2xf32>
%r = relay.reshape_like %a, %l : (tensor<2x6xf32>, tensor<5x2xf32>) -> tensor<5x2xf32>
// CHECK{LITERAL}: relay.reshape_like: cannot reshape tensor<2x6xf32> to [5, 2]

// -----

%a = "test.op"() : () -> tensor<1x4x8x8xf32>
%r = relay.nn.upsampling %a {scale_h = 2.0, scale_w = 2.0} : (tensor<1x4x8x8xf32>) -> tensor<1x4x16x8xf32>
// CHECK{LITERAL}: relay.nn.upsampling: result 0 has type tensor<1x4x16x8xf32> but the operands (tensor<1x4x8x8xf32>) give tensor<1x4x16x16xf32>

// -----

%x = "test.op"() : () -> tensor<1x4x8x8xf32>
%t = "test.op"() : () -> tensor<1x2x9x6xf32>
%y = relay.slice_like %x, %t {axes = [2, 3]} : (tensor<1x4x8x8xf32>, tensor<1x2x9x6xf32>) -> tensor<1x4x9x6xf32>
// CHECK{LITERAL}: relay.slice_like: end index of axis 2 exceeds the input shape: 9 vs 8

// -----

%x = "test.op"() : () -> tensor<1x4x8x8xf32>
%t = "test.op"() : () -> tensor<1x2xf32>
%y = relay.slice_like %x, %t {axes = [2]} : (tensor<1x4x8x8xf32>, tensor<1x2xf32>) -> tensor<1x4x8x8xf32>
// CHECK{LITERAL}: relay.slice_like: axis 2 overflows tensor<1x2xf32> (data tensor<1x4x8x8xf32>)

// -----

%x = "test.op"() : () -> tensor<1x8x4x4xf32>
%y = relay.nn.lrn %x {axis = 4} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
// CHECK{LITERAL}: relay.nn.lrn: axis 4 is out of range

// -----

%x = "test.op"() : () -> tensor<2x3x4xf32>
%m = "test.op"() : () -> tensor<3xf32>
%v = relay.variance %x, %m {axis = [1]} : (tensor<2x3x4xf32>, tensor<3xf32>) -> tensor<2x4xf32>
// CHECK{LITERAL}: relay.variance: mean tensor<3xf32> must have the rank of data tensor<2x3x4xf32>

// -----

%x = "test.op"() : () -> tensor<1x4x8xf32>
%y = relay.image.resize1d %x {size = [16], layout = "NCHW"} : (tensor<1x4x8xf32>) -> tensor<1x4x16xf32>
// CHECK{LITERAL}: relay.image.resize1d: unsupported layout 'NCHW' (expected NCW with at most C blocked)

// -----

%x = "test.op"() : () -> tensor<1x4x8xf32>
%y = relay.image.resize1d %x {size = [16], roi = [0.0, 0.0, 1.0, 1.0]} : (tensor<1x4x8xf32>) -> tensor<1x4x16xf32>
// CHECK{LITERAL}: relay.image.resize1d: roi must have 2 values, got 4

// -----

%x = "test.op"() : () -> tensor<1x4x6x6xf32>
%o = "test.op"() : () -> tensor<1x18x3x3xf32>
%w = "test.op"() : () -> tensor<6x4x3x3xf32>
%y = relay.nn.deformable_conv2d %x, %o, %w : (tensor<1x4x6x6xf32>, tensor<1x18x3x3xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x4x4xf32>
// CHECK{LITERAL}: relay.nn.deformable_conv2d: offset tensor<1x18x3x3xf32> must have shape [1, 18, 4, 4] (NCHW: N, 2 * kh * kw * deformable_groups, out_h, out_w)
