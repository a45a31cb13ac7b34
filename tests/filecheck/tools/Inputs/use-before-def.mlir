func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = relay.add %z, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %z = relay.add %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
