// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{vectorize=false index32-limit=0})' | FileCheck %s

// A max scatter (scatter_reduce amax, include_self=False: a plain scatter of
// the updates, then the max of all of them): both loops over the updates
// become grids over (update, feature), the feature fastest (the window
// loop folded in: writes coalesced), the combining write an atomic; the
// index load runs per element.
// CHECK-LABEL: func.func @scatter_max
// CHECK:         %[[F:.*]] = arith.maxsi %dim_0
// CHECK:         %[[TOTAL:.*]] = arith.muli %{{.*}}, %[[F]]
// CHECK:         scf.parallel
// CHECK:           scf.parallel
// CHECK:             scf.if
// CHECK:               %[[J:.*]] = arith.remui %{{.*}}, %[[F]]
// CHECK:               %[[U:.*]] = arith.divui %{{.*}}, %[[F]]
// CHECK:               memref.load %arg1[%[[U]]]
// CHECK-NOT:           scf.for
// CHECK:               memref.store {{.*}}, %arg2[%{{.*}}, %[[J]]]
// CHECK:         scf.parallel
// CHECK:           scf.parallel
// CHECK:             scf.if
// CHECK-NOT:           scf.for
// CHECK-NOT:           memref.load %arg2
// CHECK:               memref.atomic_rmw maximumf {{.*}}, %arg2
func.func @scatter_max(%src: memref<?x?xf32>, %idx: memref<?xi64>, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %src, %c0 : memref<?x?xf32>
  %f = memref.dim %src, %c1 : memref<?x?xf32>
  scf.for %u = %c0 to %n step %c1 {
    %i64 = memref.load %idx[%u] : memref<?xi64>
    %i = arith.index_cast %i64 : i64 to index
    scf.for %j = %c0 to %f step %c1 {
      %v = memref.load %src[%u, %j] : memref<?x?xf32>
      memref.store %v, %out[%i, %j] : memref<?x?xf32>
    }
  }
  scf.for %u = %c0 to %n step %c1 {
    %i64 = memref.load %idx[%u] : memref<?xi64>
    %i = arith.index_cast %i64 : i64 to index
    scf.for %j = %c0 to %f step %c1 {
      %v = memref.load %src[%u, %j] : memref<?x?xf32>
      %old = memref.load %out[%i, %j] : memref<?x?xf32>
      %m = arith.maximumf %old, %v : f32
      memref.store %m, %out[%i, %j] : memref<?x?xf32>
    }
  }
  return
}

// -----

// An integer index_add (accumulate): an atomic add per update.
// CHECK-LABEL: func.func @index_add_i32
// CHECK:         scf.parallel
// CHECK:           memref.atomic_rmw addi
func.func @index_add_i32(%src: memref<?xi32>, %idx: memref<?xi64>, %out: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %src, %c0 : memref<?xi32>
  scf.for %u = %c0 to %n step %c1 {
    %i64 = memref.load %idx[%u] : memref<?xi64>
    %i = arith.index_cast %i64 : i64 to index
    %v = memref.load %src[%u] : memref<?xi32>
    %old = memref.load %out[%i] : memref<?xi32>
    %s = arith.addi %v, %old : i32
    memref.store %s, %out[%i] : memref<?xi32>
  }
  return
}

// -----

// What must stay sequential (a one-thread grid): a loop that carries a
// value; one that reads what it writes other than through its own
// load-combine-store (a running sum); a product (no atomic kind); an 8-bit
// element.
// CHECK-LABEL: func.func @sequential
// CHECK-NOT:     memref.atomic_rmw
// CHECK-COUNT-4: scf.for %{{.*}} = %c{{[01]}} to %{{.*}} step %c1
// CHECK-NOT:     memref.atomic_rmw
func.func @sequential(%src: memref<?xf32>, %idx: memref<?xi64>, %out: memref<?xf32>,
                      %acc: memref<f32>, %bytes: memref<?xi8>, %bsrc: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %src, %c0 : memref<?xf32>
  %r = scf.for %u = %c0 to %n step %c1 iter_args(%a = %zero) -> (f32) {
    %i64 = memref.load %idx[%u] : memref<?xi64>
    %i = arith.index_cast %i64 : i64 to index
    %v = memref.load %src[%u] : memref<?xf32>
    memref.store %v, %out[%i] : memref<?xf32>
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  memref.store %r, %acc[] : memref<f32>
  scf.for %u = %c1 to %n step %c1 {
    %p = arith.subi %u, %c1 : index
    %prev = memref.load %out[%p] : memref<?xf32>
    %v = memref.load %src[%u] : memref<?xf32>
    %s = arith.addf %prev, %v : f32
    memref.store %s, %out[%u] : memref<?xf32>
  }
  scf.for %u = %c0 to %n step %c1 {
    %i64 = memref.load %idx[%u] : memref<?xi64>
    %i = arith.index_cast %i64 : i64 to index
    %v = memref.load %src[%u] : memref<?xf32>
    %old = memref.load %out[%i] : memref<?xf32>
    %m = arith.mulf %old, %v : f32
    memref.store %m, %out[%i] : memref<?xf32>
  }
  scf.for %u = %c0 to %n step %c1 {
    %i64 = memref.load %idx[%u] : memref<?xi64>
    %i = arith.index_cast %i64 : i64 to index
    %v = memref.load %bsrc[%u] : memref<?xi8>
    %old = memref.load %bytes[%i] : memref<?xi8>
    %m = arith.addi %old, %v : i8
    memref.store %m, %bytes[%i] : memref<?xi8>
  }
  return
}

// -----

// The window loop behind a bounds check (what an index_put / windowed
// scatter lowers to): folded into the grid inside the check, the check
// computed per element.
// CHECK-LABEL: func.func @guarded_window
// CHECK:         scf.if
// CHECK:           memref.load %arg1
// CHECK:           scf.if
// CHECK-NOT:         scf.for
// CHECK:             memref.store
func.func @guarded_window(%src: memref<?x?xf32>, %idx: memref<?xi64>, %out: memref<1000x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1000 = arith.constant 1000 : index
  %n = memref.dim %src, %c0 : memref<?x?xf32>
  %f = memref.dim %src, %c1 : memref<?x?xf32>
  scf.for %u = %c0 to %n step %c1 {
    %i64 = memref.load %idx[%u] : memref<?xi64>
    %i = arith.index_cast %i64 : i64 to index
    %lo = arith.cmpi sge, %i, %c0 : index
    %hi = arith.cmpi slt, %i, %c1000 : index
    %ok = arith.andi %lo, %hi : i1
    scf.if %ok {
      scf.for %j = %c0 to %f step %c1 {
        %v = memref.load %src[%u, %j] : memref<?x?xf32>
        memref.store %v, %out[%i, %j] : memref<1000x?xf32>
      }
    }
  }
  return
}

// -----

// Not folded: a window loop whose stores do not index by its variable (the
// last of its values must win, in order), one whose bound is computed per
// update, and an scf.if with an else branch. They stay each thread's loops.
// CHECK-LABEL: func.func @window_stays
// CHECK-COUNT-3: scf.for
func.func @window_stays(%src: memref<?x?xf32>, %idx: memref<?xi64>, %out: memref<?xf32>,
                        %out2: memref<?x?xf32>, %lens: memref<?xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %src, %c0 : memref<?x?xf32>
  %f = memref.dim %src, %c1 : memref<?x?xf32>
  scf.for %u = %c0 to %n step %c1 {
    %i64 = memref.load %idx[%u] : memref<?xi64>
    %i = arith.index_cast %i64 : i64 to index
    scf.for %j = %c0 to %f step %c1 {
      %v = memref.load %src[%u, %j] : memref<?x?xf32>
      memref.store %v, %out[%i] : memref<?xf32>
    }
  }
  scf.for %u = %c0 to %n step %c1 {
    %i64 = memref.load %idx[%u] : memref<?xi64>
    %i = arith.index_cast %i64 : i64 to index
    %len = memref.load %lens[%u] : memref<?xindex>
    scf.for %j = %c0 to %len step %c1 {
      %v = memref.load %src[%u, %j] : memref<?x?xf32>
      memref.store %v, %out2[%i, %j] : memref<?x?xf32>
    }
  }
  scf.for %u = %c0 to %n step %c1 {
    %i64 = memref.load %idx[%u] : memref<?xi64>
    %i = arith.index_cast %i64 : i64 to index
    %pos = arith.cmpi sge, %i, %c0 : index
    scf.if %pos {
      scf.for %j = %c0 to %f step %c1 {
        %v = memref.load %src[%u, %j] : memref<?x?xf32>
        memref.store %v, %out2[%i, %j] : memref<?x?xf32>
      }
    } else {
      memref.store %zero, %out2[%c0, %c0] : memref<?x?xf32>
    }
  }
  return
}
