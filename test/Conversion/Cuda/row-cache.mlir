// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{row-variant=block row-unroll=1 row-vectors=false index32-limit=0},canonicalize,cse)' | FileCheck %s
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{row-variant=warp row-unroll=1 row-vectors=false index32-limit=0},canonicalize,cse)' | FileCheck %s --check-prefix=WARP
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{row-variant=block row-unroll=1 index32-limit=0},canonicalize,cse)' | FileCheck %s --check-prefix=VEC
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{row-variant=auto row-unroll=1 row-vectors=false index32-limit=0})' | FileCheck %s --check-prefix=AUTO
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{row-variant=block row-cache-bytes=0 index32-limit=0})' | FileCheck %s --check-prefix=OFF
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{row-variant=thread index32-limit=0})' | FileCheck %s --check-prefix=OFF
// RUN: not disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{row-cache-bytes=45057})' 2>&1 | FileCheck %s --check-prefix=BAD

// Row caches of row kernels (RowKernels.h, RowCachePlan): in the block and
// warp variants, a row the phases touch more than once is read from its
// buffer once, kept in a row cache (`memref.alloc` marked disc.row_cache,
// shared memory on a GPU), and written to its buffer once. The host takes
// the cached nest when one block's caches fit in row-cache-bytes.

// A softmax over row views: the input's row fills its cache in the max
// phase; the exp stage writes the output's cache only (the divide
// rewrites the row); the sum and the divide read the cache; the divide
// writes the output. The host: each cache's bytes rounded up to 16, summed
// per row, times the rows of a block, against 40960; the choice noted (11:
// cached, 12: not) and the uncached nest in the else branch.
// CHECK-LABEL: func.func @softmax_views
// CHECK-SAME:    (%[[A:.*]]: memref<?x?x?xf32>, %[[OUT:.*]]: memref<?x?x?xf32>)
// CHECK:         %[[N:.*]] = memref.dim %[[A]], %c2
// CHECK:         %[[BYTES:.*]] = arith.muli %[[N]], %c4
// CHECK:         %[[UNITS:.*]] = arith.ceildivui %[[BYTES]], %c16
// CHECK:         %[[ROUNDED:.*]] = arith.muli %[[UNITS]], %c16
// CHECK:         %[[PERROW:.*]] = arith.addi %[[ROUNDED]], %[[ROUNDED]]
// CHECK:         %[[FITS:.*]] = arith.cmpi ule, %[[PERROW]], %c40960
// CHECK:         scf.if %[[FITS]] {
// CHECK-NEXT:      func.call @disc_ral_note_variant(%c11_i64)
// CHECK:           scf.parallel
// CHECK:             %[[ROW:.*]] = memref.subview %[[A]]
// CHECK:             %[[OROW:.*]] = memref.subview %[[OUT]]
// CHECK:             %[[XC:.*]] = memref.alloc(%[[N]]) {alignment = 64 : i64, disc.row_cache} : memref<?xf32>
// CHECK:             scf.parallel
// CHECK:               scf.for %[[K:[a-z0-9_]+]] =
// CHECK-NEXT:            %[[X:.*]] = memref.load %[[ROW]][%c0, %c0, %[[K]]]
// CHECK-NEXT:            memref.store %[[X]], %[[XC]][%[[K]]]
// CHECK-NEXT:            arith.maximumf
// CHECK:             %[[OC:.*]] = memref.alloc(%[[N]]) {alignment = 64 : i64, disc.row_cache} : memref<?xf32>
// CHECK:             scf.parallel
// CHECK:               scf.for %[[K:[a-z0-9_]+]] =
// CHECK-NEXT:            memref.load %[[XC]][%[[K]]]
// CHECK-NOT:             memref.store %{{.*}}, %[[OROW]]
// CHECK:                 memref.store %{{.*}}, %[[OC]][%[[K]]]
// CHECK-NEXT:          }
// CHECK:             scf.parallel
// CHECK:               scf.for %[[K:[a-z0-9_]+]] =
// CHECK-NEXT:            memref.load %[[OC]][%[[K]]]
// CHECK-NEXT:            arith.addf
// CHECK:             scf.parallel
// CHECK:               scf.for %[[K:[a-z0-9_]+]] =
// CHECK-NEXT:            memref.load %[[OC]][%[[K]]]
// CHECK-NEXT:            %[[Q:.*]] = arith.divf
// CHECK-NEXT:            memref.store %[[Q]], %[[OROW]][%c0, %c0, %[[K]]]
// CHECK-NEXT:          }
// CHECK:             memref.dealloc %[[XC]]
// CHECK:             memref.dealloc %[[OC]]
// CHECK:           } {disc.row_block
// CHECK:         } else {
// CHECK-NEXT:      func.call @disc_ral_note_variant(%c12_i64)
// CHECK-NOT:       disc.row_cache
// CHECK:           } {disc.row_block
// CHECK:         } {disc.row_variants}
// The warp variant: 8 rows a block (canonicalize merged the loops over
// groups and warps, without their marks).
// WARP-LABEL: func.func @softmax_views
// WARP:         %[[PERROW:.*]] = arith.addi
// WARP:         call @disc_ral_note_variant(%c6_i64)
// WARP:         %[[BLOCK:.*]] = arith.muli %[[PERROW]], %c8
// WARP:         arith.cmpi ule, %[[BLOCK]], %c40960
// WARP:         scf.parallel ({{.*}}, {{.*}}) = (%c0, %c0) to ({{.*}}, %c8)
// WARP:           disc.row_cache
// Auto: a warp block's 8 rows must fit their caches to run one row per
// warp (the warp variant has only the cached kernel); rows that do not go
// to the block variant, cached or not.
// AUTO-LABEL: func.func @softmax_views
// AUTO:         %[[WARPROWS:.*]] = arith.ori
// AUTO:         %[[BLOCK8:.*]] = arith.muli %{{.*}}, %c8
// AUTO:         %[[FITS8:.*]] = arith.cmpi ule, %[[BLOCK8]], %c40960
// AUTO:         %[[TAKEWARP:.*]] = arith.andi %[[WARPROWS]], %[[FITS8]]
// AUTO:         scf.if %[[TAKEWARP]] {
// AUTO:           call @disc_ral_note_variant(%c6_i64)
// AUTO:           call @disc_ral_note_variant(%c11_i64)
// AUTO:           disc.row_cache
// AUTO:           disc.row_warp
// AUTO-NOT:       disc.row_warp
// AUTO:           call @disc_ral_note_variant(%c1_i64)
// AUTO:           call @disc_ral_note_variant(%c11_i64)
// AUTO:           disc.row_cache
// AUTO:           disc.row_block
// AUTO:           call @disc_ral_note_variant(%c12_i64)
// AUTO-NOT:       disc.row_cache
// AUTO:           disc.row_block
// AUTO-NOT:       disc.row_warp
// AUTO:         call @disc_ral_note_variant(%c0_i64)
// AUTO:         return
// With vectors: the cache filled and read with vector accesses too.
// VEC-LABEL: func.func @softmax_views
// VEC:         %[[XC:.*]] = memref.alloc({{.*}}) {alignment = 64 : i64, disc.row_cache}
// VEC:         %[[V:.*]] = vector.load %{{.*}} {alignment = 16 : i64} : memref<1x1x?xf32
// VEC:         vector.store %[[V]], %[[XC]][%{{.*}}] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
// VEC:         vector.load %[[XC]]
// OFF-LABEL: func.func @softmax_views
// OFF-NOT:     disc.row_cache
// OFF-NOT:     call @disc_ral_note_variant(%c11_i64)
// OFF:         return
// BAD: row-cache-bytes must be in [0, 45056], got 45057
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

// A layer norm: the input's row, read by the mean, the variance and the
// output stage, is read once; the output (written once) has no cache.
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME:    (%[[A:.*]]: memref<?x?xf32>, %[[W:.*]]: memref<?xf32>, %[[OUT:.*]]: memref<?x?xf32>)
// CHECK:         scf.if
// CHECK:           %[[C:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64, disc.row_cache}
// CHECK-NOT:       disc.row_cache
// CHECK:           memref.load %[[A]]
// CHECK-NEXT:      memref.store %{{.*}}, %[[C]]
// CHECK-NOT:       memref.load %[[A]]
// CHECK:           memref.load %[[C]]
// CHECK-NOT:       memref.load %[[A]]
// CHECK:           memref.load %[[C]]
// CHECK:           memref.store %{{.*}}, %[[OUT]]
// CHECK:         } else {
func.func @layer_norm(%a: memref<?x?xf32>, %w: memref<?xf32>, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant -0.0 : f32
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %s = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (f32) {
      %v = memref.load %a[%i, %k] : memref<?x?xf32>
      %y = arith.addf %x, %v fastmath<reassoc> : f32
      scf.yield %y : f32
    }
    %q = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (f32) {
      %v = memref.load %a[%i, %k] : memref<?x?xf32>
      %d = arith.subf %v, %s : f32
      %e = arith.mulf %d, %d : f32
      %y = arith.addf %x, %e fastmath<reassoc> : f32
      scf.yield %y : f32
    }
    scf.parallel (%k) = (%c0) to (%n) step (%c1) {
      %v = memref.load %a[%i, %k] : memref<?x?xf32>
      %g = memref.load %w[%k] : memref<?xf32>
      %d = arith.subf %v, %s : f32
      %e = arith.mulf %d, %q : f32
      %f = arith.mulf %e, %g : f32
      memref.store %f, %out[%i, %k] : memref<?x?xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// What gets no cache: a row read by one phase only (a sum) ...
// CHECK-LABEL: func.func @one_phase
// CHECK-NOT:     disc.row_cache
// CHECK:         disc.row_block
// CHECK-NOT:     disc.row_cache
// CHECK:         return
func.func @one_phase(%a: memref<?x?xf32>, %acc: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant -0.0 : f32
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %s = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (f32) {
      %v = memref.load %a[%i, %k] : memref<?x?xf32>
      %y = arith.addf %x, %v fastmath<reassoc> : f32
      scf.yield %y : f32
    }
    memref.store %s, %acc[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// ... two rows of one buffer (rows i and i + 1: the row loop's rows would
// overlap), phases of different lengths, a row-level load of the buffer,
// and a 2-d stage over it.
// CHECK-LABEL: func.func @not_cached
// CHECK-NOT:     disc.row_cache
// CHECK:         disc.row_block
// CHECK-NOT:     disc.row_cache
// CHECK:         disc.row_block
// CHECK-NOT:     disc.row_cache
// CHECK:         disc.row_block
// CHECK-NOT:     disc.row_cache
// CHECK:         disc.row_block
// CHECK-NOT:     disc.row_cache
// CHECK:         return
func.func @not_cached(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>, %d: memref<?x?x?xf32>, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant -0.0 : f32
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  %rows = arith.subi %m, %c1 : index
  %short = arith.subi %n, %c1 : index
  scf.parallel (%i) = (%c0) to (%rows) step (%c1) {
    %j = arith.addi %i, %c1 : index
    %s = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (f32) {
      %v = memref.load %a[%i, %k] : memref<?x?xf32>
      %y = arith.addf %x, %v fastmath<reassoc> : f32
      scf.yield %y : f32
    }
    scf.parallel (%k) = (%c0) to (%n) step (%c1) {
      %v = memref.load %a[%j, %k] : memref<?x?xf32>
      %e = arith.mulf %v, %s : f32
      memref.store %e, %out[%i, %k] : memref<?x?xf32>
      scf.reduce
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %s = scf.for %k = %c0 to %short step %c1 iter_args(%x = %zero) -> (f32) {
      %v = memref.load %b[%i, %k] : memref<?x?xf32>
      %y = arith.addf %x, %v fastmath<reassoc> : f32
      scf.yield %y : f32
    }
    scf.parallel (%k) = (%c0) to (%n) step (%c1) {
      %v = memref.load %b[%i, %k] : memref<?x?xf32>
      %e = arith.mulf %v, %s : f32
      memref.store %e, %out[%i, %k] : memref<?x?xf32>
      scf.reduce
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %s = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (f32) {
      %v = memref.load %c[%i, %k] : memref<?x?xf32>
      %y = arith.addf %x, %v fastmath<reassoc> : f32
      scf.yield %y : f32
    }
    %first = memref.load %c[%i, %c0] : memref<?x?xf32>
    %t = arith.addf %s, %first : f32
    scf.parallel (%k) = (%c0) to (%n) step (%c1) {
      %v = memref.load %c[%i, %k] : memref<?x?xf32>
      %e = arith.mulf %v, %t : f32
      memref.store %e, %out[%i, %k] : memref<?x?xf32>
      scf.reduce
    }
    scf.reduce
  }
  %dm = memref.dim %d, %c0 : memref<?x?x?xf32>
  %dn = memref.dim %d, %c1 : memref<?x?x?xf32>
  %dw = memref.dim %d, %c2 : memref<?x?x?xf32>
  scf.parallel (%i) = (%c0) to (%dm) step (%c1) {
    %s = scf.for %k = %c0 to %dw step %c1 iter_args(%x = %zero) -> (f32) {
      %v = memref.load %d[%i, %c0, %k] : memref<?x?x?xf32>
      %y = arith.addf %x, %v fastmath<reassoc> : f32
      scf.yield %y : f32
    }
    scf.parallel (%j, %k) = (%c0, %c0) to (%dn, %dw) step (%c1, %c1) {
      %v = memref.load %d[%i, %j, %k] : memref<?x?x?xf32>
      %e = arith.mulf %v, %s : f32
      memref.store %e, %d[%i, %j, %k] : memref<?x?x?xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// One row through two views (a stitch kernel writes its output row through
// [1, 1, n] -> [n] and reads it through [1, 1, n] -> [1, n]): collapses
// that only drop unit dims are read through, so the row is one group and
// gets one cache; the sum reads the cache, not the buffer.
// CHECK-LABEL: func.func @one_row_two_views
// CHECK-SAME:    (%[[A:.*]]: memref<?x?x?xf32>, %[[OUT:.*]]: memref<?x?x?xf32>)
// CHECK:         scf.if
// CHECK:           %[[O:.*]] = memref.subview %[[OUT]]
// CHECK:           %[[C:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64, disc.row_cache}
// CHECK:           memref.store %{{.*}}, %[[C]]
// CHECK-NOT:       memref.load %[[O]]
// CHECK:           memref.load %[[C]]
// CHECK:           memref.load %[[C]]
// CHECK:           memref.store %{{.*}}, %[[O]][%c0, %c0, %{{.*}}]
// CHECK:         } else {
func.func @one_row_two_views(%a: memref<?x?x?xf32>, %out: memref<?x?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant -0.0 : f32
  %b = memref.dim %a, %c0 : memref<?x?x?xf32>
  %s = memref.dim %a, %c1 : memref<?x?x?xf32>
  %n = memref.dim %a, %c2 : memref<?x?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%b, %s) step (%c1, %c1) {
    %in = memref.subview %a[%i, %j, 0] [1, 1, %n] [1, 1, 1] : memref<?x?x?xf32> to memref<1x1x?xf32, strided<[?, ?, 1], offset: ?>>
    %o = memref.subview %out[%i, %j, 0] [1, 1, %n] [1, 1, 1] : memref<?x?x?xf32> to memref<1x1x?xf32, strided<[?, ?, 1], offset: ?>>
    %flat = memref.collapse_shape %o [[0, 1, 2]] : memref<1x1x?xf32, strided<[?, ?, 1], offset: ?>> into memref<?xf32, strided<[?], offset: ?>>
    %orow = memref.collapse_shape %o [[0, 1], [2]] : memref<1x1x?xf32, strided<[?, ?, 1], offset: ?>> into memref<1x?xf32, strided<[?, 1], offset: ?>>
    scf.parallel (%k) = (%c0) to (%n) step (%c1) {
      %v = memref.load %in[%c0, %c0, %k] : memref<1x1x?xf32, strided<[?, ?, 1], offset: ?>>
      %e = math.exp %v : f32
      memref.store %e, %flat[%k] : memref<?xf32, strided<[?], offset: ?>>
      scf.reduce
    }
    %sum = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (f32) {
      %v = memref.load %orow[%c0, %k] : memref<1x?xf32, strided<[?, 1], offset: ?>>
      %y = arith.addf %x, %v fastmath<reassoc> : f32
      scf.yield %y : f32
    }
    scf.parallel (%k) = (%c0) to (%n) step (%c1) {
      %v = memref.load %orow[%c0, %k] : memref<1x?xf32, strided<[?, 1], offset: ?>>
      %q = arith.divf %v, %sum : f32
      memref.store %q, %orow[%c0, %k] : memref<1x?xf32, strided<[?, 1], offset: ?>>
      scf.reduce
    }
    scf.reduce
  }
  return
}
