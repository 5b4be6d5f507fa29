// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{block-size=128 index32-limit=0})' | FileCheck %s
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{block-size=128 vectorize=false index32-limit=0})' | FileCheck %s --check-prefix=OFF

// Bias + exp: the host picks, per call, four iterations per thread with
// vector accesses (innermost extent a multiple of 4, every vectorised
// buffer 16-byte aligned and, above rank 1, rows a multiple of 4), else
// the scalar grid. The rank-1 bias, indexed by the innermost variable, is
// vectorised too.
// CHECK-LABEL: func.func @bias_exp
// CHECK-SAME:    (%[[A:.*]]: memref<?x?xf32>, %[[BIAS:.*]]: memref<?xf32>, %[[B:.*]]: memref<?x?xf32>)
// CHECK:         arith.maxsi
// CHECK:         %[[N:.*]] = arith.maxsi
// CHECK:         %[[C4:.*]] = arith.constant 4 : index
// CHECK:         arith.remui %[[N]], %[[C4]]
// CHECK:         %[[PA:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK:         %[[C16:.*]] = arith.constant 16 : index
// CHECK:         arith.remui %[[PA]], %[[C16]]
// CHECK:         %[[PBIAS:.*]] = memref.extract_aligned_pointer_as_index %[[BIAS]]
// CHECK:         %[[PB:.*]] = memref.extract_aligned_pointer_as_index %[[B]]
// CHECK:         memref.dim %[[B]]
// CHECK:         %[[OK:.*]] = arith.andi
// CHECK-NEXT:    scf.if %[[OK]] {
// CHECK:           func.call @disc_ral_note_variant(%c2_i64)
// CHECK:           %[[GROUPS:.*]] = arith.divui %[[N]], %{{.*}}
// CHECK:           scf.parallel
// CHECK:             scf.parallel
// CHECK:               scf.if
// CHECK:                 %[[G:.*]] = arith.remui %{{.*}}, %[[GROUPS]]
// CHECK:                 %[[ROW:.*]] = arith.divui %{{.*}}, %[[GROUPS]]
// CHECK:                 %[[COL:.*]] = arith.muli %[[G]], %{{.*}}
// CHECK:                 %[[VA:.*]] = vector.load %[[A]][%[[ROW]], %[[COL]]] {alignment = 16 : i64} : memref<?x?xf32>, vector<4xf32>
// CHECK:                 %[[VBIAS:.*]] = vector.load %[[BIAS]][%[[COL]]] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
// CHECK-COUNT-4:         math.exp
// CHECK:                 %[[OUT:.*]] = vector.from_elements
// CHECK:                 vector.store %[[OUT]], %[[B]][%[[ROW]], %[[COL]]] {alignment = 16 : i64}
// CHECK-NOT:             memref.load
// CHECK:         } else {
// CHECK:           func.call @disc_ral_note_variant(%c3_i64)
// CHECK:           scf.parallel
// CHECK:             scf.parallel
// CHECK:               memref.load %[[A]]
// CHECK:               memref.load %[[BIAS]]
// CHECK:               math.exp
// CHECK:               memref.store
// CHECK-NOT:           vector.
// CHECK:         } {disc.row_variants}
// OFF-LABEL: func.func @bias_exp
// OFF-NOT:     vector.
// OFF-NOT:     disc_ral_note_variant
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

// f16 elements: four lanes are 8 bytes, the alignment checked and claimed.
// A load whose last index is not the innermost variable (a transposed
// read) stays scalar, once per lane; the store is still a vector.
// CHECK-LABEL: func.func @transposed_f16
// CHECK:         %[[C8:.*]] = arith.constant 8 : index
// CHECK:         arith.remui %{{.*}}, %[[C8]]
// CHECK:         scf.if
// CHECK-COUNT-4:   memref.load %arg0
// CHECK:           vector.store {{.*}} {alignment = 8 : i64} : memref<?x?xf16>, vector<4xf16>
// CHECK:         } else {
// CHECK-NOT:       vector.
// CHECK:         } {disc.row_variants}
func.func @transposed_f16(%a: memref<?x?xf16>, %b: memref<?x?xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %b, %c0 : memref<?x?xf16>
  %n = memref.dim %b, %c1 : memref<?x?xf16>
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %v = memref.load %a[%j, %i] : memref<?x?xf16>
    memref.store %v, %b[%i, %j] : memref<?x?xf16>
    scf.reduce
  }
  return
}

// -----

// What must NOT get a vector variant: a body with a region; a static
// innermost extent that is not a multiple of 4; a buffer the body both
// reads and writes (the variant reorders one thread's accesses); strided
// and i1 buffers; a non-zero innermost lower bound.
// CHECK-LABEL: func.func @not_vectorized
// CHECK-NOT:     vector.
// CHECK-NOT:     disc.row_variants
// CHECK-NOT:     disc_ral_note_variant
func.func @not_vectorized(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x6xf32>,
                          %s: memref<?x?xf32, strided<[?, 1], offset: ?>>,
                          %p: memref<?x?xi1>, %q: memref<?x?xi1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<?x?xf32>
    %pos = arith.cmpf ogt, %v, %zero : f32
    scf.if %pos {
      memref.store %v, %b[%i, %j] : memref<?x?xf32>
    }
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %c6) step (%c1, %c1) {
    %v = memref.load %c[%i, %j] : memref<?x6xf32>
    memref.store %v, %b[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<?x?xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %a[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %v = memref.load %s[%i, %j] : memref<?x?xf32, strided<[?, 1], offset: ?>>
    %x = memref.load %p[%i, %j] : memref<?x?xi1>
    memref.store %x, %q[%i, %j] : memref<?x?xi1>
    memref.store %v, %s[%i, %j] : memref<?x?xf32, strided<[?, 1], offset: ?>>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c1) to (%m, %n) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<?x?xf32>
    memref.store %v, %b[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return
}
