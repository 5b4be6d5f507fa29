// RUN: disc-opt %s -pass-pipeline='builtin.module(func.func(disc-parallel-row-chunks))' -split-input-file | FileCheck %s

// A plain column sum ([R, C] over R): the rows split into chunks of at
// least 32 (at most 32 chunks; a chunk's rows a multiple of 4), each
// summed into its own row of a partial-sum buffer in a parallel loop, four
// rows per load and store of a partial sum (the chunk's last rows one at a
// time), then the chunks added into the accumulator in chunk order.
// CHECK-LABEL: func.func @column_sum
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[COUNT:.*]] = arith.subi
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[BY:.*]] = arith.divui %[[COUNT]], %[[C32]]
// CHECK: %[[ATLEAST:.*]] = arith.maxui %{{.*}}, %[[BY]]
// CHECK: %[[CHUNKS:.*]] = arith.minui %{{.*}}, %[[ATLEAST]]
// CHECK: %[[SHARE:.*]] = arith.ceildivui %[[COUNT]], %[[CHUNKS]]
// CHECK: %[[GROUPS:.*]] = arith.ceildivui %[[SHARE]], %[[C4]]
// CHECK: %[[ROWS:.*]] = arith.muli %[[GROUPS]], %[[C4]]
// CHECK: %[[PART:.*]] = memref.alloc(%[[CHUNKS]], %arg2) {alignment = 64 : i64} : memref<?x?xf64>
// CHECK: scf.parallel (%[[P:.*]]) = (%{{.*}}) to (%[[CHUNKS]])
// CHECK:   %[[NEG0:.*]] = arith.constant -0.000000e+00 : f64
// CHECK:   scf.for %[[C0:.*]] = %{{.*}} to %arg2
// CHECK:     memref.store %[[NEG0]], %[[PART]][%[[P]], %[[C0]]]
// CHECK:   %[[END:.*]] = arith.minsi %arg1,
// CHECK:   scf.for %[[G:.*]] = %{{.*}} to %[[GROUPS]]
// CHECK:     %[[START:.*]] = arith.addi
// CHECK:     %[[NEXT:.*]] = arith.addi %[[START]], %[[C4]]
// CHECK:     %[[WHOLE:.*]] = arith.cmpi sle, %[[NEXT]], %[[END]]
// CHECK:     scf.if %[[WHOLE]]
// CHECK:       scf.for %[[C:.*]] = %{{.*}} to %arg2
// CHECK:         memref.load %arg3[%{{.*}}, %[[C]]]
// CHECK:         memref.load %arg3[%{{.*}}, %[[C]]]
// CHECK:         memref.load %arg3[%{{.*}}, %[[C]]]
// CHECK:         memref.load %arg3[%{{.*}}, %[[C]]]
// CHECK:         %[[FOUR:.*]] = arith.addf %{{.*}}, %{{.*}} : f64
// CHECK:         %[[OLD:.*]] = memref.load %[[PART]][%[[P]], %[[C]]]
// CHECK:         %[[NEW:.*]] = arith.addf %[[OLD]], %[[FOUR]] : f64
// CHECK:         memref.store %[[NEW]], %[[PART]][%[[P]], %[[C]]]
// CHECK:     } else {
// CHECK:       scf.for %[[R:.*]] = %[[START]] to
// CHECK:         scf.for %[[C1:.*]] = %{{.*}} to %arg2
// CHECK:           memref.load %arg3[%[[R]], %[[C1]]]
// CHECK:           memref.store %{{.*}}, %[[PART]][%[[P]], %[[C1]]]
// CHECK: scf.for %[[Q:.*]] = %{{.*}} to %[[CHUNKS]]
// CHECK:   scf.parallel (%[[D:.*]]) =
// CHECK:     %[[A:.*]] = memref.load %arg0[%[[D]]]
// CHECK:     %[[S:.*]] = memref.load %[[PART]][%[[Q]], %[[D]]]
// CHECK:     %[[T:.*]] = arith.addf %[[A]], %[[S]] : f64
// CHECK:     memref.store %[[T]], %arg0[%[[D]]]
// CHECK-NOT: scf.for
// CHECK: return
func.func @column_sum(%acc: memref<?xf64>, %rows: index, %cols: index, %x: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %r = %c0 to %rows step %c1 {
    scf.parallel (%c) = (%c0) to (%cols) step (%c1) {
      %0 = memref.load %x[%r, %c] : memref<?x?xf32>
      %1 = memref.load %acc[%c] : memref<?xf64>
      %2 = arith.extf %0 : f32 to f64
      %3 = arith.addf %1, %2 : f64
      memref.store %3, %acc[%c] : memref<?xf64>
      scf.reduce
    }
  }
  return
}

// -----

// Not split: a max (no additive partial sums here); an iteration reading
// another column of what it writes; a store not indexed by the column; a
// column body with a loop of its own (disc-parallel-column-blocks' case);
// a row loop that carries a value; an accumulator indexed by the row.
// CHECK-LABEL: func.func @not_column_sums
// CHECK-NOT: memref.alloc
// CHECK-NOT: scf.if
// CHECK: return
func.func @not_column_sums(%acc: memref<?xf32>, %acc2: memref<?x?xf32>, %rows: index, %cols: index, %x: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f0 = arith.constant 0.0 : f32
  scf.for %r = %c0 to %rows step %c1 {
    scf.parallel (%c) = (%c0) to (%cols) step (%c1) {
      %0 = memref.load %x[%r, %c] : memref<?x?xf32>
      %1 = memref.load %acc[%c] : memref<?xf32>
      %2 = arith.maximumf %1, %0 : f32
      memref.store %2, %acc[%c] : memref<?xf32>
      scf.reduce
    }
  }
  scf.for %r = %c0 to %rows step %c1 {
    scf.parallel (%c) = (%c0) to (%cols) step (%c1) {
      %n = arith.addi %c, %c1 : index
      %0 = memref.load %acc[%n] : memref<?xf32>
      %1 = memref.load %acc[%c] : memref<?xf32>
      %2 = arith.addf %1, %0 : f32
      memref.store %2, %acc[%c] : memref<?xf32>
      scf.reduce
    }
  }
  scf.for %r = %c0 to %rows step %c1 {
    scf.parallel (%c) = (%c0) to (%cols) step (%c1) {
      %0 = memref.load %x[%r, %c] : memref<?x?xf32>
      %1 = memref.load %acc[%c0] : memref<?xf32>
      %2 = arith.addf %1, %0 : f32
      memref.store %2, %acc[%c0] : memref<?xf32>
      scf.reduce
    }
  }
  scf.for %r = %c0 to %rows step %c1 {
    scf.parallel (%c) = (%c0) to (%cols) step (%c1) {
      scf.for %k = %c0 to %cols step %c1 {
        %0 = memref.load %x[%k, %c] : memref<?x?xf32>
        %1 = memref.load %acc[%c] : memref<?xf32>
        %2 = arith.addf %1, %0 : f32
        memref.store %2, %acc[%c] : memref<?xf32>
      }
      scf.reduce
    }
  }
  %s = scf.for %r = %c0 to %rows step %c1 iter_args(%a = %f0) -> (f32) {
    scf.parallel (%c) = (%c0) to (%cols) step (%c1) {
      %0 = memref.load %x[%r, %c] : memref<?x?xf32>
      %1 = memref.load %acc[%c] : memref<?xf32>
      %2 = arith.addf %1, %0 : f32
      memref.store %2, %acc[%c] : memref<?xf32>
      scf.reduce
    }
    scf.yield %a : f32
  }
  scf.for %r = %c0 to %rows step %c1 {
    scf.parallel (%c) = (%c0) to (%cols) step (%c1) {
      %0 = memref.load %x[%r, %c] : memref<?x?xf32>
      %1 = memref.load %acc2[%r, %c] : memref<?x?xf32>
      %2 = arith.addf %1, %0 : f32
      memref.store %2, %acc2[%r, %c] : memref<?x?xf32>
      scf.reduce
    }
  }
  return
}

// -----

// A declaration (a runtime function) has no body to look at.
// CHECK-LABEL: func.func private @declared
func.func private @declared(memref<?xf32>)

// -----

// A whole sum (one carried accumulator): chunks of equal length (n / chunks,
// chunks = clamp(n / 4096, 1, 32)) summed in a parallel loop into a
// partial-sum buffer, added in chunk order onto the initial value, then the
// remainder (fewer than `chunks` elements) in the original loop.
// CHECK-LABEL: func.func @whole_sum
// CHECK: %[[COUNT:.*]] = arith.subi
// CHECK: %[[C4096:.*]] = arith.constant 4096 : index
// CHECK: arith.divui %[[COUNT]], %[[C4096]]
// CHECK: %[[CHUNKS:.*]] = arith.minui
// CHECK: %[[LEN:.*]] = arith.divui %[[COUNT]], %[[CHUNKS]]
// CHECK: %[[PART:.*]] = memref.alloc(%[[CHUNKS]]) {alignment = 64 : i64} : memref<?xf64>
// CHECK: scf.parallel (%[[P:.*]]) = (%{{.*}}) to (%[[CHUNKS]])
// CHECK:   %[[FIRST:.*]] = arith.addi %{{.*}}, %{{.*}}
// CHECK:   %[[NEG0:.*]] = arith.constant -0.000000e+00 : f64
// CHECK:   %[[S:.*]] = scf.for %[[J:.*]] = %{{.*}} to %[[LEN]] step %{{.*}} iter_args(%[[A:.*]] = %[[NEG0]])
// CHECK:     %[[I:.*]] = arith.addi %[[FIRST]], %[[J]]
// CHECK:     memref.load %arg1[%[[I]]]
// CHECK:     arith.addf %[[A]], %{{.*}} fastmath<reassoc> : f64
// CHECK:   memref.store %[[S]], %[[PART]][%[[P]]]
// CHECK: %[[R:.*]] = scf.for %[[Q:.*]] = %{{.*}} to %[[CHUNKS]] step %{{.*}} iter_args(%[[B:.*]] = %arg2)
// CHECK:   %[[V:.*]] = memref.load %[[PART]][%[[Q]]]
// CHECK:   arith.addf %[[B]], %[[V]]
// CHECK: %[[DONE:.*]] = arith.muli %[[CHUNKS]], %[[LEN]]
// CHECK: %[[REST:.*]] = arith.addi %{{.*}}, %[[DONE]]
// CHECK: %[[T:.*]] = scf.for %{{.*}} = %[[REST]] to %arg0 step %{{.*}} iter_args(%{{.*}} = %[[R]])
// CHECK: return %[[T]]
func.func @whole_sum(%n: index, %x: memref<?xf32>, %init: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %0 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %init) -> (f64) {
    %1 = memref.load %x[%i] : memref<?xf32>
    %2 = arith.extf %1 : f32 to f64
    %3 = arith.addf %a, %2 fastmath<reassoc> : f64
    scf.yield %3 : f64
  }
  return %0 : f64
}

// -----

// Not split: a running max; an accumulator read twice; a body that stores
// (a scan); two carried values.
// CHECK-LABEL: func.func @not_whole_sums
// CHECK-NOT: memref.alloc
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @not_whole_sums(%n: index, %x: memref<?xf32>, %y: memref<?xf32>, %init: f32) -> (f32, f32, f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %0 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %init) -> (f32) {
    %1 = memref.load %x[%i] : memref<?xf32>
    %2 = arith.maximumf %a, %1 : f32
    scf.yield %2 : f32
  }
  %3 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %init) -> (f32) {
    %1 = memref.load %x[%i] : memref<?xf32>
    %2 = arith.mulf %a, %1 : f32
    %4 = arith.addf %a, %2 : f32
    scf.yield %4 : f32
  }
  %5 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %init) -> (f32) {
    %1 = memref.load %x[%i] : memref<?xf32>
    %2 = arith.addf %a, %1 : f32
    memref.store %2, %y[%i] : memref<?xf32>
    scf.yield %2 : f32
  }
  %6:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %init, %b = %init) -> (f32, f32) {
    %1 = memref.load %x[%i] : memref<?xf32>
    %2 = arith.addf %a, %1 : f32
    scf.yield %2, %b : f32, f32
  }
  return %0, %3, %5, %6#0 : f32, f32, f32, f32
}
