// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(disc-hoist-loop-temporaries))' | FileCheck %s

// A stitch row's temporary (the row's length, dynamic): one byte buffer of
// rows x ceil(bytes / 64) * 64 before the row loop, marked; each row views
// its slice with the temporary's type, and nothing else in the loop
// changes.
// CHECK-LABEL: func.func @row_temporary
// CHECK-SAME:    (%[[A:.*]]: memref<?x?xf32>, %[[OUT:.*]]: memref<?x?xf32>)
// CHECK:         %[[ROWS:.*]] = memref.dim %[[A]], %c0
// CHECK:         %[[N:.*]] = memref.dim %[[A]], %c1
// CHECK:         %[[BYTES:.*]] = arith.muli %c4, %[[N]]
// CHECK:         %[[UNITS:.*]] = arith.ceildivui %[[BYTES]], %c64
// CHECK:         %[[SLICE:.*]] = arith.muli %[[UNITS]], %c64
// CHECK:         %[[COUNT:.*]] = arith.maxsi %[[ROWS]], %c0
// CHECK:         %[[TOTAL:.*]] = arith.muli %[[COUNT]], %[[SLICE]]
// CHECK:         %[[BUF:.*]] = memref.alloc(%[[TOTAL]]) {alignment = 64 : i64, disc.loop_temporaries} : memref<?xi8>
// CHECK:         scf.parallel (%[[ROW:.*]]) =
// CHECK-NOT:       memref.alloc
// CHECK:           %[[SHIFT:.*]] = arith.muli %[[ROW]], %[[SLICE]]
// CHECK:           %[[T:.*]] = memref.view %[[BUF]][%[[SHIFT]]][%[[N]]] : memref<?xi8> to memref<?xf32>
// CHECK:           memref.store %{{.*}}, %[[T]][%{{.*}}]
// CHECK:           memref.load %[[T]][%{{.*}}]
func.func @row_temporary(%a: memref<?x?xf32>, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %rows = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%r) = (%c0) to (%rows) step (%c1) {
    %t = memref.alloc(%n) {alignment = 64 : i64} : memref<?xf32>
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      %x = memref.load %a[%r, %i] : memref<?x?xf32>
      %e = math.exp %x : f32
      memref.store %e, %t[%i] : memref<?xf32>
      scf.reduce
    }
    %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
      %e = memref.load %t[%i] : memref<?xf32>
      %y = arith.addf %acc, %e : f32
      scf.yield %y : f32
    }
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      %e = memref.load %t[%i] : memref<?xf32>
      %y = arith.divf %e, %s : f32
      memref.store %y, %out[%r, %i] : memref<?x?xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// A two-dim row loop with a lower bound and a step: the slice index is
// ((i - lb) / step) * count_j + j, counts computed on the host; a static
// temporary of 3 x 5 x i8 (15 bytes) takes a 64-byte slice.
// CHECK-LABEL: func.func @two_dim_loop_with_bounds
// CHECK-SAME:    (%{{.*}}: memref<?x?x3x5xi8>, %[[LB:.*]]: index, %[[UB:.*]]: index, %[[STEP:.*]]: index, %[[M:.*]]: index)
// CHECK:         %[[C64:.*]] = arith.constant 64 : index
// CHECK:         %[[EXT:.*]] = arith.subi %[[UB]], %[[LB]]
// CHECK:         %[[POS:.*]] = arith.maxsi %[[EXT]]
// CHECK:         %[[CI:.*]] = arith.ceildivui %[[POS]], %[[STEP]]
// CHECK:         %[[CJ:.*]] = arith.maxsi %[[M]]
// CHECK:         %[[SLICES:.*]] = arith.muli %[[CI]], %[[CJ]]
// CHECK:         %[[TOTAL:.*]] = arith.muli %[[SLICES]], %[[C64]]
// CHECK:         %[[BUF:.*]] = memref.alloc(%[[TOTAL]])
// CHECK:         scf.parallel (%[[I:.*]], %[[J:.*]]) =
// CHECK:           %[[D:.*]] = arith.subi %[[I]], %[[LB]]
// CHECK:           %[[Q:.*]] = arith.divui %[[D]], %[[STEP]]
// CHECK:           %[[QM:.*]] = arith.muli %[[Q]], %[[CJ]]
// CHECK:           %[[LIN:.*]] = arith.addi %[[QM]], %[[J]]
// CHECK:           %[[SHIFT:.*]] = arith.muli %[[LIN]], %[[C64]]
// CHECK:           memref.view %[[BUF]][%[[SHIFT]]][] : memref<?xi8> to memref<3x5xi8>
func.func @two_dim_loop_with_bounds(%a: memref<?x?x3x5xi8>, %lb: index, %ub: index, %step: index, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  scf.parallel (%i, %j) = (%lb, %c0) to (%ub, %m) step (%step, %c1) {
    %t = memref.alloc() : memref<3x5xi8>
    scf.for %p = %c0 to %c3 step %c1 {
      scf.for %q = %c0 to %c5 step %c1 {
        %x = memref.load %a[%i, %j, %p, %q] : memref<?x?x3x5xi8>
        memref.store %x, %t[%p, %q] : memref<3x5xi8>
      }
    }
    scf.for %p = %c0 to %c3 step %c1 {
      %x = memref.load %t[%p, %c0] : memref<3x5xi8>
      memref.store %x, %a[%i, %j, %p, %c1] : memref<?x?x3x5xi8>
    }
    scf.reduce
  }
  return
}

// -----

// Must NOT hoist: a size computed inside the loop (the row's own length),
// a temporary that is freed in the loop (not a loop temporary), one
// returned, and one at the function's top level.
// CHECK-LABEL: func.func @not_hoisted
// CHECK-NOT:     disc.loop_temporaries
// CHECK:         scf.parallel
// CHECK:           memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:           memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:           memref.dealloc
// CHECK:         memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK-NOT:     memref.view
func.func @not_hoisted(%a: memref<?x?xf32>, %lens: memref<?xindex>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%r) = (%c0) to (%rows) step (%c1) {
    %len = memref.load %lens[%r] : memref<?xindex>
    %t = memref.alloc(%len) : memref<?xf32>
    %x = memref.load %a[%r, %c0] : memref<?x?xf32>
    memref.store %x, %t[%c0] : memref<?xf32>
    %y = memref.load %t[%c0] : memref<?xf32>
    memref.store %y, %a[%r, %c1] : memref<?x?xf32>
    %u = memref.alloc(%n) : memref<?xf32>
    memref.store %x, %u[%c0] : memref<?xf32>
    memref.dealloc %u : memref<?xf32>
    scf.reduce
  }
  %top = memref.alloc(%n) : memref<?xf32>
  return %top : memref<?xf32>
}
