// RUN: disc-opt %s -pass-pipeline='builtin.module(func.func(disc-hoist-static-allocas))' | FileCheck %s

// Static allocas inside loops move to the entry block; a dynamic one stays.
// CHECK-LABEL: func.func @body
// CHECK-NEXT: memref.alloca() : memref<1xf32>
// CHECK: scf.for
// CHECK-NOT: memref.alloca() : memref<1xf32>
// CHECK: memref.alloca(%{{.*}}) : memref<?xf32>
func.func @body(%x: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %t = memref.alloca() : memref<1xf32>
    %d = memref.alloca(%n) : memref<?xf32>
    %v = memref.load %x[%i] : memref<?xf32>
    memref.store %v, %t[%c0] : memref<1xf32>
    memref.store %v, %d[%c0] : memref<?xf32>
  }
  return
}
