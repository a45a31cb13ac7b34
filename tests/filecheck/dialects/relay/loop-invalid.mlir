// RUN: relay-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// CHECK: relay.loop: the trip count must be tensor<i64>, got tensor<i32>
func.func @f(%n: tensor<i32>, %c: tensor<i1>, %v0: tensor<2xf32>) -> tensor<2xf32> {
  %v = relay.loop %n, %c, %v0 : (tensor<i32>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>) {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %vi: tensor<2xf32>):
    relay.loop_yield %ci, %vi : tensor<i1>, tensor<2xf32>
  }
  func.return %v : tensor<2xf32>
}

// -----

// CHECK: relay.loop: the body takes (tensor<i64>, tensor<i1>), expected (tensor<i64>, tensor<i1>, tensor<2xf32>) (iteration number, condition, loop-carried values)
func.func @f(%n: tensor<i64>, %c: tensor<i1>, %v0: tensor<2xf32>) -> tensor<2xf32> {
  %v = relay.loop %n, %c, %v0 : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>) {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>):
    relay.loop_yield %ci, %v0 : tensor<i1>, tensor<2xf32>
  }
  func.return %v : tensor<2xf32>
}

// -----

// CHECK: relay.loop: the body yields (tensor<i1>, tensor<3xf32>); expected the condition (tensor<i1>), the loop-carried values (tensor<2xf32>) and the scan elements
func.func @f(%n: tensor<i64>, %c: tensor<i1>, %v0: tensor<2xf32>, %w: tensor<3xf32>) -> tensor<2xf32> {
  %v = relay.loop %n, %c, %v0 : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>) {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %vi: tensor<2xf32>):
    relay.loop_yield %ci, %w : tensor<i1>, tensor<3xf32>
  }
  func.return %v : tensor<2xf32>
}

// -----

// CHECK: relay.loop: its results are (tensor<2xf32>, tensor<2xf32>), the body gives (tensor<2xf32>, tensor<?x2xf32>)
func.func @f(%n: tensor<i64>, %c: tensor<i1>, %v0: tensor<2xf32>) -> tensor<2xf32> {
  %v, %s = relay.loop %n, %c, %v0 : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %vi: tensor<2xf32>):
    relay.loop_yield %ci, %vi, %vi : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }
  func.return %v : tensor<2xf32>
}

// -----

// CHECK: Operation relay.add terminates block in single-block region but is not a terminator
func.func @f(%n: tensor<i64>, %c: tensor<i1>, %v0: tensor<2xf32>) -> tensor<2xf32> {
  %v = relay.loop %n, %c, %v0 : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>) {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %vi: tensor<2xf32>):
    %w = relay.add %vi, %vi : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  }
  func.return %v : tensor<2xf32>
}

// -----

// CHECK: relay.loop_yield: only a relay.loop body ends in it
func.func @f(%v0: tensor<2xf32>) -> tensor<2xf32> {
  relay.loop_yield %v0 : tensor<2xf32>
}
