// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{block-size=128})' | FileCheck %s
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{block-size=128 index32-limit=1000})' | FileCheck %s --check-prefix=LIMIT
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{block-size=128 index32-limit=0})' | FileCheck %s --check-prefix=OFF
// RUN: not disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{block-size=128 index32-limit=100})' 2>&1 | FileCheck %s --check-prefix=BAD

// An elementwise grid over two dims delinearises in 32 bits when every
// thread's linear index fits in i32 (the total at most 2^31 - 1 - 128 + 1):
// the host notes its choice and passes it as an index (1 or 0), and each
// grid (vector and scalar) branches on it uniformly: i32 division and
// remainder (the linear index truncated, the trip count too), widened back
// to index, or the index ones. No kernel of its own: the body is cloned
// once per grid.
// CHECK-LABEL: func.func @bias_exp
// CHECK:         %[[M:.*]] = arith.maxsi
// CHECK:         %[[N:.*]] = arith.maxsi
// CHECK:         %[[TOTAL:.*]] = arith.muli %[[M]], %[[N]] : index
// CHECK:         %[[MAX:.*]] = arith.constant 2147483520 : index
// CHECK:         %[[FITS:.*]] = arith.cmpi ule, %[[TOTAL]], %[[MAX]] : index
// CHECK:         scf.if %[[FITS]] {
// CHECK-NEXT:      arith.constant 7 : i64
// CHECK-NEXT:      func.call @disc_ral_note_variant
// CHECK-NEXT:    } else {
// CHECK-NEXT:      arith.constant 8 : i64
// CHECK-NEXT:      func.call @disc_ral_note_variant
// CHECK-NEXT:    }
// CHECK:         %[[FLAG:.*]] = arith.select %[[FITS]], %{{.*}}, %{{.*}} : index
// CHECK:         scf.if %{{.*}} {
// CHECK:           func.call @disc_ral_note_variant(%c2_i64)
// CHECK:           scf.parallel
// CHECK:             scf.parallel
// CHECK:               scf.if
// CHECK:                 %[[NARROW:.*]] = arith.cmpi ne, %[[FLAG]], %{{.*}} : index
// CHECK:                 scf.if %[[NARROW]] -> (index, index) {
// CHECK:                   arith.remui %{{.*}}, %{{.*}} : i32
// CHECK:                   arith.divui %{{.*}}, %{{.*}} : i32
// CHECK:                 } else {
// CHECK:                   arith.remui %{{.*}}, %{{.*}} : index
// CHECK:                 }
// CHECK:                 vector.load
// CHECK:         } else {
// CHECK:           func.call @disc_ral_note_variant(%c3_i64)
// CHECK-NOT:       arith.muli %[[M]], %[[N]]
// CHECK:           scf.parallel
// CHECK:             scf.parallel
// CHECK:               %[[LINEAR:.*]] = arith.addi
// CHECK:               %[[IN:.*]] = arith.cmpi ult, %[[LINEAR]], %[[TOTAL]] : index
// CHECK:               scf.if %[[IN]] {
// CHECK:                 %[[NARROW:.*]] = arith.cmpi ne, %[[FLAG]], %{{.*}} : index
// CHECK:                 %[[IVS:.*]]:2 = scf.if %[[NARROW]] -> (index, index) {
// CHECK:                   %[[LINEAR32:.*]] = arith.index_castui %[[LINEAR]] : index to i32
// CHECK:                   %[[N32:.*]] = arith.index_castui %[[N]] : index to i32
// CHECK:                   %[[COL32:.*]] = arith.remui %[[LINEAR32]], %[[N32]] : i32
// CHECK:                   %[[ROW32:.*]] = arith.divui %[[LINEAR32]], %[[N32]] : i32
// CHECK:                   %[[COL:.*]] = arith.index_castui %[[COL32]] : i32 to index
// CHECK:                   %[[ROW:.*]] = arith.index_castui %[[ROW32]] : i32 to index
// CHECK:                   scf.yield %[[ROW]], %[[COL]] : index, index
// CHECK:                 } else {
// CHECK:                   %[[COL64:.*]] = arith.remui %[[LINEAR]], %[[N]] : index
// CHECK:                   %[[ROW64:.*]] = arith.divui %[[LINEAR]], %[[N]] : index
// CHECK:                   scf.yield %[[ROW64]], %[[COL64]] : index, index
// CHECK:                 }
// CHECK:                 memref.load %arg0[%[[IVS]]#0, %[[IVS]]#1]
// CHECK:                 memref.load %arg1[%[[IVS]]#1]
// CHECK:                 memref.store %{{.*}}, %arg2[%[[IVS]]#0, %[[IVS]]#1]
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
