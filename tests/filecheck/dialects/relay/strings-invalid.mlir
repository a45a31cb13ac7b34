// RUN: relay-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// CHECK: relay.string.equal: expected a tensor of !relay.string, got tensor<3xf32>
func.func @f(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xi1> {
  %e = relay.string.equal %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  func.return %e : tensor<3xi1>
}

// -----

// CHECK: relay.string.concat: shapes tensor<3x!relay.string> and tensor<2x!relay.string> do not broadcast
func.func @f(%a: tensor<3x!relay.string>, %b: tensor<2x!relay.string>) -> tensor<3x!relay.string> {
  %c = relay.string.concat %a, %b : (tensor<3x!relay.string>, tensor<2x!relay.string>) -> tensor<3x!relay.string>
  func.return %c : tensor<3x!relay.string>
}

// -----

// CHECK: relay.string.regex_full_match: its result is tensor<2xi1>, expected tensor<3xi1>
func.func @f(%a: tensor<3x!relay.string>) -> tensor<2xi1> {
  %m = relay.string.regex_full_match %a {pattern = "a"} : (tensor<3x!relay.string>) -> tensor<2xi1>
  func.return %m : tensor<2xi1>
}

// -----

// CHECK: relay.string.normalize: case_change_action must be one of LOWER, UPPER, NONE, got 'TITLE'
func.func @f(%a: tensor<3x!relay.string>) -> tensor<?x!relay.string> {
  %y = relay.string.normalize %a {case_change_action = "TITLE", is_case_sensitive = false, stopwords = []} : (tensor<3x!relay.string>) -> tensor<?x!relay.string>
  func.return %y : tensor<?x!relay.string>
}

// -----

// CHECK: relay.string.normalize: the input must be [C] or [1, C], got tensor<2x3x!relay.string>
func.func @f(%a: tensor<2x3x!relay.string>) -> tensor<1x?x!relay.string> {
  %y = relay.string.normalize %a {case_change_action = "NONE", is_case_sensitive = false, stopwords = []} : (tensor<2x3x!relay.string>) -> tensor<1x?x!relay.string>
  func.return %y : tensor<1x?x!relay.string>
}

// -----

// CHECK: relay.string.constant: 1 strings for tensor<2x!relay.string>
func.func @f() -> tensor<2x!relay.string> {
  %c = relay.string.constant {value = ["a"]} : tensor<2x!relay.string>
  func.return %c : tensor<2x!relay.string>
}
