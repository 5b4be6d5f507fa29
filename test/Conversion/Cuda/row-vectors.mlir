// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{row-variant=block row-cache-bytes=0 row-unroll=1 index32-limit=0},canonicalize,cse)' | FileCheck %s
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{row-variant=warp row-cache-bytes=0 row-unroll=1 index32-limit=0},canonicalize,cse)' | FileCheck %s --check-prefix=WARP
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{row-variant=auto row-cache-bytes=0 row-unroll=1 index32-limit=0})' | FileCheck %s --check-prefix=AUTO
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{row-variant=block row-cache-bytes=0 row-vectors=false index32-limit=0})' | FileCheck %s --check-prefix=OFF
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{row-variant=thread row-cache-bytes=0 index32-limit=0})' | FileCheck %s --check-prefix=OFF

// Vector phases of row kernels (RowKernels.h, RowVectorPlan): in the block
// and warp variants each planned phase branches on a flag the host computed
// per call; its vector path runs 4 consecutive elements per thread and step
// with vector loads and stores, its scalar path the usual strided loop.

// A softmax over row views (subview, then collapse_shape, of the buffers):
// a max, an exp stage, a sum and an in-place divide, all vectorised.
// The host: every trip count a multiple of 4, each buffer's address a
// multiple of 16 bytes and its last dim a multiple of 4; the choice noted
// (9: vector, 10: scalar) and passed to the kernel as an index.
// CHECK-LABEL: func.func @softmax_views
// CHECK-SAME:    (%[[A:.*]]: memref<?x?x?xf32>, %[[OUT:.*]]: memref<?x?x?xf32>)
// CHECK:         %[[N:.*]] = memref.dim %[[A]], %c2
// CHECK:         %[[REM:.*]] = arith.remui %[[N]], %c4
// CHECK:         %[[LEN4:.*]] = arith.cmpi eq, %[[REM]], %c0
// CHECK:         %[[PA:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK:         arith.remui %[[PA]], %c16
// CHECK:         %[[PO:.*]] = memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK:         arith.remui %[[PO]], %c16
// CHECK:         %[[NO:.*]] = memref.dim %[[OUT]], %c2
// CHECK:         arith.remui %[[NO]], %c4
// CHECK:         %[[OK:.*]] = arith.andi
// CHECK:         call @disc_ral_note_variant(%c1_i64)
// CHECK:         scf.if %[[OK]] {
// CHECK-NEXT:      func.call @disc_ral_note_variant(%c9_i64)
// CHECK-NEXT:    } else {
// CHECK-NEXT:      func.call @disc_ral_note_variant(%c10_i64)
// CHECK-NEXT:    }
// CHECK:         %[[FLAG:.*]] = arith.select %[[OK]], %c1, %c0 : index
// CHECK:         scf.parallel
// The max: four partial results per thread, one per lane, combined after
// the loop; the scalar path below it.
// CHECK:           %[[ROW:.*]] = memref.collapse_shape
// CHECK:           %[[OROW:.*]] = memref.collapse_shape
// CHECK:           scf.parallel (%[[T:.*]]) = {{.*}} init
// CHECK:             %[[VEC:.*]] = arith.cmpi ne, %[[FLAG]], %c0
// CHECK:             scf.if %[[VEC]] -> (f32) {
// CHECK:               %[[START:.*]] = arith.muli %[[T]], %c4
// CHECK:               %[[M:.*]]:4 = scf.for %[[K:.*]] = %[[START]] to %{{.*}} step %{{.*}} iter_args(%[[X0:.*]] = %{{.*}}, %[[X1:.*]] = %{{.*}}, %[[X2:.*]] = %{{.*}}, %[[X3:.*]] = %{{.*}})
// CHECK:                 %[[V:.*]] = vector.load %[[ROW]][%c0, %[[K]]] {alignment = 16 : i64} : memref<1x?xf32, strided<[?, 1], offset: ?>>, vector<4xf32>
// CHECK:                 %[[E0:.*]] = vector.extract %[[V]][0]
// CHECK:                 %[[E3:.*]] = vector.extract %[[V]][3]
// CHECK:                 arith.maximumf %[[X0]], %[[E0]]
// CHECK:                 arith.maximumf %[[X3]], %[[E3]]
// CHECK:                 scf.yield
// CHECK:               %[[C01:.*]] = arith.maximumf %[[M]]#0, %[[M]]#1
// CHECK:               %[[C012:.*]] = arith.maximumf %[[C01]], %[[M]]#2
// CHECK:               %[[C0123:.*]] = arith.maximumf %[[C012]], %[[M]]#3
// CHECK:               scf.yield %[[C0123]]
// CHECK:             } else {
// CHECK:               scf.for %{{.*}} = %[[T]] to
// CHECK:                 memref.load %[[ROW]]
// CHECK-NOT:             vector.load
// CHECK:             scf.reduce
// The exp stage: a vector load of the input, a vector store of the output.
// CHECK:           scf.parallel
// CHECK:             scf.if %{{.*}} {
// CHECK:               scf.for
// CHECK:                 vector.load %[[ROW]]
// CHECK-COUNT-4:         math.exp
// CHECK:                 %[[STORED:.*]] = vector.from_elements
// CHECK:                 vector.store %[[STORED]], %[[OROW]][%c0, %{{.*}}] {alignment = 16 : i64}
// CHECK:             } else {
// CHECK:                 memref.store %{{.*}}, %[[OROW]]
// The sum reads the output.
// CHECK:           scf.parallel
// CHECK:                 vector.load %[[OROW]]
// CHECK-COUNT-4:         arith.addf {{.*}} fastmath<reassoc>
// The in-place divide: the output read and written at the same indices.
// CHECK:           scf.parallel
// CHECK:                 vector.load %[[OROW]]
// CHECK-COUNT-4:         arith.divf
// CHECK:                 vector.store %{{.*}}, %[[OROW]]
// The warp variant: lane l starts at 4l, steps 32 * 4.
// WARP-LABEL: func.func @softmax_views
// WARP:         call @disc_ral_note_variant(%c6_i64)
// WARP:         func.call @disc_ral_note_variant(%c9_i64)
// WARP:         func.call @disc_ral_note_variant(%c10_i64)
// WARP:         scf.parallel (%[[LANE:.*]]) = (%c0) to (%c32)
// WARP:           arith.muli %[[LANE]], %c4
// WARP:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c128
// WARP:             vector.load
// Auto: the vector choice is noted in the warp and the block branches, not
// in the one-row-per-thread one.
// AUTO-LABEL: func.func @softmax_views
// AUTO:         call @disc_ral_note_variant(%c6_i64)
// AUTO:         call @disc_ral_note_variant(%c9_i64)
// AUTO:         call @disc_ral_note_variant(%c10_i64)
// AUTO:         call @disc_ral_note_variant(%c1_i64)
// AUTO:         call @disc_ral_note_variant(%c9_i64)
// AUTO:         call @disc_ral_note_variant(%c10_i64)
// AUTO:         call @disc_ral_note_variant(%c0_i64)
// AUTO-NOT:     call @disc_ral_note_variant(%c9_i64)
// AUTO:         return
// row-vectors=false, or one row per thread: no vector path, no note.
// OFF-LABEL: func.func @softmax_views
// OFF-NOT:     vector.
// OFF-NOT:     call @disc_ral_note_variant(%c9_i64)
// OFF:         return
func.func @softmax_views(%a: memref<?x?x?xf32>, %out: memref<?x?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant -0.0 : f32
  %b = memref.dim %a, %c0 : memref<?x?x?xf32>
  %s = memref.dim %a, %c1 : memref<?x?x?xf32>
  %n = memref.dim %a, %c2 : memref<?x?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%b, %s) step (%c1, %c1) {
    %in = memref.subview %a[%i, %j, 0] [1, 1, %n] [1, 1, 1] : memref<?x?x?xf32> to memref<1x1x?xf32, strided<[?, ?, 1], offset: ?>>
    %row = memref.collapse_shape %in [[0, 1], [2]] : memref<1x1x?xf32, strided<[?, ?, 1], offset: ?>> into memref<1x?xf32, strided<[?, 1], offset: ?>>
    %o = memref.subview %out[%i, %j, 0] [1, 1, %n] [1, 1, 1] : memref<?x?x?xf32> to memref<1x1x?xf32, strided<[?, ?, 1], offset: ?>>
    %orow = memref.collapse_shape %o [[0, 1], [2]] : memref<1x1x?xf32, strided<[?, ?, 1], offset: ?>> into memref<1x?xf32, strided<[?, 1], offset: ?>>
    %len = memref.dim %row, %c1 : memref<1x?xf32, strided<[?, 1], offset: ?>>
    %mx = scf.for %k = %c0 to %len step %c1 iter_args(%x = %ninf) -> (f32) {
      %v = memref.load %row[%c0, %k] : memref<1x?xf32, strided<[?, 1], offset: ?>>
      %y = arith.maximumf %x, %v : f32
      scf.yield %y : f32
    }
    scf.parallel (%k) = (%c0) to (%len) step (%c1) {
      %v = memref.load %row[%c0, %k] : memref<1x?xf32, strided<[?, 1], offset: ?>>
      %d = arith.subf %v, %mx : f32
      %e = math.exp %d : f32
      memref.store %e, %orow[%c0, %k] : memref<1x?xf32, strided<[?, 1], offset: ?>>
      scf.reduce
    }
    %sum = scf.for %k = %c0 to %len step %c1 iter_args(%x = %zero) -> (f32) {
      %v = memref.load %orow[%c0, %k] : memref<1x?xf32, strided<[?, 1], offset: ?>>
      %y = arith.addf %x, %v fastmath<reassoc> : f32
      scf.yield %y : f32
    }
    scf.parallel (%k) = (%c0) to (%len) step (%c1) {
      %v = memref.load %orow[%c0, %k] : memref<1x?xf32, strided<[?, 1], offset: ?>>
      %q = arith.divf %v, %sum : f32
      memref.store %q, %orow[%c0, %k] : memref<1x?xf32, strided<[?, 1], offset: ?>>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// A layer norm's last stage: the row and the output vectorised, the
// weight (a rank-1 buffer, address only) too; the row's statistics are
// row-level values. A rank-1 expand_shape of the weight into [1, N] (the
// other dims of its last group of size 1) keeps it contiguous.
// CHECK-LABEL: func.func @scale_rows
// CHECK-SAME:    (%[[A:.*]]: memref<?x?xf32>, %[[W:.*]]: memref<?xf32>, %[[OUT:.*]]: memref<?x?xf32>)
// CHECK-DAG:     memref.extract_aligned_pointer_as_index %[[A]]
// CHECK-DAG:     memref.extract_aligned_pointer_as_index %[[W]]
// CHECK-DAG:     memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK:         scf.parallel
// CHECK:           scf.if
// CHECK:             scf.for
// CHECK-DAG:           vector.load %{{.*}}[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<?x?xf32>
// CHECK-DAG:           vector.load %{{.*}}[%c0, %{{.*}}] {alignment = 16 : i64} : memref<1x?xf32>
// CHECK:               vector.store %{{.*}}, %[[OUT]]
func.func @scale_rows(%a: memref<?x?xf32>, %w: memref<?xf32>, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant -0.0 : f32
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  %w2 = memref.expand_shape %w [[0, 1]] output_shape [1, %n] : memref<?xf32> into memref<1x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %s = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (f32) {
      %v = memref.load %a[%i, %k] : memref<?x?xf32>
      %y = arith.addf %x, %v fastmath<reassoc> : f32
      scf.yield %y : f32
    }
    scf.parallel (%k) = (%c0) to (%n) step (%c1) {
      %v = memref.load %a[%i, %k] : memref<?x?xf32>
      %g = memref.load %w2[%c0, %k] : memref<1x?xf32>
      %d = arith.subf %v, %s : f32
      %e = arith.mulf %d, %g : f32
      memref.store %e, %out[%i, %k] : memref<?x?xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// An expand_shape of a row buffer's last dim into [R, K] with K dynamic:
// K joins the host's multiples of 4.
// CHECK-LABEL: func.func @expanded_rows
// CHECK-SAME:    (%[[A:.*]]: memref<?xf32>, %[[R:.*]]: index, %[[K:.*]]: index
// CHECK-DAG:     arith.remui %[[K]], %c4
// CHECK-DAG:     memref.extract_aligned_pointer_as_index %[[A]]
// CHECK:         vector.load
func.func @expanded_rows(%a: memref<?xf32>, %r: index, %k: index, %acc: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant -0.0 : f32
  %rows = memref.expand_shape %a [[0, 1]] output_shape [%r, %k] : memref<?xf32> into memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%r) step (%c1) {
    %s = scf.for %j = %c0 to %k step %c1 iter_args(%x = %zero) -> (f32) {
      %v = memref.load %rows[%i, %j] : memref<?x?xf32>
      %y = arith.addf %x, %v fastmath<reassoc> : f32
      scf.yield %y : f32
    }
    memref.store %s, %acc[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// What gets no vector path, in any mode: a row read at an offset of one
// element (a subview's static offset not a multiple of 4) ...
// CHECK-LABEL: func.func @offset_rows
// CHECK-NOT:     vector.
// CHECK-NOT:     call @disc_ral_note_variant(%c9_i64)
// CHECK:         disc.row_block
// CHECK:         return
func.func @offset_rows(%a: memref<?x?xf32>, %acc: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant -0.0 : f32
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  %len = arith.subi %n, %c1 : index
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %row = memref.subview %a[%i, 1] [1, %len] [1, 1] : memref<?x?xf32> to memref<?xf32, strided<[1], offset: ?>>
    %s = scf.for %j = %c0 to %len step %c1 iter_args(%x = %zero) -> (f32) {
      %v = memref.load %row[%j] : memref<?xf32, strided<[1], offset: ?>>
      %y = arith.addf %x, %v fastmath<reassoc> : f32
      scf.yield %y : f32
    }
    memref.store %s, %acc[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// ... a strided row (every other element) ...
// CHECK-LABEL: func.func @strided_rows
// CHECK-NOT:     vector.
// CHECK:         disc.row_block
// CHECK:         return
func.func @strided_rows(%a: memref<?x?xf32>, %acc: memref<?xf32>, %half: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant -0.0 : f32
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %row = memref.subview %a[%i, 0] [1, %half] [1, 2] : memref<?x?xf32> to memref<?xf32, strided<[2], offset: ?>>
    %s = scf.for %j = %c0 to %half step %c1 iter_args(%x = %zero) -> (f32) {
      %v = memref.load %row[%j] : memref<?xf32, strided<[2], offset: ?>>
      %y = arith.addf %x, %v fastmath<reassoc> : f32
      scf.yield %y : f32
    }
    memref.store %s, %acc[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// ... a row read down a column (the last index is not the phase's), f64
// elements, a phase that starts at 1, and a stage over a 2-d row ...
// CHECK-LABEL: func.func @not_vectorised
// CHECK-NOT:     vector.
// CHECK:         disc.row_block
// CHECK-NOT:     vector.
// CHECK:         disc.row_block
// CHECK-NOT:     vector.
// CHECK:         disc.row_block
// CHECK-NOT:     vector.
// CHECK:         disc.row_block
// CHECK-NOT:     vector.
// CHECK:         return
func.func @not_vectorised(%a: memref<?x?xf32>, %d: memref<?x?xf64>, %b: memref<?x?x?xf32>, %acc: memref<?xf32>, %acc64: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant -0.0 : f32
  %zero64 = arith.constant -0.0 : f64
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %s = scf.for %j = %c0 to %m step %c1 iter_args(%x = %zero) -> (f32) {
      %v = memref.load %a[%j, %i] : memref<?x?xf32>
      %y = arith.addf %x, %v fastmath<reassoc> : f32
      scf.yield %y : f32
    }
    memref.store %s, %acc[%i] : memref<?xf32>
    scf.reduce
  }
  %dm = memref.dim %d, %c0 : memref<?x?xf64>
  %dn = memref.dim %d, %c1 : memref<?x?xf64>
  scf.parallel (%i) = (%c0) to (%dm) step (%c1) {
    %s = scf.for %j = %c0 to %dn step %c1 iter_args(%x = %zero64) -> (f64) {
      %v = memref.load %d[%i, %j] : memref<?x?xf64>
      %y = arith.addf %x, %v fastmath<reassoc> : f64
      scf.yield %y : f64
    }
    memref.store %s, %acc64[%i] : memref<?xf64>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %s = scf.for %j = %c1 to %n step %c1 iter_args(%x = %zero) -> (f32) {
      %v = memref.load %a[%i, %j] : memref<?x?xf32>
      %y = arith.addf %x, %v fastmath<reassoc> : f32
      scf.yield %y : f32
    }
    memref.store %s, %acc[%i] : memref<?xf32>
    scf.reduce
  }
  %bm = memref.dim %b, %c0 : memref<?x?x?xf32>
  %bn = memref.dim %b, %c1 : memref<?x?x?xf32>
  %bw = memref.dim %b, %c2 : memref<?x?x?xf32>
  scf.parallel (%i) = (%c0) to (%bm) step (%c1) {
    scf.parallel (%j, %k) = (%c0, %c0) to (%bn, %bw) step (%c1, %c1) {
      %v = memref.load %b[%i, %j, %k] : memref<?x?x?xf32>
      %y = arith.mulf %v, %v : f32
      memref.store %y, %b[%i, %j, %k] : memref<?x?x?xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// ... and a buffer read and written by a stage through different views:
// the stage's other accesses are vectorised, that buffer's are not.
// CHECK-LABEL: func.func @read_write_views
// CHECK-SAME:    (%[[A:.*]]: memref<?x?xf32>, %[[B:.*]]: memref<?x?xf32>)
// CHECK:         scf.if
// CHECK:           scf.for
// CHECK-COUNT-4:     memref.load %{{.*}}[%c0, %{{.*}}] : memref<1x?xf32
// CHECK-NEXT:        vector.load %[[B]]
// CHECK-NOT:         vector.store
// CHECK-COUNT-4:     memref.store %{{.*}}, %[[A]]
// CHECK-NOT:         vector.
// CHECK:           } else {
func.func @read_write_views(%a: memref<?x?xf32>, %b: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %row = memref.subview %a[%i, 0] [1, %n] [1, 1] : memref<?x?xf32> to memref<1x?xf32, strided<[?, 1], offset: ?>>
    scf.parallel (%j) = (%c0) to (%n) step (%c1) {
      %v = memref.load %row[%c0, %j] : memref<1x?xf32, strided<[?, 1], offset: ?>>
      %w = memref.load %b[%i, %j] : memref<?x?xf32>
      %y = arith.addf %v, %w : f32
      memref.store %y, %a[%i, %j] : memref<?x?xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}
