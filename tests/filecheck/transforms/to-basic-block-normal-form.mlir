// RUN: relay-opt %s -p to-basic-block-normal-form | filecheck %s
// RUN: relay-opt %s -p to-basic-block-normal-form --output-format relay | filecheck %s --check-prefix=TEXT

// The value both branches use is already before the If, each branch's own values inside it:
// the module is left as it is.
// CHECK:      %t = relay.add %x, %x
// CHECK-NEXT: %0 = tensor.extract %c[] : tensor<i1>
// CHECK-NEXT: %1 = scf.if %0 -> (tensor<2xf32>) {
// CHECK-NEXT:   %2 = relay.exp %t
// CHECK-NEXT:   %3 = relay.multiply %2, %t
// CHECK-NEXT:   scf.yield %3
// CHECK-NEXT: } else {
// CHECK-NEXT:   %4 = relay.negative %t
// CHECK-NEXT:   scf.yield %4

// TEXT:      let %t = add(%x, %x) /* ty=Tensor[(2), float32] */;
// TEXT-NEXT: if (%c) {
// TEXT-NEXT:   %0 = exp(%t) /* ty=Tensor[(2), float32] */;
// TEXT-NEXT:   multiply(%0, %t) /* ty=Tensor[(2), float32] */
// TEXT-NEXT: } else {
// TEXT-NEXT:   negative(%t) /* ty=Tensor[(2), float32] */
// TEXT-NEXT: }

func.func @main(%c: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %t = relay.add %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %0 = tensor.extract %c[] : tensor<i1>
  %1 = scf.if %0 -> (tensor<2xf32>) {
    %2 = relay.exp %t : (tensor<2xf32>) -> tensor<2xf32>
    %3 = relay.multiply %2, %t : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    scf.yield %3 : tensor<2xf32>
  } else {
    %4 = relay.negative %t : (tensor<2xf32>) -> tensor<2xf32>
    scf.yield %4 : tensor<2xf32>
  }
  func.return %1 : tensor<2xf32>
}
