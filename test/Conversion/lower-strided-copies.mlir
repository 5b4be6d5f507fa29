// RUN: disc-opt %s -pass-pipeline='builtin.module(func.func(disc-lower-strided-copies))' | FileCheck %s

// A copy into a strided subview (concatenate's second operand) becomes a
// linalg.copy, i.e. a loop nest.
// CHECK-LABEL: func.func @into_subview
// CHECK: %[[VIEW:.*]] = memref.subview
// CHECK: linalg.copy ins(%arg0 : memref<?x?xf32>) outs(%[[VIEW]] : memref<?x?xf32, strided<[?, 1], offset: ?>>)
// CHECK-NOT: memref.copy
func.func @into_subview(%a: memref<?x?xf32>, %out: memref<?x?xf32>, %n: index, %m: index, %off: index) {
  %view = memref.subview %out[0, %off] [%n, %m] [1, 1] : memref<?x?xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
  memref.copy %a, %view : memref<?x?xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// Must NOT touch: contiguous-to-contiguous copies (one memcpy), rank 0.
// CHECK-LABEL: func.func @contiguous
// CHECK: memref.copy %arg0, %arg1 : memref<?x4xf32> to memref<?x4xf32>
// CHECK: memref.copy %arg2, %arg3 : memref<f32> to memref<f32>
// CHECK-NOT: linalg.copy
func.func @contiguous(%a: memref<?x4xf32>, %b: memref<?x4xf32>, %s: memref<f32>, %t: memref<f32>) {
  memref.copy %a, %b : memref<?x4xf32> to memref<?x4xf32>
  memref.copy %s, %t : memref<f32> to memref<f32>
  return
}
