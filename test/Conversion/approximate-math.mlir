// RUN: disc-opt %s -disc-approximate-math | FileCheck %s
// RUN: disc-opt %s -disc-approximate-math=ops=tanh | FileCheck %s --check-prefix=ONLY-TANH

// f32 exp/erf/tanh become inline arithmetic (vectorisable); no call left.
// CHECK-LABEL: func.func @accurate_set
// CHECK-NOT: math.exp
// CHECK-NOT: math.erf
// CHECK-NOT: math.tanh
// CHECK: return
// ONLY-TANH-LABEL: func.func @accurate_set
// ONLY-TANH: math.erf
// ONLY-TANH-NOT: math.tanh
func.func @accurate_set(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  %1 = math.erf %0 : f32
  %2 = math.tanh %1 : f32
  return %2 : f32
}

// Vectors are rewritten the same way.
// CHECK-LABEL: func.func @vector
// CHECK-NOT: math.exp
// CHECK: return
func.func @vector(%x: vector<8xf32>) -> vector<8xf32> {
  %0 = math.exp %x : vector<8xf32>
  return %0 : vector<8xf32>
}

// log: subnormal inputs are scaled by 2^23 first and the result corrected
// by 23 ln 2 (upstream's approximation mishandles their exponent).
// CHECK-LABEL: func.func @log_subnormal
// CHECK: %[[SUB:.*]] = arith.cmpf olt, %{{.*}}, %{{.*}} : f32
// CHECK: %[[SCALED:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: arith.select %[[SUB]], %[[SCALED]], %{{.*}} : f32
// CHECK-NOT: math.log
// CHECK: %[[RES:.*]] = arith.select %[[SUB]], %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: return %[[RES]]
func.func @log_subnormal(%x: f32) -> f32 {
  %0 = math.log %x : f32
  return %0 : f32
}

// Must NOT approximate: sin/cos (coarse range reduction), tan, cbrt, pow,
// and anything on f64: these stay libm calls.
// CHECK-LABEL: func.func @left_alone
// CHECK: math.sin
// CHECK: math.cos
// CHECK: math.tan
// CHECK: math.cbrt
// CHECK: math.powf
// CHECK: math.exp %{{.*}} : f64
// CHECK: math.erf %{{.*}} : f64
func.func @left_alone(%x: f32, %d: f64) -> (f32, f64) {
  %0 = math.sin %x : f32
  %1 = math.cos %0 : f32
  %2 = math.tan %1 : f32
  %3 = math.cbrt %2 : f32
  %4 = math.powf %3, %x : f32
  %5 = math.exp %d : f64
  %6 = math.erf %5 : f64
  return %4, %6 : f32, f64
}
