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

// Reduction over two dims: promoted out of both inner loops. The inner
// max carries a plain max (maxnumf nnan nsz: one vmaxps on x86, where
// maximumf takes six dependent instructions) and, apart, whether a NaN was
// seen (the init included); after the loop a NaN seen gives NaN.
// CHECK-LABEL: func.func @two_dims
// CHECK: scf.for %[[I:.*]] =
// CHECK-NEXT: memref.load
// CHECK-NEXT: %[[OUTER:.*]] = scf.for {{.*}} iter_args(%[[A:.*]] = %{{.*}}) -> (f32)
// CHECK-NEXT: %[[INITNAN:.*]] = arith.cmpf uno, %[[A]], %[[A]] : f32
// CHECK-NEXT: %[[R:.*]]:2 = scf.for {{.*}} iter_args(%[[M:.*]] = %[[A]], %[[SEEN:.*]] = %[[INITNAN]]) -> (f32, i1)
// CHECK: %[[X:.*]] = memref.load %arg0
// CHECK-NEXT: %[[MAX:.*]] = arith.maxnumf %[[M]], %[[X]] fastmath<nnan,nsz> : f32
// CHECK-NEXT: %[[ISNAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK-NEXT: %[[OR:.*]] = arith.ori %[[SEEN]], %[[ISNAN]] : i1
// CHECK-NEXT: scf.yield %[[MAX]], %[[OR]] : f32, i1
// CHECK: %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK-NEXT: arith.select %[[R]]#1, %[[NAN]], %[[R]]#0 : f32
// CHECK-NOT: arith.maximumf
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

// -----

// Must NOT carry NaNs apart: the running max is read by another op of the
// body (here stored as a running output), or the element type is not
// f32/f64. Both keep maximumf/minimumf.
// CHECK-LABEL: func.func @minmax_kept
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (f32) {
// CHECK: arith.maximumf
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (f16) {
// CHECK: arith.minimumf
// CHECK-NOT: maxnumf
// CHECK-NOT: minnumf
// CHECK: return
func.func @minmax_kept(%x: memref<?xf32>, %run: memref<?xf32>, %h: memref<?xf16>, %n: index) -> (memref<f32>, memref<f16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %acc = memref.alloc() : memref<f32>
  scf.for %k = %c0 to %n step %c1 {
    %a = memref.load %acc[] : memref<f32>
    %v = memref.load %x[%k] : memref<?xf32>
    %m = arith.maximumf %a, %v : f32
    memref.store %a, %run[%k] : memref<?xf32>
    memref.store %m, %acc[] : memref<f32>
  }
  %hacc = memref.alloc() : memref<f16>
  scf.for %k = %c0 to %n step %c1 {
    %a = memref.load %hacc[] : memref<f16>
    %v = memref.load %h[%k] : memref<?xf16>
    %m = arith.minimumf %a, %v : f16
    memref.store %m, %hacc[] : memref<f16>
  }
  return %acc, %hacc : memref<f32>, memref<f16>
}
