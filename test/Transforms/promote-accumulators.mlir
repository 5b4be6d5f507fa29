// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(disc-promote-accumulators))' | FileCheck %s

// A row sum: the accumulator becomes an iter_arg of both loops it is
// invariant in (one load before, one store after); the add is reassociable.
// CHECK-LABEL: func.func @row_sum
// CHECK: scf.for %[[I:.*]] =
// CHECK: %[[INIT:.*]] = memref.load %[[ACC:.*]][%[[I]]]
// CHECK: %[[R:.*]] = scf.for {{.*}} iter_args(%[[A:.*]] = %[[INIT]]) -> (f32)
// CHECK: %[[X:.*]] = memref.load %arg0
// CHECK: %[[S:.*]] = arith.addf %[[A]], %[[X]] fastmath<reassoc> : f32
// CHECK: scf.yield %[[S]] : f32
// CHECK: memref.store %[[R]], %[[ACC]][%[[I]]]
func.func @row_sum(%x: memref<?x?xf32>, %n: index, %m: index) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %acc = memref.alloc(%n) : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    scf.for %k = %c0 to %m step %c1 {
      %a = memref.load %acc[%i] : memref<?xf32>
      %v = memref.load %x[%i, %k] : memref<?x?xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %acc[%i] : memref<?xf32>
    }
  }
  return %acc : memref<?xf32>
}

// -----

// Reduction over two dims: promoted out of both inner loops; max is exact
// in any order and gets no fast-math flag.
// CHECK-LABEL: func.func @two_dims
// CHECK: scf.for %[[I:.*]] =
// CHECK-NEXT: memref.load
// CHECK-NEXT: scf.for {{.*}} iter_args
// CHECK-NEXT: scf.for {{.*}} iter_args
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: fastmath
// CHECK: memref.store
// CHECK-NOT: memref.store
// CHECK: return
func.func @two_dims(%x: memref<?x?x?xf32>, %n: index, %m: index) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %acc = memref.alloc(%n) : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %m step %c1 {
      scf.for %k = %c0 to %m step %c1 {
        %a = memref.load %acc[%i] : memref<?xf32>
        %v = memref.load %x[%i, %j, %k] : memref<?x?x?xf32>
        %s = arith.maximumf %a, %v : f32
        memref.store %s, %acc[%i] : memref<?xf32>
      }
    }
  }
  return %acc : memref<?xf32>
}

// -----

// Must NOT promote: the accumulator is a function argument (it may alias
// the input), the index varies with the loop, or another op reads the
// same allocation through a view.
// CHECK-LABEL: func.func @not_promoted
// CHECK-NOT: iter_args
// CHECK: return
func.func @not_promoted(%x: memref<?x?xf32>, %out: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    scf.for %k = %c0 to %n step %c1 {
      %a = memref.load %out[%i] : memref<?xf32>
      %v = memref.load %x[%i, %k] : memref<?x?xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %out[%i] : memref<?xf32>
    }
  }
  %acc = memref.alloc(%n) : memref<?xf32>
  scf.for %k = %c0 to %n step %c1 {
    %a = memref.load %acc[%k] : memref<?xf32>
    %s = arith.addf %a, %a : f32
    memref.store %s, %acc[%k] : memref<?xf32>
  }
  %view = memref.cast %acc : memref<?xf32> to memref<?xf32>
  scf.for %k = %c0 to %n step %c1 {
    %a = memref.load %acc[%c0] : memref<?xf32>
    %b = memref.load %view[%k] : memref<?xf32>
    %s = arith.addf %a, %b : f32
    memref.store %s, %acc[%c0] : memref<?xf32>
  }
  return
}
