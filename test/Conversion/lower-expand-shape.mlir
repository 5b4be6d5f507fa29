// RUN: disc-opt %s -pass-pipeline='builtin.module(func.func(disc-lower-expand-shape),expand-strided-metadata)' | FileCheck %s

// A dim split into dynamic sizes (upstream expand-strided-metadata crashes
// on it): strides from the source's, the last dim of a group keeps its
// source dim's stride, the one before it that times the next size; the
// static innermost stride and offset of the identity layout stay constants.
// CHECK-LABEL: func.func @split
// CHECK: %[[BASE:.*]], %[[OFF:.*]], %[[SIZES:.*]]:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %arg0
// CHECK: %[[S0:.*]] = arith.muli %[[STRIDES]]#0, %arg2 : index
// CHECK: memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [%arg1, %arg2, %{{.*}}], strides: [%[[S0]], %[[STRIDES]]#0, 1]
// CHECK-NOT: memref.expand_shape
func.func @split(%src: memref<?x?xf32>, %a: index, %b: index) -> memref<?x?x?xf32> {
  %c1 = arith.constant 1 : index
  %n = memref.dim %src, %c1 : memref<?x?xf32>
  %e = memref.expand_shape %src [[0, 1], [2]] output_shape [%a, %b, %n] : memref<?x?xf32> into memref<?x?x?xf32>
  return %e : memref<?x?x?xf32>
}
