// RUN: disc-opt %s -split-input-file -verify-diagnostics -disc-select-entry -disc-read-only-inputs -disc-tie-results-to-arguments | FileCheck %s
// RUN: disc-opt %s -split-input-file -verify-diagnostics -disc-select-entry -disc-read-only-inputs -disc-tie-results-to-arguments -eliminate-empty-tensors -one-shot-bufferize="bufferize-function-boundaries=1 function-boundary-type-conversion=identity-layout-map" -canonicalize | FileCheck %s --check-prefix=BUF

#map = affine_map<(d0) -> (d0)>

// An SGD-like update: result 0 is written into %p, result 1 is returned. The
// tied argument becomes writable, the other stays read-only, and the
// attribute is consumed.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[P:.*]]: tensor<?xf32> {bufferization.writable = true}, %[[G:.*]]: tensor<?xf32> {bufferization.writable = false})
// CHECK-NOT: disc.result_into
// CHECK: %[[R:.*]]:2 = linalg.generic
// CHECK: %[[M:.*]] = bufferization.materialize_in_destination %[[R]]#0 in %[[P]]
// CHECK: return %[[M]], %[[R]]#1
//
// After bufferization the update is computed in %p's buffer: no allocation
// for it and no copy.
// BUF-LABEL: func.func @main
// BUF-SAME: (%[[P:.*]]: memref<?xf32>, %[[G:.*]]: memref<?xf32>)
// BUF: %[[A:.*]] = memref.alloc
// BUF-NOT: memref.alloc
// BUF: linalg.generic {{.*}} ins(%[[P]], %[[G]] : {{.*}}) outs(%[[P]], %[[A]] :
// BUF-NOT: memref.copy
// BUF: return %[[P]], %[[A]]
func.func @main(%p: tensor<?xf32> {disc.result_into = 0 : i64}, %g: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %p, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %e2 = tensor.empty(%n) : tensor<?xf32>
  %r:2 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel"]}
     ins(%p, %g : tensor<?xf32>, tensor<?xf32>) outs(%e, %e2 : tensor<?xf32>, tensor<?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32, %o2: f32):
    %c = arith.constant 0.1 : f32
    %m = arith.mulf %b, %c : f32
    %s = arith.subf %a, %m : f32
    linalg.yield %s, %m : f32, f32
  } -> (tensor<?xf32>, tensor<?xf32>)
  return %r#0, %r#1 : tensor<?xf32>, tensor<?xf32>
}

// -----

#map = affine_map<(d0) -> (d0)>

// A later op reads %p's old value: the update cannot be computed in place.
// It goes to a buffer of its own and is copied into %p at the end, after
// that read.
// CHECK-LABEL: func.func @main
// CHECK: bufferization.materialize_in_destination
// BUF-LABEL: func.func @main
// BUF-SAME: (%[[P:.*]]: memref<?xf32>, %[[G:.*]]: memref<?xf32>)
// BUF: %[[U:.*]] = memref.alloc
// BUF: linalg.generic {{.*}} ins(%[[P]], %[[G]] : {{.*}}) outs(%[[U]] :
// BUF: %[[O:.*]] = memref.alloc
// BUF: linalg.generic {{.*}} ins(%[[P]], %[[U]] : {{.*}}) outs(%[[O]] :
// BUF: memref.copy %[[U]], %[[P]]
// BUF: return %[[P]], %[[O]]
func.func @main(%p: tensor<?xf32> {disc.result_into = 0 : i64}, %g: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %p, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
     ins(%p, %g : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  %e2 = tensor.empty(%n) : tensor<?xf32>
  %r2 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
     ins(%p, %r : tensor<?xf32>, tensor<?xf32>) outs(%e2 : tensor<?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  return %r, %r2 : tensor<?xf32>, tensor<?xf32>
}

// -----

// Without the attribute nothing changes: no materialization, inputs stay
// read-only.
// CHECK-LABEL: func.func @main
// CHECK-SAME: {bufferization.writable = false}
// CHECK-NOT: materialize_in_destination
// BUF-LABEL: func.func @main
// BUF-SAME: (%{{.*}}: memref<4xf32>) -> memref<4xf32>
func.func @main(%p: tensor<4xf32>) -> tensor<4xf32> {
  return %p : tensor<4xf32>
}

// -----

// Two arguments cannot take one result.
// expected-error @+1 {{arguments 0 and 1 both carry 'disc.result_into = 0'}}
func.func @main(%p: tensor<4xf32> {disc.result_into = 0 : i64}, %q: tensor<4xf32> {disc.result_into = 0 : i64}) -> tensor<4xf32> {
  %0 = arith.addf %p, %q : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// The result and the argument must have one type (the dialect's verifier).
// expected-error @+1 {{'disc.result_into' on argument 0: result 0 has type 'tensor<4xf64>', the argument 'tensor<4xf32>'}}
func.func @main(%p: tensor<4xf32> {disc.result_into = 0 : i64}) -> tensor<4xf64> {
  %0 = arith.extf %p : tensor<4xf32> to tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// expected-error @+1 {{'disc.result_into' on argument 0: result 1 does not exist (the function has 1)}}
func.func @main(%p: tensor<4xf32> {disc.result_into = 1 : i64}) -> tensor<4xf32> {
  return %p : tensor<4xf32>
}

// -----

// expected-error @+1 {{'disc.result_into' on argument 0: expected an integer result index, got "x"}}
func.func @main(%p: tensor<4xf32> {disc.result_into = "x"}) -> tensor<4xf32> {
  return %p : tensor<4xf32>
}

// -----

#map = affine_map<(d0) -> (d0)>

// Another result is a view of %p's value before the call: %p is not written
// (the attribute is dropped, the result gets a buffer of its own, and the
// caller copies it).
// CHECK-LABEL: func.func @main
// CHECK-SAME: {bufferization.writable = false}
// CHECK-NOT: disc.result_into
// CHECK-NOT: materialize_in_destination
// BUF-LABEL: func.func @main
// BUF-SAME: (%[[P:.*]]: memref<?xf32>, %[[G:.*]]: memref<?xf32>)
// BUF: %[[U:.*]] = memref.alloc
// BUF: linalg.generic {{.*}} outs(%[[U]] :
// BUF-NOT: memref.copy
// BUF: return %[[U]], %{{.*}} : memref<?xf32>, memref<?x1xf32>
func.func @main(%p: tensor<?xf32> {disc.result_into = 0 : i64}, %g: tensor<?xf32>) -> (tensor<?xf32>, tensor<?x1xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %p, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
     ins(%p, %g : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  %v = tensor.expand_shape %p [[0, 1]] output_shape [%n, 1] : tensor<?xf32> into tensor<?x1xf32>
  // expected-remark @+1 {{result 0 is not written into argument 0 in place: another result is a view of the argument's value before the call}}
  return %r, %v : tensor<?xf32>, tensor<?x1xf32>
}
