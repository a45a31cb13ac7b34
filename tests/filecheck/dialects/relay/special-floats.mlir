// RUN: RELAY_ROUNDTRIP
// RUN: RELAY_GENERIC_ROUNDTRIP

// Float attributes print as they parse back: infinities of both signs (torch's clamp_max
// decomposes to a clip from -inf), NaN, a negative zero, and magnitudes whose shortest
// repr has an exponent.


  %x = "test.op"() : () -> tensor<4xf32>
  %a = relay.clip %x {a_min = -inf, a_max = 6.0} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %a = relay.clip %x {a_min = -inf, a_max = 6.0} : (tensor<4xf32>) -> tensor<4xf32>
  %b = relay.clip %x {a_min = 0.0, a_max = inf} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %b = relay.clip %x {a_min = 0.0, a_max = inf} : (tensor<4xf32>) -> tensor<4xf32>
  %c = relay.clip %x {a_min = -0.0, a_max = 1.0e-30} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %c = relay.clip %x {a_min = -0.0, a_max = 1.0e-30} : (tensor<4xf32>) -> tensor<4xf32>
  %d = relay.clip %x {a_min = -3.5e+38, a_max = -2.5} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %d = relay.clip %x {a_min = -3.5e+38, a_max = -2.5} : (tensor<4xf32>) -> tensor<4xf32>
  %e = relay.nn.leaky_relu %x {alpha = nan} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK{LITERAL}: %e = relay.nn.leaky_relu %x {alpha = nan} : (tensor<4xf32>) -> tensor<4xf32>
