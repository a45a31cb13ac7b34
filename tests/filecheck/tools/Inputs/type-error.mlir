func.func @main(%x: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x4xf32> {
  %y = relay.add %x, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}
