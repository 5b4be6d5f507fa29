// RUN: disc-opt %s -disc-parallel-column-blocks -split-input-file | FileCheck %s

// A per-channel sum over batch and space ([N, C, HW] over N and HW, batch
// norm's backward): the batch loop around the channel loop becomes a
// parallel loop over channel blocks (max(16, ceil(c / 8) rounded up to
// 16) channels), each walking every batch over its block's channels.
// CHECK-LABEL: func.func private @channel_sum
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK: %[[SHARE:.*]] = arith.ceildivui %arg2, %[[C8]]
// CHECK: %[[LINES:.*]] = arith.ceildivui %[[SHARE]], %[[C16]]
// CHECK: %[[ROUND:.*]] = arith.muli %[[LINES]], %[[C16]]
// CHECK: %[[BLOCK:.*]] = arith.maxui %[[C16]], %[[ROUND]]
// CHECK: %[[NB:.*]] = arith.ceildivui %arg2, %[[BLOCK]]
// CHECK: scf.parallel (%[[B:.*]]) = (%{{.*}}) to (%[[NB]])
// CHECK:   %[[BEGIN:.*]] = arith.muli %[[B]], %[[BLOCK]]
// CHECK:   %[[END:.*]] = arith.minui %arg2, {{.*}}
// CHECK:   scf.for %[[N:.*]] = %{{.*}} to %arg1
// CHECK:     scf.for %[[C:.*]] = %[[BEGIN]] to %[[END]]
// CHECK:       scf.for %[[HW:.*]] =
// CHECK:         memref.load %arg4[%[[N]], %[[C]], %[[HW]]]
// CHECK:         memref.load %arg0[%[[C]]]
// CHECK:         memref.store %{{.*}}, %arg0[%[[C]]]
// CHECK-NOT: scf.parallel
// CHECK: return
func.func private @channel_sum(%acc: memref<?xf32>, %batch: index, %channels: index, %space: index, %x: memref<?x?x?xf32>) attributes {disc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %n = %c0 to %batch step %c1 {
    scf.parallel (%c) = (%c0) to (%channels) step (%c1) {
      scf.for %hw = %c0 to %space step %c1 {
        %0 = memref.load %x[%n, %c, %hw] : memref<?x?x?xf32>
        %1 = memref.load %acc[%c] : memref<?xf32>
        %2 = arith.addf %1, %0 : f32
        memref.store %2, %acc[%c] : memref<?xf32>
      }
      scf.reduce
    }
  }
  return
}

// -----

// Not interchanged: a plain column sum (one element per column and row:
// blocks would make each thread read part of every row); an iteration
// reading another column of what the nest writes (row r's column c
// depends on row r-1's column c+1); a store that is not indexed by the
// column; a nest in a function that is not a kernel; a row loop that
// carries a value.
// CHECK-LABEL: func.func private @column_sum
// CHECK: scf.for
// CHECK-NEXT: scf.parallel
func.func private @column_sum(%acc: memref<?xf64>, %rows: index, %cols: index, %x: memref<?x?xf32>) attributes {disc.kernel} {
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

// CHECK-LABEL: func.func private @not_column_private
// CHECK: scf.for %{{.*}} = %c0 to %arg1
// CHECK-NEXT: scf.parallel
// CHECK: scf.for %{{.*}} = %c0 to %arg1
// CHECK-NEXT: scf.parallel
// CHECK-NOT: scf.parallel
// CHECK: return
func.func private @not_column_private(%acc: memref<?xf32>, %rows: index, %cols: index, %one: memref<1xf32>) attributes {disc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %r = %c0 to %rows step %c1 {
    scf.parallel (%c) = (%c0) to (%cols) step (%c1) {
      scf.for %j = %c0 to %c1 step %c1 {
        %n = arith.addi %c, %c1 : index
        %0 = memref.load %acc[%n] : memref<?xf32>
        memref.store %0, %acc[%c] : memref<?xf32>
      }
      scf.reduce
    }
  }
  scf.for %r = %c0 to %rows step %c1 {
    scf.parallel (%c) = (%c0) to (%cols) step (%c1) {
      scf.for %j = %c0 to %c1 step %c1 {
        %0 = memref.load %acc[%c] : memref<?xf32>
        memref.store %0, %one[%c0] : memref<1xf32>
      }
      scf.reduce
    }
  }
  return
}

// CHECK-LABEL: func.func @not_a_kernel
// CHECK: scf.for
// CHECK-NEXT: scf.parallel
func.func @not_a_kernel(%acc: memref<?xf32>, %rows: index, %cols: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %r = %c0 to %rows step %c1 {
    scf.parallel (%c) = (%c0) to (%cols) step (%c1) {
      scf.for %j = %c0 to %c1 step %c1 {
        %0 = memref.load %acc[%c] : memref<?xf32>
        memref.store %0, %acc[%c] : memref<?xf32>
      }
      scf.reduce
    }
  }
  return
}

// CHECK-LABEL: func.func private @carried_value
// CHECK: scf.for {{.*}} iter_args
// CHECK-NEXT: scf.parallel
func.func private @carried_value(%acc: memref<?xf32>, %rows: index, %cols: index) -> index attributes {disc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = scf.for %r = %c0 to %rows step %c1 iter_args(%k = %c0) -> (index) {
    scf.parallel (%c) = (%c0) to (%cols) step (%c1) {
      scf.for %j = %c0 to %c1 step %c1 {
        %0 = memref.load %acc[%c] : memref<?xf32>
        memref.store %0, %acc[%c] : memref<?xf32>
      }
      scf.reduce
    }
    %k1 = arith.addi %k, %c1 : index
    scf.yield %k1 : index
  }
  return %n : index
}
