// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{block-size=128})' | FileCheck %s
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{block-size=128 index32-limit=1000})' | FileCheck %s --check-prefix=LIMIT
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{block-size=128 index32-limit=0})' | FileCheck %s --check-prefix=OFF
// RUN: not disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{block-size=128 index32-limit=100})' 2>&1 | FileCheck %s --check-prefix=BAD

// An elementwise grid over two dims gets a 32-bit index variant, taken per
// call when every thread's linear index fits in i32: the total at most
// 2^31 - 1 - 128 + 1. Its linear index, guard, division and remainder are
// i32 (no overflow: the host checked), its induction variables widened
// back to index for the body. With the vector variant: the 32-bit branch
// holds the vector/scalar choice, the 64-bit branch the scalar grid only.
// CHECK-LABEL: func.func @bias_exp
// CHECK:         %[[M:.*]] = arith.maxsi
// CHECK:         %[[N:.*]] = arith.maxsi
// CHECK:         %[[TOTAL:.*]] = arith.muli %[[M]], %[[N]] : index
// CHECK:         %[[MAX:.*]] = arith.constant 2147483520 : index
// CHECK:         %[[FITS:.*]] = arith.cmpi ule, %[[TOTAL]], %[[MAX]] : index
// CHECK:         scf.if %[[FITS]] {
// CHECK:           func.call @disc_ral_note_variant(%c7_i64)
// CHECK:           scf.if %{{.*}} {
// CHECK:             func.call @disc_ral_note_variant(%c2_i64)
// CHECK:             scf.parallel
// CHECK:               scf.parallel
// CHECK:                 arith.muli %{{.*}}, %{{.*}} overflow<nsw, nuw> : i32
// CHECK:                 arith.addi %{{.*}}, %{{.*}} overflow<nsw, nuw> : i32
// CHECK:                 scf.if
// CHECK:                   arith.remui %{{.*}}, %{{.*}} : i32
// CHECK:                   arith.divui %{{.*}}, %{{.*}} : i32
// CHECK:                   vector.load
// CHECK:           } else {
// CHECK:             func.call @disc_ral_note_variant(%c3_i64)
// CHECK:             %[[GRID:.*]] = arith.muli %[[M]], %[[N]] : index
// CHECK:             scf.parallel
// CHECK:               scf.parallel
// CHECK:                 %[[BLOCK32:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK:                 %[[THREAD32:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK:                 %[[TOTAL32:.*]] = arith.index_castui %[[GRID]] : index to i32
// CHECK:                 %[[START:.*]] = arith.muli %[[BLOCK32]], %c128_i32 overflow<nsw, nuw> : i32
// CHECK:                 %[[LINEAR:.*]] = arith.addi %[[START]], %[[THREAD32]] overflow<nsw, nuw> : i32
// CHECK:                 %[[IN:.*]] = arith.cmpi ult, %[[LINEAR]], %[[TOTAL32]] : i32
// CHECK:                 scf.if %[[IN]] {
// CHECK:                   %[[N32:.*]] = arith.index_castui %[[N]] : index to i32
// CHECK:                   %[[COL32:.*]] = arith.remui %[[LINEAR]], %[[N32]] : i32
// CHECK:                   %[[ROW32:.*]] = arith.divui %[[LINEAR]], %[[N32]] : i32
// CHECK:                   %[[COL:.*]] = arith.index_castui %[[COL32]] : i32 to index
// CHECK:                   %[[ROW:.*]] = arith.index_castui %[[ROW32]] : i32 to index
// CHECK:                   memref.load %arg0[%[[ROW]], %[[COL]]]
// CHECK:                   memref.load %arg1[%[[COL]]]
// CHECK:                   memref.store %{{.*}}, %arg2[%[[ROW]], %[[COL]]]
// CHECK:           } {disc.row_variants}
// CHECK:         } else {
// CHECK:           func.call @disc_ral_note_variant(%c8_i64)
// CHECK:           func.call @disc_ral_note_variant(%c3_i64)
// CHECK-NOT:       vector.
// CHECK-NOT:       : i32
// CHECK:           arith.remui %{{.*}}, %[[N]] : index
// CHECK:           arith.divui %{{.*}}, %[[N]] : index
// CHECK:         } {disc.row_variants}
// LIMIT-LABEL: func.func @bias_exp
// LIMIT:         arith.constant 873 : index
// LIMIT:         disc_ral_note_variant(%c7_i64)
// OFF-LABEL: func.func @bias_exp
// OFF-NOT:     disc_ral_note_variant(%c7_i64)
// OFF-NOT:     disc_ral_note_variant(%c8_i64)
// OFF-NOT:     : i32
// BAD: index32-limit must be 0 or in [block-size, 2147483647], got 100
func.func @bias_exp(%a: memref<?x?xf32>, %bias: memref<?xf32>, %b: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<?x?xf32>
    %w = memref.load %bias[%j] : memref<?xf32>
    %s = arith.addf %v, %w : f32
    %e = math.exp %s : f32
    memref.store %e, %b[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return
}

// -----

// A grid over one dim divides nothing: no 32-bit variant.
// CHECK-LABEL: func.func @one_dim
// CHECK-NOT:     disc_ral_note_variant(%c7_i64)
// CHECK-NOT:     : i32
// CHECK:         return
func.func @one_dim(%a: memref<?xf32>, %b: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %a[%i] : memref<?xf32>
    %e = math.exp %v : f32
    memref.store %e, %b[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// Nor does a row kernel (its own variants: thread, warp, block).
// CHECK-LABEL: func.func @row_max
// CHECK-NOT:     disc_ral_note_variant(%c7_i64)
// CHECK-NOT:     disc_ral_note_variant(%c8_i64)
// CHECK:         return
func.func @row_max(%a: memref<?x?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %init = arith.constant 0xFF800000 : f32
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %init) -> (f32) {
      %v = memref.load %a[%i, %j] : memref<?x?xf32>
      %x = arith.maximumf %acc, %v : f32
      scf.yield %x : f32
    }
    memref.store %r, %out[%i] : memref<?xf32>
    scf.reduce
  }
  return
}
