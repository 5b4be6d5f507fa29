// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(disc-fold-empty-loops))' | FileCheck %s

// A reduction over a static zero-length dim: its result is the filled init.
// CHECK-LABEL: func.func @sum_over_nothing
// CHECK: %[[INIT:.*]] = linalg.fill
// CHECK: return %[[INIT]]
func.func @sum_over_nothing(%x: tensor<4x0xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x0xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// An elementwise op on an empty tensor gives its (empty) init.
// CHECK-LABEL: func.func @exp_of_empty
// CHECK: %[[E:.*]] = tensor.empty() : tensor<0x8xf32>
// CHECK: return %[[E]]
func.func @exp_of_empty(%x: tensor<0x8xf32>) -> tensor<0x8xf32> {
  %e = tensor.empty() : tensor<0x8xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<0x8xf32>) outs(%e : tensor<0x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = math.exp %in : f32
    linalg.yield %s : f32
  } -> tensor<0x8xf32>
  return %0 : tensor<0x8xf32>
}

// -----

// Must not: dynamic extents (zero only at run time) and non-empty static
// ones keep their ops.
// CHECK-LABEL: func.func @not_empty
// CHECK-COUNT-2: linalg.generic
func.func @not_empty(%x: tensor<?x8xf32>, %y: tensor<4x8xf32>) -> (tensor<?x8xf32>, tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = math.exp %in : f32
    linalg.yield %s : f32
  } -> tensor<?x8xf32>
  %f = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<4x8xf32>) outs(%f : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = math.exp %in : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %0, %1 : tensor<?x8xf32>, tensor<4x8xf32>
}
