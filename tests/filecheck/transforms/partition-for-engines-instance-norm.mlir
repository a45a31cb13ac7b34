// RUN: relay-opt %s -p 'partition-for-engines{engines=dnnl}' | filecheck %s

// An InstanceNorm between two convolutions: ConvertLayout moves it to the convolutions'
// NHWC data (axis 3), where oneDNN's norm of contiguous rows cannot read it; it runs on
// NCHW data between two transposes (instance_norm_channels_first), in a oneDNN function
// of its own, the first transpose a oneDNN reorder.

// CHECK:      func.func @tvmgen_default_dnnl_main_1(%{{.*}}: tensor<1x8x6x6xf32>, %{{.*}}: tensor<8xf32>, %{{.*}}: tensor<8xf32>) -> tensor<1x8x6x6xf32>
// CHECK-NEXT:   relay.nn.instance_norm %{{.*}} : (tensor<1x8x6x6xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
// CHECK:      func.func @tvmgen_default_dnnl_move_1(%0: tensor<1x6x6x8xf32>) -> tensor<1x8x6x6xf32>
// CHECK-NEXT:   relay.transpose %0 {axes = [0, 3, 1, 2]}
// CHECK:      func.func @main
// CHECK:        %[[C:.*]] = func.call @tvmgen_default_dnnl_main_0
// CHECK-NEXT:   %[[T:.*]] = func.call @tvmgen_default_dnnl_move_1(%[[C]])
// CHECK-NEXT:   %[[N:.*]] = func.call @tvmgen_default_dnnl_main_1(%[[T]], %g, %b)
// CHECK-NEXT:   %n = relay.transpose %[[N]] {axes = [0, 2, 3, 1]} : (tensor<1x8x6x6xf32>) -> tensor<1x6x6x8xf32>
// CHECK-NEXT:   relay.nn.relu %n : (tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>

func.func @main(%x: tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> {
  %w = relay.constant dense<0.125> : tensor<8x8x3x3xf32>
  %c = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1], channels = 8, kernel_size = [3, 3]} : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  %g = relay.constant dense<1.5> : tensor<8xf32>
  %b = relay.constant dense<0.25> : tensor<8xf32>
  %n = relay.nn.instance_norm %c, %g, %b : (tensor<1x8x6x6xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
  %r = relay.nn.relu %n : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %d = relay.nn.conv2d %r, %w {padding = [1, 1, 1, 1], channels = 8, kernel_size = [3, 3]} : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  func.return %d : tensor<1x8x6x6xf32>
}
