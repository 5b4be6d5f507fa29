// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{block-size=128 index32-limit=0})' | FileCheck %s
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{block-size=128 vectorize=false index32-limit=0})' | FileCheck %s --check-prefix=OFF
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{block-size=128 index32-limit=0 log=1})' 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{block-size=128 index32-limit=0 linear-lanes=false})' | FileCheck %s --check-prefix=ROWS

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
// read) stays scalar, once per lane; the store is at the nest's induction
// variables and the innermost extent is dynamic, so the lanes are linear
// iterations (noted as 13): the store a vector at the first lane's offset
// of a 1-d view, the transposed loads at each lane's own (carried) indices.
// CHECK-LABEL: func.func @transposed_f16
// CHECK:         %[[C8:.*]] = arith.constant 8 : index
// CHECK:         arith.remui %{{.*}}, %[[C8]]
// CHECK:         scf.if
// CHECK:           func.call @disc_ral_note_variant(%c13_i64)
// CHECK:           %[[FLAT:.*]] = memref.collapse_shape %arg1 {{\[}}[0, 1]]
// CHECK-COUNT-4:   memref.load %arg0
// CHECK:           vector.store {{.*}}, %[[FLAT]][%{{.*}}] {alignment = 8 : i64} : memref<?xf16>, vector<4xf16>
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

// Linear lanes (a static innermost extent of 7, not a multiple of 4): the
// host checks the total (m * 7) and each planned buffer's alignment, not
// its rows; a thread runs linear iterations 4t .. 4t+3 of the nest, which
// may cross rows. The accesses at the nest's induction variables become
// vector accesses of 1-d views at 4t; the per-row scale stays a scalar
// load per lane, at indices carried from lane to lane (compare, select:
// no division past the first lane's).
// Without linear lanes (linear-lanes=false), no variant: rows of 7.
// ROWS-LABEL: func.func @linear_lanes_static_odd_rows
// ROWS-NOT:     call @disc_ral_note_variant
// ROWS-NOT:     vector.
// ROWS-LABEL: func.func @linear_lanes_dynamic
// ROWS:         func.call @disc_ral_note_variant(%c2_i64)
// ROWS-NOT:     collapse_shape
// ROWS:         } else {
// CHECK-LABEL: func.func @linear_lanes_static_odd_rows
// CHECK-SAME:    (%[[A:.*]]: memref<?x7xf32>, %[[W:.*]]: memref<?xf32>, %[[B:.*]]: memref<?x7xf32>)
// CHECK:         %[[TOTAL:.*]] = arith.muli %{{.*}}, %c7
// CHECK:         arith.remui %[[TOTAL]], %c4
// CHECK:         memref.extract_aligned_pointer_as_index %[[A]]
// CHECK:         memref.extract_aligned_pointer_as_index %[[B]]
// CHECK-NOT:     memref.extract_aligned_pointer_as_index %[[W]]
// CHECK:         scf.if
// CHECK:           func.call @disc_ral_note_variant(%c13_i64)
// CHECK:           %[[GROUPS:.*]] = arith.divui %{{.*}}, %c4
// CHECK:           %[[VA:.*]] = memref.collapse_shape %[[A]] {{\[}}[0, 1]] : memref<?x7xf32> into memref<?xf32>
// CHECK:           %[[VB:.*]] = memref.collapse_shape %[[B]] {{\[}}[0, 1]] : memref<?x7xf32> into memref<?xf32>
// CHECK:           scf.parallel
// CHECK:             scf.parallel
// CHECK:               %[[T:.*]] = arith.addi
// CHECK:               arith.cmpi ult, %[[T]], %[[GROUPS]]
// CHECK:               scf.if
// CHECK:                 %[[FIRST:.*]] = arith.muli %[[T]], %c4
// CHECK:                 arith.remui %[[FIRST]], %c7
// CHECK:                 arith.divui %[[FIRST]], %c7
// CHECK-NOT:             arith.divui
// CHECK:                 arith.cmpi eq, %{{.*}}, %c7
// CHECK:                 arith.select
// CHECK:                 %[[V:.*]] = vector.load %[[VA]][%[[FIRST]]] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
// CHECK-COUNT-4:         memref.load %[[W]]
// CHECK:                 vector.store %{{.*}}, %[[VB]][%[[FIRST]]] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
// CHECK-NOT:             memref.load %[[A]]
// CHECK:         } else {
// CHECK:           func.call @disc_ral_note_variant(%c3_i64)
// CHECK-NOT:       vector.
// CHECK:         } {disc.row_variants}
func.func @linear_lanes_static_odd_rows(%a: memref<?x7xf32>, %w: memref<?xf32>, %b: memref<?x7xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %m = memref.dim %a, %c0 : memref<?x7xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %c7) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<?x7xf32>
    %s = memref.load %w[%i] : memref<?xf32>
    %p = arith.mulf %v, %s : f32
    memref.store %p, %b[%i, %j] : memref<?x7xf32>
    scf.reduce
  }
  return
}

// -----

// Linear lanes with a dynamic innermost extent (every planned access at
// the nest's induction variables): past the first dim, each planned
// buffer's extents must be the nest's trip counts (a read of a wider
// buffer, as of a slice, takes the scalar grid), checked on the host.
// CHECK-LABEL: func.func @linear_lanes_dynamic
// CHECK-SAME:    (%[[A:.*]]: memref<?x?x?xf32>, %[[B:.*]]: memref<?x?x?xf32>)
// CHECK:         arith.maxsi
// CHECK:         %[[N:.*]] = arith.maxsi
// CHECK:         %[[K:.*]] = arith.maxsi
// CHECK:         %[[AN:.*]] = memref.dim %[[A]], %c1
// CHECK:         arith.cmpi eq, %[[AN]], %[[N]]
// CHECK:         %[[AK:.*]] = memref.dim %[[A]], %c2
// CHECK:         arith.cmpi eq, %[[AK]], %[[K]]
// CHECK:         %[[BN:.*]] = memref.dim %[[B]], %c1
// CHECK:         arith.cmpi eq, %[[BN]], %[[N]]
// CHECK:         scf.if
// CHECK:           func.call @disc_ral_note_variant(%c13_i64)
// CHECK:           memref.collapse_shape %[[A]] {{\[}}[0, 1, 2]]
// CHECK:           memref.collapse_shape %[[B]] {{\[}}[0, 1, 2]]
// CHECK:           vector.load
// CHECK-COUNT-4:   math.tanh
// CHECK:           vector.store
// CHECK:         } else {
func.func @linear_lanes_dynamic(%a: memref<?x?x?xf32>, %b: memref<?x?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %m = memref.dim %b, %c0 : memref<?x?x?xf32>
  %n = memref.dim %b, %c1 : memref<?x?x?xf32>
  %k = memref.dim %b, %c2 : memref<?x?x?xf32>
  scf.parallel (%i, %j, %l) = (%c0, %c0, %c0) to (%m, %n, %k) step (%c1, %c1, %c1) {
    %v = memref.load %a[%i, %j, %l] : memref<?x?x?xf32>
    %t = math.tanh %v : f32
    memref.store %t, %b[%i, %j, %l] : memref<?x?x?xf32>
    scf.reduce
  }
  return
}

// -----

// What must NOT get a vector variant: a body with a region; a static
// innermost extent that is not a multiple of 4 in a nest that cannot have
// linear lanes (an outer dim from 1); a buffer the body both reads and
// writes (the variant reorders one thread's accesses); strided and i1
// buffers; a non-zero innermost lower bound.
// With log=1 each such grid says why (DISC_LOG=fusion), in order.
// LOG-NOT: has no vector variant
// LOG: the grid at {{.*}} has no vector variant (its body has an op with regions)
// LOG-NEXT: the grid at {{.*}} has no vector variant (its static innermost extent is not a multiple of 4 and it cannot have linear lanes)
// LOG-NEXT: the grid at {{.*}} has no vector variant (no load or store of it can be a vector access)
// LOG-NEXT: the grid at {{.*}} has no vector variant (no load or store of it can be a vector access)
// LOG-NEXT: the grid at {{.*}} has no vector variant (its innermost dim does not start at 0 with step 1)
// LOG-NOT: has no vector variant
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
  scf.parallel (%i, %j) = (%c1, %c0) to (%m, %c6) step (%c1, %c1) {
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
