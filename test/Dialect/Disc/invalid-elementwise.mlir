// RUN: disc-opt %s -split-input-file -verify-diagnostics

// One verifier error per elementwise op: operand element types outside the
// op's dtype set, and mismatched operand/result types.

func.func @exponential_int(%a: tensor<?xi32>) -> tensor<?xi32> {
  // expected-error @+1 {{'disc.exponential' op operand #0 must be ranked tensor of}}
  %0 = disc.exponential %a : tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

func.func @exponential_minus_one_int(%a: tensor<?xi32>) -> tensor<?xi32> {
  // expected-error @+1 {{'disc.exponential_minus_one' op operand #0 must be ranked tensor of}}
  %0 = disc.exponential_minus_one %a : tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

func.func @log_int(%a: tensor<?xi32>) -> tensor<?xi32> {
  // expected-error @+1 {{'disc.log' op operand #0 must be ranked tensor of}}
  %0 = disc.log %a : tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

func.func @log_plus_one_int(%a: tensor<?xi32>) -> tensor<?xi32> {
  // expected-error @+1 {{'disc.log_plus_one' op operand #0 must be ranked tensor of}}
  %0 = disc.log_plus_one %a : tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

func.func @tanh_int(%a: tensor<?xi32>) -> tensor<?xi32> {
  // expected-error @+1 {{'disc.tanh' op operand #0 must be ranked tensor of}}
  %0 = disc.tanh %a : tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

func.func @logistic_int(%a: tensor<?xi32>) -> tensor<?xi32> {
  // expected-error @+1 {{'disc.logistic' op operand #0 must be ranked tensor of}}
  %0 = disc.logistic %a : tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

func.func @sqrt_int(%a: tensor<?xi32>) -> tensor<?xi32> {
  // expected-error @+1 {{'disc.sqrt' op operand #0 must be ranked tensor of}}
  %0 = disc.sqrt %a : tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

func.func @rsqrt_int(%a: tensor<?xi32>) -> tensor<?xi32> {
  // expected-error @+1 {{'disc.rsqrt' op operand #0 must be ranked tensor of}}
  %0 = disc.rsqrt %a : tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

func.func @cbrt_int(%a: tensor<?xi32>) -> tensor<?xi32> {
  // expected-error @+1 {{'disc.cbrt' op operand #0 must be ranked tensor of}}
  %0 = disc.cbrt %a : tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

func.func @sine_int(%a: tensor<?xi32>) -> tensor<?xi32> {
  // expected-error @+1 {{'disc.sine' op operand #0 must be ranked tensor of}}
  %0 = disc.sine %a : tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

func.func @cosine_int(%a: tensor<?xi32>) -> tensor<?xi32> {
  // expected-error @+1 {{'disc.cosine' op operand #0 must be ranked tensor of}}
  %0 = disc.cosine %a : tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

func.func @tan_int(%a: tensor<?xi32>) -> tensor<?xi32> {
  // expected-error @+1 {{'disc.tan' op operand #0 must be ranked tensor of}}
  %0 = disc.tan %a : tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

func.func @erf_int(%a: tensor<?xi32>) -> tensor<?xi32> {
  // expected-error @+1 {{'disc.erf' op operand #0 must be ranked tensor of}}
  %0 = disc.erf %a : tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

func.func @floor_int(%a: tensor<?xi32>) -> tensor<?xi32> {
  // expected-error @+1 {{'disc.floor' op operand #0 must be ranked tensor of}}
  %0 = disc.floor %a : tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

func.func @ceil_int(%a: tensor<?xi32>) -> tensor<?xi32> {
  // expected-error @+1 {{'disc.ceil' op operand #0 must be ranked tensor of}}
  %0 = disc.ceil %a : tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

func.func @round_nearest_even_int(%a: tensor<?xi32>) -> tensor<?xi32> {
  // expected-error @+1 {{'disc.round_nearest_even' op operand #0 must be ranked tensor of}}
  %0 = disc.round_nearest_even %a : tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

func.func @round_nearest_afz_int(%a: tensor<?xi32>) -> tensor<?xi32> {
  // expected-error @+1 {{'disc.round_nearest_afz' op operand #0 must be ranked tensor of}}
  %0 = disc.round_nearest_afz %a : tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

func.func @abs_pred(%a: tensor<?xi1>) -> tensor<?xi1> {
  // expected-error @+1 {{'disc.abs' op operand #0 must be ranked tensor of}}
  %0 = disc.abs %a : tensor<?xi1>
  return %0 : tensor<?xi1>
}

// -----

func.func @negate_pred(%a: tensor<?xi1>) -> tensor<?xi1> {
  // expected-error @+1 {{'disc.negate' op operand #0 must be ranked tensor of}}
  %0 = disc.negate %a : tensor<?xi1>
  return %0 : tensor<?xi1>
}

// -----

func.func @sign_pred(%a: tensor<?xi1>) -> tensor<?xi1> {
  // expected-error @+1 {{'disc.sign' op operand #0 must be ranked tensor of}}
  %0 = disc.sign %a : tensor<?xi1>
  return %0 : tensor<?xi1>
}

// -----

func.func @is_finite_result(%a: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'disc.is_finite' op result #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = disc.is_finite %a : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @subtract_pred(%a: tensor<?xi1>) -> tensor<?xi1> {
  // expected-error @+1 {{'disc.subtract' op operand #0 must be ranked tensor of}}
  %0 = disc.subtract %a, %a : tensor<?xi1>
  return %0 : tensor<?xi1>
}

// -----

func.func @divide_pred(%a: tensor<?xi1>) -> tensor<?xi1> {
  // expected-error @+1 {{'disc.divide' op operand #0 must be ranked tensor of}}
  %0 = disc.divide %a, %a : tensor<?xi1>
  return %0 : tensor<?xi1>
}

// -----

func.func @remainder_pred(%a: tensor<?xi1>) -> tensor<?xi1> {
  // expected-error @+1 {{'disc.remainder' op operand #0 must be ranked tensor of}}
  %0 = disc.remainder %a, %a : tensor<?xi1>
  return %0 : tensor<?xi1>
}

// -----

func.func @power_pred(%a: tensor<?xi1>) -> tensor<?xi1> {
  // expected-error @+1 {{'disc.power' op operand #0 must be ranked tensor of}}
  %0 = disc.power %a, %a : tensor<?xi1>
  return %0 : tensor<?xi1>
}

// -----

func.func @atan2_int(%a: tensor<?xi32>) -> tensor<?xi32> {
  // expected-error @+1 {{'disc.atan2' op operand #0 must be ranked tensor of}}
  %0 = disc.atan2 %a, %a : tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

func.func @and_float(%a: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'disc.and' op operand #0 must be ranked tensor of}}
  %0 = disc.and %a, %a : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @or_float(%a: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'disc.or' op operand #0 must be ranked tensor of}}
  %0 = disc.or %a, %a : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @xor_float(%a: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'disc.xor' op operand #0 must be ranked tensor of}}
  %0 = disc.xor %a, %a : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @shift_left_float(%a: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'disc.shift_left' op operand #0 must be ranked tensor of}}
  %0 = disc.shift_left %a, %a : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @shift_right_arithmetic_float(%a: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'disc.shift_right_arithmetic' op operand #0 must be ranked tensor of}}
  %0 = disc.shift_right_arithmetic %a, %a : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @shift_right_logical_float(%a: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'disc.shift_right_logical' op operand #0 must be ranked tensor of}}
  %0 = disc.shift_right_logical %a, %a : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @multiply_mixed(%a: tensor<?xf32>, %b: tensor<?xf16>) -> tensor<?xf32> {
  // expected-error @+1 {{'disc.multiply' op requires the same type for all operands and results}}
  %0 = "disc.multiply"(%a, %b) : (tensor<?xf32>, tensor<?xf16>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @maximum_mixed(%a: tensor<?xf32>, %b: tensor<?xf16>) -> tensor<?xf32> {
  // expected-error @+1 {{'disc.maximum' op requires the same type for all operands and results}}
  %0 = "disc.maximum"(%a, %b) : (tensor<?xf32>, tensor<?xf16>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @minimum_mixed(%a: tensor<?xf32>, %b: tensor<?xf16>) -> tensor<?xf32> {
  // expected-error @+1 {{'disc.minimum' op requires the same type for all operands and results}}
  %0 = "disc.minimum"(%a, %b) : (tensor<?xf32>, tensor<?xf16>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
