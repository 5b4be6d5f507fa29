// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{row-variant=thread column-threads=0 index32-limit=0})' | FileCheck %s

// Column reductions of disc-map-loops-to-gpu (ColumnLoops.h): a sequential
// loop around a parallel loop that updates its own elements becomes one
// grid over the elements, each thread running the sequential loop with the
// element it accumulates in a register. (column-threads=0: no split
// variant; column-split.mlir has it.)

// x.sum(0) in the host code: one thread per column (not one thread for
// all, as host code touching memory would run), the sum carried by the
// loop (not a load and a store of the element per row), marked
// reassociable as disc-promote-accumulators marks a carried sum.
// CHECK-LABEL: func.func @column_sum
// CHECK:         %[[N:.*]] = memref.dim %{{.*}}, %c1
// CHECK:         %[[TOTAL:.*]] = arith.maxsi %[[N]]
// CHECK-NOT:     disc_ral_note_variant
// CHECK:         scf.parallel
// CHECK:           scf.parallel
// CHECK:             %[[J:.*]] = arith.addi
// CHECK:             arith.cmpi ult, %[[J]], %[[TOTAL]]
// CHECK:             %[[INIT:.*]] = memref.load %{{.*}}[%[[J]]]
// CHECK:             %[[SUM:.*]] = scf.for %[[I:.*]] = %c0 to %{{.*}} step %c1 iter_args(%[[ACC:.*]] = %[[INIT]])
// CHECK:               %[[X:.*]] = memref.load %{{.*}}[%[[I]], %[[J]]]
// CHECK-NOT:           memref.load
// CHECK:               %[[Y:.*]] = arith.addf %[[ACC]], %[[X]] fastmath<reassoc>
// CHECK-NOT:           memref.store
// CHECK:               scf.yield %[[Y]]
// CHECK:             memref.store %[[SUM]], %{{.*}}[%[[J]]]
// CHECK-NOT:     scf.for
// CHECK:         return
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

// x.mean(1) of [B, S, H]: a parallel loop over B around the column loop
// becomes one grid over B * H (H fastest).
// CHECK-LABEL: func.func @middle_dim_sum
// CHECK:         %[[B:.*]] = arith.maxsi
// CHECK:         %[[H:.*]] = arith.maxsi
// CHECK:         %[[TOTAL:.*]] = arith.muli %[[B]], %[[H]]
// CHECK:         scf.parallel
// CHECK:           scf.parallel
// CHECK:             %[[LIN:.*]] = arith.addi
// CHECK:             %[[K:.*]] = arith.remui %[[LIN]], %[[H]]
// CHECK:             %[[BI:.*]] = arith.divui %[[LIN]], %[[H]]
// CHECK:             memref.load %{{.*}}[%[[BI]], %[[K]]]
// CHECK:             scf.for %[[S:[a-z0-9_]+]] =
// CHECK:               memref.load %{{.*}}[%[[BI]], %[[S]], %[[K]]]
// CHECK:             memref.store %{{.*}}, %{{.*}}[%[[BI]], %[[K]]]
func.func @middle_dim_sum(%a: memref<?x?x?xf32>, %acc: memref<?x?xf32>) {
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

// What must not be interchanged: an element written at an index that
// depends on the sequential loop (a scan down the columns) ...
// CHECK-LABEL: func.func @column_scan
// CHECK:         scf.parallel
// CHECK:           scf.parallel
// CHECK:             scf.if
// CHECK:               scf.for
// CHECK:                 scf.for
func.func @column_scan(%a: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.for %i = %c1 to %m step %c1 {
    scf.parallel (%j) = (%c0) to (%n) step (%c1) {
      %p = arith.subi %i, %c1 : index
      %x = memref.load %a[%p, %j] : memref<?x?xf32>
      %v = memref.load %a[%i, %j] : memref<?x?xf32>
      %y = arith.addf %x, %v : f32
      memref.store %y, %a[%i, %j] : memref<?x?xf32>
      scf.reduce
    }
  }
  return
}

// -----

// ... an element read at another index than it is written (a neighbour
// another thread would update) ...
// CHECK-LABEL: func.func @neighbour
// CHECK:         scf.parallel (%{{.*}}) = (%{{.*}}) to (%c1{{.*}})
// CHECK:           scf.for
// CHECK:             scf.for
func.func @neighbour(%a: memref<?x?xf32>, %acc: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  %n1 = arith.subi %n, %c1 : index
  scf.for %i = %c0 to %m step %c1 {
    scf.parallel (%j) = (%c0) to (%n1) step (%c1) {
      %j1 = arith.addi %j, %c1 : index
      %x = memref.load %acc[%j1] : memref<?xf32>
      %v = memref.load %a[%i, %j] : memref<?x?xf32>
      %y = arith.addf %x, %v : f32
      memref.store %y, %acc[%j] : memref<?xf32>
      scf.reduce
    }
  }
  return
}

// -----

// ... and inner bounds that change with the sequential loop (a triangle).
// CHECK-LABEL: func.func @triangle
// CHECK:         scf.parallel (%{{.*}}) = (%{{.*}}) to (%c1{{.*}})
// CHECK:           scf.for
// CHECK:             scf.for
func.func @triangle(%a: memref<?x?xf32>, %acc: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  scf.for %i = %c0 to %m step %c1 {
    scf.parallel (%j) = (%c0) to (%i) step (%c1) {
      %x = memref.load %acc[%j] : memref<?xf32>
      %v = memref.load %a[%i, %j] : memref<?x?xf32>
      %y = arith.addf %x, %v : f32
      memref.store %y, %acc[%j] : memref<?xf32>
      scf.reduce
    }
  }
  return
}

// -----

// An element that is overwritten, not accumulated (the last row wins):
// interchanged, but the element stays in memory (a load and a store per
// row), as nothing combines it.
// CHECK-LABEL: func.func @last_row
// CHECK:         scf.parallel
// CHECK:           scf.parallel
// CHECK:             scf.for
// CHECK-NOT:           iter_args
// CHECK:               memref.load
// CHECK:               memref.store
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

// A reduction that keeps a middle dim ([N, C, HW] over N and HW: batch
// norm's statistics) arrives as a host loop over N around a parallel loop
// over C of row reductions over HW; on a GPU it would run in one thread.
// It becomes one parallel loop over C whose row is the N * HW elements in
// the original order: iteration k is (k / HW, k % HW).
// CHECK-LABEL: func.func @channel_sums
// CHECK-DAG:     %[[N:.*]] = memref.dim %{{.*}}, %c0
// CHECK-DAG:     %[[HW:.*]] = memref.dim %{{.*}}, %c2
// CHECK:         %[[NN:.*]] = arith.maxsi %[[N]]
// CHECK:         %[[HH:.*]] = arith.maxsi %[[HW]]
// CHECK:         %[[TOTAL:.*]] = arith.muli %[[NN]], %[[HH]]
// CHECK:         scf.parallel
// CHECK:           scf.parallel
// CHECK:             %[[C:.*]] = arith.addi
// CHECK:             scf.if
// CHECK:               %[[INIT:.*]] = memref.load %{{.*}}[%[[C]]] : memref<8xf64>
// CHECK:               %[[SUM:.*]] = scf.for %[[K:.*]] = %c0{{.*}} to %[[TOTAL]] step %c1{{.*}} iter_args(%{{.*}} = %[[INIT]])
// CHECK-DAG:             %[[R:.*]] = arith.remui %[[K]], %[[HH]]
// CHECK-DAG:             %[[Q:.*]] = arith.divui %[[K]], %[[HH]]
// CHECK:                 memref.load %{{.*}}[%[[Q]], %[[C]], %[[R]]]
// CHECK:               memref.store %[[SUM]], %{{.*}}[%[[C]]] : memref<8xf64>
// CHECK-NOT:     scf.for
// CHECK:         return
func.func @channel_sums(%x: memref<?x8x?xf32>, %acc: memref<8xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %n = memref.dim %x, %c0 : memref<?x8x?xf32>
  %hw = memref.dim %x, %c2 : memref<?x8x?xf32>
  scf.for %i = %c0 to %n step %c1 {
    scf.parallel (%c) = (%c0) to (%c8) step (%c1) {
      %init = memref.load %acc[%c] : memref<8xf64>
      %r = scf.for %k = %c0 to %hw step %c1 iter_args(%a = %init) -> (f64) {
        %v = memref.load %x[%i, %c, %k] : memref<?x8x?xf32>
        %e = arith.extf %v : f32 to f64
        %s = arith.addf %a, %e fastmath<reassoc> : f64
        scf.yield %s : f64
      }
      memref.store %r, %acc[%c] : memref<8xf64>
      scf.reduce
    }
  }
  return
}

// -----

// Not collapsed: an element that moves with the host loop (each %i its
// own row of results: one result per (i, c), not a reduction over i) ...
// CHECK-LABEL: func.func @element_moves_with_the_outer_loop
// CHECK:         scf.parallel (%{{.*}}) = (%{{.*}}) to (%c1{{.*}})
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               scf.for
func.func @element_moves_with_the_outer_loop(%x: memref<?x8x?xf32>,
                                             %acc: memref<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %n = memref.dim %x, %c0 : memref<?x8x?xf32>
  %hw = memref.dim %x, %c2 : memref<?x8x?xf32>
  scf.for %i = %c0 to %n step %c1 {
    scf.parallel (%c) = (%c0) to (%c8) step (%c1) {
      %init = memref.load %acc[%i, %c] : memref<?x8xf32>
      %r = scf.for %k = %c0 to %hw step %c1 iter_args(%a = %init) -> (f32) {
        %v = memref.load %x[%i, %c, %k] : memref<?x8x?xf32>
        %s = arith.addf %a, %v fastmath<reassoc> : f32
        scf.yield %s : f32
      }
      memref.store %r, %acc[%i, %c] : memref<?x8xf32>
      scf.reduce
    }
  }
  return
}

// -----

// ... and a row loop whose length changes with the host loop (a triangle).
// CHECK-LABEL: func.func @rows_grow_with_the_outer_loop
// CHECK:         scf.parallel (%{{.*}}) = (%{{.*}}) to (%c1{{.*}})
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               scf.for
func.func @rows_grow_with_the_outer_loop(%x: memref<?x8x?xf32>,
                                         %acc: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %n = memref.dim %x, %c0 : memref<?x8x?xf32>
  scf.for %i = %c0 to %n step %c1 {
    scf.parallel (%c) = (%c0) to (%c8) step (%c1) {
      %init = memref.load %acc[%c] : memref<8xf32>
      %r = scf.for %k = %c0 to %i step %c1 iter_args(%a = %init) -> (f32) {
        %v = memref.load %x[%i, %c, %k] : memref<?x8x?xf32>
        %s = arith.addf %a, %v fastmath<reassoc> : f32
        scf.yield %s : f32
      }
      memref.store %r, %acc[%c] : memref<8xf32>
      scf.reduce
    }
  }
  return
}
