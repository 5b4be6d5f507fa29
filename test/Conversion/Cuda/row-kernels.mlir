// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{row-vectors=0 row-cache-bytes=0 row-variant=auto row-unroll=1})' | FileCheck %s --check-prefixes=CHECK,AUTO
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{row-vectors=0 row-cache-bytes=0 row-variant=block row-unroll=1})' | FileCheck %s --check-prefixes=CHECK,BLOCK
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{row-vectors=0 row-cache-bytes=0 row-variant=thread row-unroll=1})' | FileCheck %s --check-prefixes=CHECK,THREAD
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{row-vectors=0 row-cache-bytes=0 row-variant=warp row-unroll=1})' | FileCheck %s --check-prefixes=CHECK,WARP
// RUN: not disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{row-vectors=0 row-cache-bytes=0 row-variant=bogus})' 2>&1 | FileCheck %s --check-prefix=BOGUS

// Row-kernel variants of disc-map-loops-to-gpu (RowKernels.h).

// A row sum (the initial value comes from the accumulator): auto picks per
// call from the row length and the number of rows; block forces one row per
// block, warp one row per warp, thread one row per thread. Every call notes
// its variant.
// CHECK-LABEL: func.func @row_sum
// AUTO:          %[[M:.*]] = memref.dim %{{.*}}, %c0
// AUTO:          %[[N:.*]] = memref.dim %{{.*}}, %c1
// AUTO:          %[[LEN:.*]] = arith.maxsi %[[N]]
// AUTO:          %[[LONG:.*]] = arith.cmpi uge, %[[LEN]], %c32
// AUTO:          scf.if %[[LONG]] {
// AUTO:            %[[ROWS:.*]] = arith.maxsi %[[M]]
// AUTO:            %[[SHORT:.*]] = arith.cmpi ule, %[[LEN]], %c128
// AUTO:            %[[MANY:.*]] = arith.cmpi uge, %[[ROWS]], %c2048
// AUTO:            %[[UPTO1K:.*]] = arith.cmpi ule, %[[LEN]], %c1024
// AUTO:            %[[BOTH:.*]] = arith.andi %[[UPTO1K]], %[[MANY]]
// AUTO:            %[[BYWARP:.*]] = arith.ori %[[SHORT]], %[[BOTH]]
// AUTO:            scf.if %[[BYWARP]] {
// AUTO:              call @disc_ral_note_variant(%c6_i64)
// AUTO:              disc.row_warp
// AUTO:            } else {
// AUTO:              call @disc_ral_note_variant(%c1_i64)
// AUTO:              arith.ceildivui %[[LEN]], %c4
// AUTO:              %[[T:.*]] = arith.muli %{{.*}}, %c32
// AUTO:              scf.parallel (%[[ROW:.*]]) =
// AUTO:                %[[INIT:.*]] = memref.load %{{.*}}[%[[ROW]]]
// AUTO:                %[[ID:.*]] = arith.constant -0.000000e+00 : f32
// AUTO:                %[[S:.*]] = scf.parallel (%[[TID:.*]]) = (%{{.*}}) to (%[[T]]) step (%{{.*}}) init (%[[ID]]) -> f32 {
// AUTO:                  %[[START:.*]] = arith.addi %c0, %{{.*}}
// AUTO:                  %[[STRIDE:.*]] = arith.muli %[[T]], %c1
// AUTO:                  %[[P:.*]] = scf.for %{{.*}} = %[[START]] to %[[N]] step %[[STRIDE]] iter_args(%{{.*}} = %[[ID]])
// AUTO:                  scf.reduce(%[[P]] : f32) {
// AUTO:                    arith.addf {{.*}} fastmath<reassoc>
// AUTO:                } {mapping = [#gpu.loop_dim_map<processor = thread_x
// AUTO:                %[[R:.*]] = arith.addf %[[INIT]], %[[S]] fastmath<reassoc>
// AUTO:                memref.store %[[R]], %{{.*}}[%[[ROW]]]
// AUTO:              } {disc.row_block, mapping = [#gpu.loop_dim_map<processor = block_x
// AUTO:            }
// AUTO:          } else {
// AUTO:            call @disc_ral_note_variant(%c0_i64)
// AUTO:            scf.parallel
// AUTO:              scf.parallel
// AUTO:                scf.if
// AUTO:                  scf.for
// AUTO:          } {disc.row_variants}
// The warp variant: blocks of 8 rows, a loop over the block's warps, the
// row guard, then the row with 32 lanes: lane, lane + 32, ...
// WARP-NOT:      scf.if
// WARP:          call @disc_ral_note_variant(%c6_i64)
// WARP:          %[[WROWS:.*]] = arith.maxsi %{{.*}}, %{{.*}} : index
// WARP:          %[[GROUPS:.*]] = arith.ceildivui %[[WROWS]], %c8
// WARP:          scf.parallel (%[[G:.*]]) = (%{{.*}}) to (%[[GROUPS]])
// WARP:            scf.parallel (%[[W:.*]]) = (%{{.*}}) to (%c8)
// WARP:              %[[BASE:.*]] = arith.muli %[[G]], %c8
// WARP:              %[[WROW:.*]] = arith.addi %[[BASE]], %[[W]]
// WARP:              %[[IN:.*]] = arith.cmpi ult, %[[WROW]], %[[WROWS]]
// WARP:              scf.if %[[IN]] {
// WARP:                %[[WINIT:.*]] = memref.load %{{.*}}[%[[WROW]]]
// WARP:                %[[WS:.*]] = scf.parallel (%[[LANE:.*]]) = (%{{.*}}) to (%[[C32:.*]]) step
// WARP:                  %[[WSTART:.*]] = arith.muli %[[LANE]], %c1
// WARP:                  %[[WSTRIDE:.*]] = arith.muli %[[C32]], %c1
// WARP:                  scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[WSTRIDE]]
// WARP:                  scf.reduce
// WARP:                } {mapping = [#gpu.loop_dim_map<processor = thread_x
// WARP:                %[[WR:.*]] = arith.addf %[[WINIT]], %[[WS]] fastmath<reassoc>
// WARP:                memref.store %[[WR]], %{{.*}}[%[[WROW]]]
// WARP:              }
// WARP:            } {mapping = [#gpu.loop_dim_map<processor = thread_y
// WARP:          } {disc.row_warp, mapping = [#gpu.loop_dim_map<processor = block_x
// WARP-NOT:      call @disc_ral_note_variant
// BLOCK-NOT:     scf.if
// BLOCK:         call @disc_ral_note_variant(%c1_i64)
// BLOCK:         scf.parallel
// BLOCK:         disc.row_block
// BLOCK-NOT:     call @disc_ral_note_variant
// THREAD-NOT:    disc.row_block
// THREAD:        call @disc_ral_note_variant(%c0_i64)
// THREAD-NOT:    disc.row_block
// BOGUS:         row-variant must be auto, thread, warp or block, got 'bogus'
func.func @row_sum(%a: memref<?x?xf32>, %acc: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %init = memref.load %acc[%i] : memref<?xf32>
    %s = scf.for %j = %c0 to %n step %c1 iter_args(%x = %init) -> (f32) {
      %v = memref.load %a[%i, %j] : memref<?x?xf32>
      %y = arith.addf %x, %v fastmath<reassoc> : f32
      scf.yield %y : f32
    }
    memref.store %s, %acc[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// A stitch kernel (softmax): a max reduction with its NaN flag (an i1
// `ori`), a row scalar on the stack, a stage writing the output and a sum.
// Each phase becomes a thread loop; the stage's iterations are strided by
// the thread count; the row-level ops stay between the thread loops.
// CHECK-LABEL: func.func @stitch_softmax
// BLOCK:         scf.parallel (%[[ROW:.*]]) =
// BLOCK:           %[[SCALAR:.*]] = memref.alloca() : memref<1xf32>
// BLOCK:           %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// BLOCK:           %[[FALSE:.*]] = arith.constant false
// BLOCK:           %[[MAX:.*]]:2 = scf.parallel (%{{.*}}) = {{.*}} init (%[[NEGINF]], %[[FALSE]]) -> (f32, i1)
// BLOCK:             scf.for
// BLOCK:             scf.reduce(%{{.*}}, %{{.*}} : f32, i1) {
// BLOCK:               arith.maxnumf
// BLOCK:             }, {
// BLOCK:               arith.ori
// BLOCK:           arith.maxnumf %{{.*}}, %[[MAX]]#0
// BLOCK:           arith.ori %{{.*}}, %[[MAX]]#1
// BLOCK:           memref.store %{{.*}}, %[[SCALAR]][%c0]
// BLOCK:           scf.parallel (%[[TID:.*]]) = (%{{.*}}) to (%[[T:.*]]) step
// BLOCK:             %[[START:.*]] = arith.addi %c0, %{{.*}}
// BLOCK:             %[[STRIDE:.*]] = arith.muli %[[T]], %c1
// BLOCK:             scf.for %[[K:.*]] = %[[START]] to %{{.*}} step %[[STRIDE]] {
// BLOCK:               memref.load %[[SCALAR]][%c0]
// BLOCK:               math.exp
// BLOCK:               memref.store %{{.*}}, %{{.*}}[%[[ROW]], %[[K]]]
// BLOCK-NOT:         scf.reduce(
// BLOCK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x
// BLOCK:           scf.parallel
// BLOCK:             scf.reduce(%{{.*}} : f32)
// BLOCK:         } {disc.row_block
// THREAD-NOT:    disc.row_block
func.func @stitch_softmax(%a: memref<?x?xf32>, %out: memref<?x?xf32>, %sum: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %row = memref.alloca() : memref<1xf32>
    %flag0 = arith.cmpf uno, %ninf, %ninf : f32
    %mx:2 = scf.for %j = %c0 to %n step %c1 iter_args(%x = %ninf, %f = %flag0) -> (f32, i1) {
      %v = memref.load %a[%i, %j] : memref<?x?xf32>
      %y = arith.maxnumf %x, %v fastmath<nnan,nsz> : f32
      %u = arith.cmpf uno, %v, %v : f32
      %g = arith.ori %f, %u : i1
      scf.yield %y, %g : f32, i1
    }
    %r = arith.select %mx#1, %nan, %mx#0 : f32
    memref.store %r, %row[%c0] : memref<1xf32>
    scf.parallel (%j) = (%c0) to (%n) step (%c1) {
      %v = memref.load %a[%i, %j] : memref<?x?xf32>
      %mm = memref.load %row[%c0] : memref<1xf32>
      %d = arith.subf %v, %mm : f32
      %e = math.exp %d : f32
      memref.store %e, %out[%i, %j] : memref<?x?xf32>
      scf.reduce
    }
    %s = scf.for %j = %c0 to %n step %c1 iter_args(%x = %zero) -> (f32) {
      %v = memref.load %out[%i, %j] : memref<?x?xf32>
      %y = arith.addf %x, %v fastmath<reassoc> : f32
      scf.yield %y : f32
    }
    memref.store %s, %sum[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// A stage over a 2-d row (rows of [C, W]): the thread loop runs the
// linearised iterations t, t + T, ..., delinearised innermost fastest.
// CHECK-LABEL: func.func @stage_2d
// BLOCK:         scf.parallel
// BLOCK:           scf.parallel (%[[TID:.*]]) = (%{{.*}}) to (%[[T:.*]]) step
// BLOCK:             scf.for %[[L:.*]] = %[[TID]] to %{{.*}} step %[[T]] {
// BLOCK:               arith.remui %[[L]]
// BLOCK:               arith.divui %[[L]]
// BLOCK:               memref.store
// BLOCK:         } {disc.row_block
func.func @stage_2d(%a: memref<?x?x?xf32>, %acc: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %a, %c0 : memref<?x?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?x?xf32>
  %w = memref.dim %a, %c2 : memref<?x?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %s = scf.for %j = %c0 to %n step %c1 iter_args(%x = %zero) -> (f32) {
      %v = memref.load %a[%i, %j, %c0] : memref<?x?x?xf32>
      %y = arith.addf %x, %v fastmath<reassoc> : f32
      scf.yield %y : f32
    }
    scf.parallel (%j, %k) = (%c0, %c0) to (%n, %w) step (%c1, %c1) {
      %v = memref.load %a[%i, %j, %k] : memref<?x?x?xf32>
      %d = arith.divf %v, %s : f32
      memref.store %d, %a[%i, %j, %k] : memref<?x?x?xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// What must stay one row per thread, in every mode (no note either):
// a float sum not marked reassociable (its order would change) ...
// CHECK-LABEL: func.func @ordered_sum
// CHECK-NOT:     disc.row_block
// CHECK-NOT:     call @disc_ral_note_variant
// CHECK:         return
func.func @ordered_sum(%a: memref<?x?xf32>, %acc: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %s = scf.for %j = %c0 to %n step %c1 iter_args(%x = %zero) -> (f32) {
      %v = memref.load %a[%i, %j] : memref<?x?xf32>
      %y = arith.addf %x, %v : f32
      scf.yield %y : f32
    }
    memref.store %s, %acc[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// ... a scan (the running value is stored each step) ...
// CHECK-LABEL: func.func @scan
// CHECK-NOT:     disc.row_block
// CHECK:         return
func.func @scan(%a: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %s = scf.for %j = %c0 to %n step %c1 iter_args(%x = %zero) -> (f32) {
      %v = memref.load %a[%i, %j] : memref<?x?xf32>
      %y = arith.addf %x, %v fastmath<reassoc> : f32
      memref.store %y, %a[%i, %j] : memref<?x?xf32>
      scf.yield %y : f32
    }
    scf.reduce
  }
  return
}

// -----

// Layer norm's shape after bufferization: the mean's accumulator is a
// one-element stack buffer copied into another (memref.copy) between the
// phases. The copy is a load and a store, not a copy loop (a stage writing
// a stack buffer), so the kernel stays a row kernel (it ran one row per
// thread, 1% of copy bandwidth on the H100).
// CHECK-LABEL: func.func @row_scalar_copy
// AUTO:          disc.row_block
// BLOCK:         disc.row_block
// THREAD-NOT:    disc.row_block
// CHECK-NOT:     memref.copy
// CHECK:         return
func.func @row_scalar_copy(%a: memref<?x?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %acc = memref.alloca() : memref<1x1xf32>
    memref.store %zero, %acc[%c0, %c0] : memref<1x1xf32>
    %copy = memref.alloca() : memref<1x1xf32>
    memref.copy %acc, %copy : memref<1x1xf32> to memref<1x1xf32>
    %init = memref.load %copy[%c0, %c0] : memref<1x1xf32>
    %s = scf.for %j = %c0 to %n step %c1 iter_args(%x = %init) -> (f32) {
      %v = memref.load %a[%i, %j] : memref<?x?xf32>
      %y = arith.addf %x, %v fastmath<reassoc> : f32
      scf.yield %y : f32
    }
    memref.store %s, %out[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// ... a stage writing a row temporary on the stack (per thread on a GPU) ...
// CHECK-LABEL: func.func @stack_row
// CHECK-NOT:     disc.row_block
// CHECK:         return
func.func @stack_row(%a: memref<?x8xf32>, %acc: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %a, %c0 : memref<?x8xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %tmp = memref.alloca() : memref<8xf32>
    scf.parallel (%j) = (%c0) to (%c8) step (%c1) {
      %v = memref.load %a[%i, %j] : memref<?x8xf32>
      %e = math.exp %v : f32
      memref.store %e, %tmp[%j] : memref<8xf32>
      scf.reduce
    }
    %s = scf.for %j = %c0 to %c8 step %c1 iter_args(%x = %zero) -> (f32) {
      %v = memref.load %tmp[%j] : memref<8xf32>
      %y = arith.addf %x, %v fastmath<reassoc> : f32
      scf.yield %y : f32
    }
    memref.store %s, %acc[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// A row length read from memory per row: auto cannot size it on the host
// and keeps one row per thread (noted); block forces 256 threads.
// CHECK-LABEL: func.func @ragged_rows
// AUTO-NOT:      disc.row_block
// AUTO:          call @disc_ral_note_variant(%c0_i64)
// AUTO-NOT:      disc.row_block
// BLOCK:         %[[T:.*]] = arith.constant 256 : index
// BLOCK:         scf.parallel
// BLOCK:           %[[LEN:.*]] = memref.load
// BLOCK:           scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[T]])
// BLOCK:         } {disc.row_block
func.func @ragged_rows(%a: memref<?x?xi32>, %lens: memref<?xindex>, %acc: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i32
  %m = memref.dim %a, %c0 : memref<?x?xi32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %len = memref.load %lens[%i] : memref<?xindex>
    %s = scf.for %j = %c0 to %len step %c1 iter_args(%x = %z) -> (i32) {
      %v = memref.load %a[%i, %j] : memref<?x?xi32>
      %y = arith.maxsi %x, %v : i32
      scf.yield %y : i32
    }
    memref.store %s, %acc[%i] : memref<?xi32>
    scf.reduce
  }
  return
}

// -----

// A stage whose length is the extent of a row view collapsed to 1-d (a
// subview of the row, then collapse_shape): the host computes it from the
// collapse's reassociation, the product of the subview's sizes (1 * 1 * n,
// folded to n).
// The reassociation is read from a copy, not through a temporary (a
// range-for over an element of the temporary read freed memory and
// crashed on the log-sum-exp of attention).
// CHECK-LABEL: func.func @collapsed_row_view
// AUTO:          %[[N:.*]] = memref.dim %{{.*}}, %c2
// AUTO-NOT:      arith.muli
// AUTO:          %[[CLAMPED:.*]] = arith.maxsi %[[N]]
// AUTO:          arith.cmpi uge, %[[CLAMPED]], %c32
// AUTO:          scf.if
// AUTO:            call @disc_ral_note_variant(%c1_i64)
// AUTO:          } else {
// AUTO:            call @disc_ral_note_variant(%c0_i64)
// BLOCK:         disc.row_block
func.func @collapsed_row_view(%x: memref<?x?x?xf32>, %sum: memref<?x?x?xf32>, %out: memref<?x?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %d0 = memref.dim %x, %c0 : memref<?x?x?xf32>
  %d1 = memref.dim %x, %c1 : memref<?x?x?xf32>
  %n = memref.dim %x, %c2 : memref<?x?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%d0, %d1) step (%c1, %c1) {
    %row = memref.subview %x[%i, %j, 0] [1, 1, %n] [1, 1, 1] : memref<?x?x?xf32> to memref<1x1x?xf32, strided<[?, ?, 1], offset: ?>>
    %dst = memref.subview %out[%i, %j, 0] [1, 1, %n] [1, 1, 1] : memref<?x?x?xf32> to memref<1x1x?xf32, strided<[?, ?, 1], offset: ?>>
    %flat = memref.collapse_shape %row [[0, 1, 2]] : memref<1x1x?xf32, strided<[?, ?, 1], offset: ?>> into memref<?xf32, strided<[?], offset: ?>>
    %flatDst = memref.collapse_shape %dst [[0, 1, 2]] : memref<1x1x?xf32, strided<[?, ?, 1], offset: ?>> into memref<?xf32, strided<[?], offset: ?>>
    %len = memref.dim %flat, %c0 : memref<?xf32, strided<[?], offset: ?>>
    scf.parallel (%k) = (%c0) to (%len) step (%c1) {
      %v = memref.load %flat[%k] : memref<?xf32, strided<[?], offset: ?>>
      %l = math.log %v : f32
      memref.store %l, %flatDst[%k] : memref<?xf32, strided<[?], offset: ?>>
      scf.reduce
    }
    scf.reduce
  }
  return
}
