// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{row-vectors=0 row-cache-bytes=0 row-variant=block row-unroll=4})' | FileCheck %s
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{row-vectors=0 row-cache-bytes=0 row-variant=block row-unroll=1})' | FileCheck %s --check-prefix=ROLLED
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{row-vectors=0 row-cache-bytes=0 row-variant=thread row-unroll=4})' | FileCheck %s --check-prefix=THREAD
// RUN: not disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{row-vectors=0 row-cache-bytes=0 row-unroll=0})' 2>&1 | FileCheck %s --check-prefix=BAD

// The block-per-row variant's per-thread loops unrolled (RowKernels.h,
// row-unroll): a main loop of `factor` iterations t, t + T, ... per trip
// (step T * factor) up to the last whole trip, then the rolled loop for
// the rest. Trips are clamped at 0: a thread past the row's end starts
// beyond it.

// A row sum: the copies chain the accumulator in the original order, and
// the remainder loop starts from the main loop's result.
// CHECK-LABEL: func.func @row_sum
// CHECK:         scf.parallel (%[[T:.*]]) = {{.*}} init (%[[ID:.*]]) -> f32
// CHECK:           %[[START:.*]] = arith.addi %c0, %{{.*}}
// CHECK:           %[[STRIDE:.*]] = arith.muli %{{.*}}, %c1
// CHECK:           %[[DIFF:.*]] = arith.subi %[[UB:.*]], %[[START]]
// CHECK:           %[[CEIL:.*]] = arith.ceildivsi %[[DIFF]], %[[STRIDE]]
// CHECK:           %[[TRIPS:.*]] = arith.maxsi %{{.*}}, %[[CEIL]]
// CHECK:           %[[REM:.*]] = arith.remsi %[[TRIPS]], %[[C4:[a-z0-9_]+]]
// CHECK:           %[[MAIN:.*]] = arith.subi %[[TRIPS]], %[[REM]]
// CHECK:           %[[LEN:.*]] = arith.muli %[[MAIN]], %[[STRIDE]]
// CHECK:           %[[END:.*]] = arith.addi %[[START]], %[[LEN]]
// CHECK:           %[[STEP4:.*]] = arith.muli %[[STRIDE]], %[[C4]]
// CHECK:           %[[PART:.*]] = scf.for %[[I:.*]] = %[[START]] to %[[END]] step %[[STEP4]] iter_args(%[[A0:.*]] = %[[ID]])
// CHECK:             %[[X0:.*]] = memref.load %{{.*}}[%{{.*}}, %[[I]]]
// CHECK:             %[[A1:.*]] = arith.addf %[[A0]], %[[X0]]
// CHECK:             %[[I1:.*]] = arith.addi %[[I]], %{{.*}}
// CHECK:             %[[X1:.*]] = memref.load %{{.*}}[%{{.*}}, %[[I1]]]
// CHECK:             %[[A2:.*]] = arith.addf %[[A1]], %[[X1]]
// CHECK:             memref.load
// CHECK:             %[[A3:.*]] = arith.addf %[[A2]]
// CHECK:             memref.load
// CHECK:             %[[A4:.*]] = arith.addf %[[A3]]
// CHECK-NOT:         memref.load
// CHECK:             scf.yield %[[A4]]
// CHECK:           %[[REST:.*]] = scf.for %{{.*}} = %[[END]] to %[[UB]] step %[[STRIDE]] iter_args(%{{.*}} = %[[PART]])
// CHECK:             memref.load
// CHECK-NOT:         memref.load
// CHECK:             scf.yield
// CHECK:           scf.reduce(%[[REST]] : f32)
// ROLLED-LABEL: func.func @row_sum
// ROLLED-NOT:    arith.ceildivsi
// ROLLED:        scf.for
// ROLLED-NOT:    scf.for
// ROLLED:        scf.reduce(
// THREAD-LABEL: func.func @row_sum
// THREAD-NOT:    arith.ceildivsi
// THREAD-NOT:    disc.row_block
func.func @row_sum(%a: memref<?x?xf32>, %acc: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %init = memref.load %acc[%i] : memref<?xf32>
    %s = scf.for %j = %c0 to %n step %c1 iter_args(%x = %init) -> (f32) {
      %v = memref.load %a[%i, %j] : memref<?x?xf32>
      %y = arith.addf %x, %v fastmath<reassoc> : f32
      scf.yield %y : f32
    }
    memref.store %s, %acc[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// A stage whose stores follow its loads: the four copies' loads come
// first, then their stores, so the loads are in flight together.
// CHECK-LABEL: func.func @exp_stage
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-COUNT-4: memref.load %arg0
// CHECK-NOT:     memref.store
// CHECK-COUNT-4: math.exp
// CHECK-COUNT-4: memref.store %{{.*}}, %arg1
// CHECK:         }
// CHECK:         scf.for
// CHECK:           memref.load %arg0
// CHECK:           math.exp
// CHECK:           memref.store
// CHECK:         }
// Two phases: a reduction then this stage.
func.func @exp_stage(%a: memref<?x?xf32>, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %mx = scf.for %j = %c0 to %n step %c1 iter_args(%x = %ninf) -> (f32) {
      %v = memref.load %a[%i, %j] : memref<?x?xf32>
      %y = arith.maxnumf %x, %v : f32
      scf.yield %y : f32
    }
    scf.parallel (%j) = (%c0) to (%n) step (%c1) {
      %v = memref.load %a[%i, %j] : memref<?x?xf32>
      %d = arith.subf %v, %mx : f32
      %e = math.exp %d : f32
      memref.store %e, %out[%i, %j] : memref<?x?xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// A stage that reads after it writes (an in-place update read back): the
// copies stay in order, each copy's store before the next copy's load.
// CHECK-LABEL: func.func @read_after_write
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           memref.load %arg0
// CHECK:           memref.store %{{.*}}, %arg0
// CHECK:           memref.load %arg0
// CHECK:           memref.store %{{.*}}, %arg1
// CHECK:           memref.load %arg0
// CHECK:           memref.store %{{.*}}, %arg0
func.func @read_after_write(%a: memref<?x?xf32>, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %s = scf.for %j = %c0 to %n step %c1 iter_args(%x = %zero) -> (f32) {
      %v = memref.load %a[%i, %j] : memref<?x?xf32>
      %y = arith.addf %x, %v fastmath<reassoc> : f32
      scf.yield %y : f32
    }
    scf.parallel (%j) = (%c0) to (%n) step (%c1) {
      %v = memref.load %a[%i, %j] : memref<?x?xf32>
      %d = arith.divf %v, %s : f32
      memref.store %d, %a[%i, %j] : memref<?x?xf32>
      %w = memref.load %a[%i, %j] : memref<?x?xf32>
      memref.store %w, %out[%i, %j] : memref<?x?xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// BAD: row-unroll must be 1 to 16, got 0
