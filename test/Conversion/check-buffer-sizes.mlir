// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(disc-check-buffer-sizes))' | FileCheck %s

// A size read from data: non-negative, and its byte size must not wrap.
// CHECK-LABEL: func.func @size_from_data
// CHECK: %[[N:.*]] = arith.index_cast
// CHECK: arith.cmpi sge, %[[N]], %{{.*}} : index
// CHECK: arith.divui
// CHECK: cf.assert %{{.*}}, "tensor of 2 dims at {{.*}}: a size computed at run time is negative, or the element count overflows a 64-bit byte size"
// CHECK-NEXT: tensor.empty(%[[N]]) : tensor<?x4xf32>
func.func @size_from_data(%s: i64) -> tensor<?x4xf32> {
  %n = arith.index_cast %s : i64 to index
  %e = tensor.empty(%n) : tensor<?x4xf32>
  return %e : tensor<?x4xf32>
}

// -----

// Must not: sizes that are dims of existing tensors or constants are not
// checked again; nothing inside loops is checked.
// CHECK-LABEL: func.func @known_sizes
// CHECK-NOT: cf.assert
// CHECK: return
func.func @known_sizes(%x: tensor<?x?xf32>, %n: index) -> (tensor<?x?xf32>, tensor<3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%d1, %d0) : tensor<?x?xf32>
  %s = tensor.empty() : tensor<3xf32>
  scf.for %i = %c0 to %n step %c1 {
    %t = tensor.empty(%i) : tensor<?xf32>
  }
  return %e, %s : tensor<?x?xf32>, tensor<3xf32>
}
