// RUN: disc-opt %s -disc-ral-lower-thread-scratch | FileCheck %s

// The runtime returns the thread's buffer; the memref<?xi8> descriptor
// around it has offset 0, size `bytes` and stride 1. No RAL context needed.
// CHECK: llvm.func @disc_ral_thread_scratch(i64, i64) -> !llvm.ptr
// CHECK-LABEL: func.func @scratch
// CHECK-SAME: (%[[BYTES:.*]]: index)
// CHECK-DAG: %[[SLOT:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-DAG: %[[N:.*]] = arith.index_cast %[[BYTES]] : index to i64
// CHECK: %[[PTR:.*]] = llvm.call @disc_ral_thread_scratch(%[[SLOT]], %[[N]]) : (i64, i64) -> !llvm.ptr
// CHECK: llvm.insertvalue %[[PTR]], %{{.*}}[0]
// CHECK: llvm.insertvalue %[[PTR]], %{{.*}}[1]
// CHECK: llvm.insertvalue %{{.*}}, %{{.*}}[2]
// CHECK: llvm.insertvalue %[[N]], %{{.*}}[3, 0]
// CHECK: %[[D:.*]] = llvm.insertvalue %{{.*}}, %{{.*}}[4, 0]
// CHECK: %[[M:.*]] = builtin.unrealized_conversion_cast %[[D]] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<?xi8>
// CHECK: return %[[M]]
// CHECK-NOT: disc.thread_scratch
func.func @scratch(%bytes: index) -> memref<?xi8> {
  %0 = disc.thread_scratch %bytes slot = 2 : memref<?xi8>
  return %0 : memref<?xi8>
}

// A function without disc.thread_scratch is left as it is.
// CHECK-LABEL: func.func @none
// CHECK-NOT: llvm.call
func.func @none(%x: memref<?xf32>) -> memref<?xf32> {
  return %x : memref<?xf32>
}
