// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{row-variant=thread index32-limit=0})' | FileCheck %s

// The split variant of column reductions (disc-map-loops-to-gpu,
// ColumnLoops.h): a column nest whose threads carry their accumulators
// also gets, chosen per call by the host, a variant that splits each
// column's rows into parts (one thread per part and column, from the
// combiner's identity, into a buffer), then combines each column's parts
// in order (a second grid).

// x.sum(0): parts = min(ceildiv(65536, columns), ceildiv(rows, 32), 64),
// the split when that is 2 or more, else one thread per column.
// CHECK-LABEL: func.func @column_sum
// CHECK-DAG:     %[[M:.*]] = memref.dim %{{.*}}, %c0
// CHECK-DAG:     %[[N:.*]] = memref.dim %{{.*}}, %c1
// CHECK:         %[[COLS:.*]] = arith.maxsi %[[N]], %c1
// CHECK:         %[[BY_THREADS:.*]] = arith.ceildivui %c65536, %[[COLS]]
// CHECK:         %[[ROWS:.*]] = arith.maxsi %[[M]]
// CHECK:         %[[BY_ROWS:.*]] = arith.ceildivui %[[ROWS]], %c32
// CHECK:         %[[P0:.*]] = arith.minui %[[BY_THREADS]], %[[BY_ROWS]]
// CHECK:         %[[PARTS:.*]] = arith.minui %[[P0]], %c64
// CHECK:         %[[SPLIT:.*]] = arith.cmpi uge, %[[PARTS]], %c2
// CHECK:         scf.if %[[SPLIT]] {
// CHECK:           call @disc_ral_note_variant(%c4_i64)
// CHECK:           %[[LEN:.*]] = arith.ceildivui %{{.*}}, %[[PARTS]]
// CHECK:           %[[PARTIAL:.*]] = memref.alloc(%[[PARTS]], %[[N]]) : memref<?x?xf32>
// CHECK:           scf.parallel
// CHECK:             scf.parallel
// CHECK:               scf.if
// CHECK:                 %[[J:.*]] = arith.remui
// CHECK:                 %[[P:.*]] = arith.divui
// CHECK:                 %[[START:.*]] = arith.muli %[[P]], %[[LEN]]
// CHECK:                 %[[NEXT:.*]] = arith.addi %[[START]], %[[LEN]]
// CHECK:                 %[[END:.*]] = arith.minsi %[[M]], %[[NEXT]]
// CHECK:                 %[[ZERO:.*]] = arith.constant -0.000000e+00 : f32
// CHECK:                 %[[PART:.*]] = scf.for %[[I:.*]] = %[[START]] to %[[END]] step %c1 iter_args(%[[A:.*]] = %[[ZERO]])
// CHECK:                   %[[X:.*]] = memref.load %{{.*}}[%[[I]], %[[J]]]
// CHECK:                   arith.addf %[[A]], %[[X]] fastmath<reassoc>
// CHECK:                 memref.store %[[PART]], %[[PARTIAL]][%[[P]], %[[J]]]
// CHECK:           scf.parallel
// CHECK:             scf.parallel
// CHECK:               scf.if
// CHECK:                 %[[INIT:.*]] = memref.load %{{.*}}[%[[C:.*]]] : memref<?xf32>
// CHECK:                 %[[SUM:.*]] = scf.for %[[K:.*]] = %c0{{.*}} to %[[PARTS]] step %c1{{.*}} iter_args(%[[B:.*]] = %[[INIT]])
// CHECK:                   %[[Y:.*]] = memref.load %[[PARTIAL]][%[[K]], %[[C]]]
// CHECK:                   arith.addf %[[B]], %[[Y]] fastmath<reassoc>
// CHECK:                 memref.store %[[SUM]], %{{.*}}[%[[C]]] : memref<?xf32>
// CHECK:           memref.dealloc %[[PARTIAL]]
// CHECK:         } else {
// CHECK:           call @disc_ral_note_variant(%c5_i64)
// CHECK:           scf.parallel
// CHECK:             scf.parallel
// CHECK:               scf.for %{{.*}} = %c0 to %[[M]]
// CHECK:         } {disc.row_variants}
func.func @column_sum(%a: memref<?x?xf32>, %acc: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.for %i = %c0 to %m step %c1 {
    scf.parallel (%j) = (%c0) to (%n) step (%c1) {
      %v = memref.load %a[%i, %j] : memref<?x?xf32>
      %s = memref.load %acc[%j] : memref<?xf32>
      %y = arith.addf %s, %v : f32
      memref.store %y, %acc[%j] : memref<?xf32>
      scf.reduce
    }
  }
  return
}

// -----

// Two accumulators of one loop (a column sum and a column max of i32), a
// buffer of parts each, the max from INT_MIN; x.mean(1) of [B, S, H] as the
// nest over (B, H): the parts are [parts, B, H].
// CHECK-LABEL: func.func @two_accumulators_over_a_middle_dim
// CHECK:         scf.if
// CHECK:           %[[SUMS:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?xf32>
// CHECK:           %[[MAXES:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?xi32>
// CHECK:           arith.constant -2147483648 : i32
// CHECK:           scf.for {{.*}} -> (f32, i32)
// CHECK:             arith.addf
// CHECK:             arith.maxsi
// CHECK:           memref.store %{{.*}}, %[[SUMS]][%{{.*}}, %{{.*}}, %{{.*}}]
// CHECK:           memref.store %{{.*}}, %[[MAXES]][%{{.*}}, %{{.*}}, %{{.*}}]
// CHECK:           scf.for {{.*}} -> (f32, i32)
// CHECK:             memref.load %[[SUMS]]
// CHECK:             memref.load %[[MAXES]]
// CHECK:           memref.dealloc %[[SUMS]]
// CHECK:           memref.dealloc %[[MAXES]]
// CHECK:         } else {
func.func @two_accumulators_over_a_middle_dim(%a: memref<?x?x?xf32>,
    %ids: memref<?x?x?xi32>, %sum: memref<?x?xf32>, %max: memref<?x?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = memref.dim %a, %c0 : memref<?x?x?xf32>
  %s = memref.dim %a, %c1 : memref<?x?x?xf32>
  %h = memref.dim %a, %c2 : memref<?x?x?xf32>
  scf.parallel (%i) = (%c0) to (%b) step (%c1) {
    scf.for %t = %c0 to %s step %c1 {
      scf.parallel (%k) = (%c0) to (%h) step (%c1) {
        %v = memref.load %a[%i, %t, %k] : memref<?x?x?xf32>
        %x = memref.load %sum[%i, %k] : memref<?x?xf32>
        %y = arith.addf %x, %v : f32
        memref.store %y, %sum[%i, %k] : memref<?x?xf32>
        %w = memref.load %ids[%i, %t, %k] : memref<?x?x?xi32>
        %p = memref.load %max[%i, %k] : memref<?x?xi32>
        %q = arith.maxsi %p, %w : i32
        memref.store %q, %max[%i, %k] : memref<?x?xi32>
        scf.reduce
      }
    }
    scf.reduce
  }
  return
}

// -----

// What gets no split variant: rows whose count depends on the column's
// batch (the parts would differ per column) ...
// CHECK-LABEL: func.func @ragged_rows
// CHECK-NOT:     disc_ral_note_variant
// CHECK-NOT:     disc.row_variants
// CHECK:         return
func.func @ragged_rows(%a: memref<?x?x?xf32>, %acc: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = memref.dim %a, %c0 : memref<?x?x?xf32>
  %h = memref.dim %a, %c2 : memref<?x?x?xf32>
  scf.parallel (%i) = (%c0) to (%b) step (%c1) {
    %rows = arith.addi %i, %c1 : index
    scf.for %t = %c0 to %rows step %c1 {
      scf.parallel (%k) = (%c0) to (%h) step (%c1) {
        %v = memref.load %a[%i, %t, %k] : memref<?x?x?xf32>
        %x = memref.load %acc[%i, %k] : memref<?x?xf32>
        %y = arith.addf %x, %v : f32
        memref.store %y, %acc[%i, %k] : memref<?x?xf32>
        scf.reduce
      }
    }
    scf.reduce
  }
  return
}

// -----

// ... an element that is overwritten, not accumulated ...
// CHECK-LABEL: func.func @last_row
// CHECK-NOT:     disc_ral_note_variant
// CHECK-NOT:     disc.row_variants
// CHECK:         return
func.func @last_row(%a: memref<?x?xf32>, %acc: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.for %i = %c0 to %m step %c1 {
    scf.parallel (%j) = (%c0) to (%n) step (%c1) {
      %v = memref.load %a[%i, %j] : memref<?x?xf32>
      memref.store %v, %acc[%j] : memref<?xf32>
      scf.reduce
    }
  }
  return
}

// -----

// ... and an accumulator combined with itself (x + x: not a reduction
// step), which stays in memory.
// CHECK-LABEL: func.func @doubling
// CHECK-NOT:     disc_ral_note_variant
// CHECK-NOT:     iter_args
// CHECK:         return
func.func @doubling(%a: memref<?x?xf32>, %acc: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.for %i = %c0 to %m step %c1 {
    scf.parallel (%j) = (%c0) to (%n) step (%c1) {
      %s = memref.load %acc[%j] : memref<?xf32>
      %y = arith.addf %s, %s : f32
      memref.store %y, %acc[%j] : memref<?xf32>
      scf.reduce
    }
  }
  return
}
