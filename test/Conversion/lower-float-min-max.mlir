// RUN: disc-opt %s -disc-lower-float-min-max | FileCheck %s

// CHECK-LABEL: func.func @scalars_and_vectors
// CHECK: llvm.intr.maximum(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// CHECK: llvm.intr.minimum(%{{.*}}, %{{.*}}) : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK: llvm.intr.maxnum(%{{.*}}, %{{.*}}) : (f64, f64) -> f64
// CHECK: llvm.intr.minnum
// Fast-math flags carry over (a reduction's nnan nsz max is one vmaxps).
// CHECK: llvm.intr.maxnum(%{{.*}}, %{{.*}}) {fastmathFlags = #llvm.fastmath<nnan, nsz>} : (f32, f32) -> f32
// CHECK-NOT: arith.maximumf
func.func @scalars_and_vectors(%a: f32, %b: f32, %v: vector<8xf32>, %w: vector<8xf32>, %d: f64, %e: f64) -> (f32, vector<8xf32>, f64, f64, f32) {
  %0 = arith.maximumf %a, %b : f32
  %1 = arith.minimumf %v, %w : vector<8xf32>
  %2 = arith.maxnumf %d, %e : f64
  %3 = arith.minnumf %d, %e : f64
  %4 = arith.maxnumf %a, %b fastmath<nnan,nsz> : f32
  return %0, %1, %2, %3, %4 : f32, vector<8xf32>, f64, f64, f32
}

// Must NOT touch f16/bf16 (emulated in f32 before this pass runs), tensors,
// or integer max/min.
// CHECK-LABEL: func.func @left_alone
// CHECK: arith.maximumf %{{.*}} : f16
// CHECK: arith.maximumf %{{.*}} : tensor<4xf32>
// CHECK: arith.maxsi
func.func @left_alone(%h: f16, %g: f16, %t: tensor<4xf32>, %u: tensor<4xf32>, %i: i32, %j: i32) -> (f16, tensor<4xf32>, i32) {
  %0 = arith.maximumf %h, %g : f16
  %1 = arith.maximumf %t, %u : tensor<4xf32>
  %2 = arith.maxsi %i, %j : i32
  return %0, %1, %2 : f16, tensor<4xf32>, i32
}
