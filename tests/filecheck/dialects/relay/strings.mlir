// RUN: relay-opt %s | relay-opt | filecheck %s

// Tensors of strings (element type !relay.string) and the ops on them print and parse back.
// CHECK-LABEL: func.func @main
// CHECK:      %e = relay.string.equal %a, %b : (tensor<3x!relay.string>, tensor<!relay.string>) -> tensor<3xi1>
// CHECK-NEXT: %c = relay.string.concat %a, %b : (tensor<3x!relay.string>, tensor<!relay.string>) -> tensor<3x!relay.string>
// CHECK-NEXT: %m = relay.string.regex_full_match %c {pattern = "[a-z]+!"} : (tensor<3x!relay.string>) -> tensor<3xi1>
// CHECK-NEXT: %s, %n = relay.string.split %a {delimiter = ",", maxsplit = 1 : i64} : (tensor<3x!relay.string>) -> (tensor<3x?x!relay.string>, tensor<3xi64>)
// CHECK-NEXT: %y = relay.string.normalize %a {case_change_action = "UPPER", is_case_sensitive = false, stopwords = ["x"]} : (tensor<3x!relay.string>) -> tensor<?x!relay.string>
// CHECK-NEXT: %k = relay.string.constant {value = ["a", "b", "c"]} : tensor<3x!relay.string>
func.func @main(%a: tensor<3x!relay.string>, %b: tensor<!relay.string>) -> (tensor<3xi1>, tensor<3xi1>, tensor<3x?x!relay.string>, tensor<3xi64>, tensor<?x!relay.string>) {
  %e = relay.string.equal %a, %b : (tensor<3x!relay.string>, tensor<!relay.string>) -> tensor<3xi1>
  %c = relay.string.concat %a, %b : (tensor<3x!relay.string>, tensor<!relay.string>) -> tensor<3x!relay.string>
  %m = relay.string.regex_full_match %c {pattern = "[a-z]+!"} : (tensor<3x!relay.string>) -> tensor<3xi1>
  %s, %n = relay.string.split %a {delimiter = ",", maxsplit = 1 : i64} : (tensor<3x!relay.string>) -> (tensor<3x?x!relay.string>, tensor<3xi64>)
  %y = relay.string.normalize %a {case_change_action = "UPPER", is_case_sensitive = false, stopwords = ["x"]} : (tensor<3x!relay.string>) -> tensor<?x!relay.string>
  %k = relay.string.constant {value = ["a", "b", "c"]} : tensor<3x!relay.string>
  func.return %e, %m, %s, %n, %y : tensor<3xi1>, tensor<3xi1>, tensor<3x?x!relay.string>, tensor<3xi64>, tensor<?x!relay.string>
}
