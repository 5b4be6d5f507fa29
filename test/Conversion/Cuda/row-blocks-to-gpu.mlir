// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(disc-row-blocks-to-gpu))' -verify-diagnostics | FileCheck %s

#block = #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
#thread = #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>

// A block-per-row softmax nest: one block per row, the thread loops run
// with the thread id, reductions become gpu.all_reduce (an i1 flag as
// i32), barriers only where threads may read what others wrote.
// CHECK-LABEL: func.func @softmax_rows
// CHECK-SAME:    (%[[A:.*]]: memref<?x?xf32>, %[[OUT:.*]]: memref<?x?xf32>, %[[ROWS:.*]]: index, %[[T:.*]]: index)
// CHECK:         gpu.launch blocks(%[[ROW:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[ROWS]], %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[T]],
// CHECK-NOT:       gpu.barrier
// CHECK:           %[[P:.*]]:2 = scf.for %{{.*}} = %[[TID]] to
// CHECK:           %[[MAX:.*]] = gpu.all_reduce %[[P]]#0 uniform {
// CHECK:           ^bb0(%[[L:.*]]: f32, %[[R:.*]]: f32):
// CHECK:             %[[M:.*]] = arith.maxnumf %[[L]], %[[R]]
// CHECK:             gpu.yield %[[M]] : f32
// CHECK:           %[[WIDE:.*]] = arith.extui %[[P]]#1 : i1 to i32
// CHECK:           %[[ANY:.*]] = gpu.all_reduce %[[WIDE]] uniform {
// CHECK:           ^bb0(%[[L2:.*]]: i32, %[[R2:.*]]: i32):
// CHECK:             arith.trunci %[[L2]] : i32 to i1
// CHECK:             arith.trunci %[[R2]] : i32 to i1
// CHECK:             %[[OR:.*]] = arith.ori
// CHECK:             %[[OR32:.*]] = arith.extui %[[OR]] : i1 to i32
// CHECK:             gpu.yield %[[OR32]] : i32
// CHECK:           %[[FLAG:.*]] = arith.trunci %[[ANY]] : i32 to i1
// CHECK:           arith.select %[[FLAG]]
// CHECK:           memref.store
// CHECK-NEXT:      gpu.barrier
// CHECK-NEXT:      scf.for %{{.*}} = %[[TID]] to
// CHECK:             memref.store %{{.*}}, %[[OUT]][%[[ROW]],
// CHECK:           }
// CHECK-NEXT:      gpu.barrier
// CHECK:           scf.for
// CHECK:           gpu.all_reduce
// CHECK:             arith.addf
// CHECK-NOT:       gpu.barrier
// CHECK:           gpu.terminator
// CHECK-NOT:     scf.parallel
func.func @softmax_rows(%a: memref<?x?xf32>, %out: memref<?x?xf32>, %rows: index, %t: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %false = arith.constant false
  %zero = arith.constant -0.0 : f32
  %nan = arith.constant 0x7FC00000 : f32
  scf.parallel (%i) = (%c0) to (%rows) step (%c1) {
    %row = memref.alloca() : memref<1xf32>
    %mx:2 = scf.parallel (%tid) = (%c0) to (%t) step (%c1) init (%ninf, %false) -> (f32, i1) {
      %p:2 = scf.for %j = %tid to %n step %t iter_args(%x = %ninf, %f = %false) -> (f32, i1) {
        %v = memref.load %a[%i, %j] : memref<?x?xf32>
        %y = arith.maxnumf %x, %v : f32
        %u = arith.cmpf uno, %v, %v : f32
        %g = arith.ori %f, %u : i1
        scf.yield %y, %g : f32, i1
      }
      scf.reduce(%p#0, %p#1 : f32, i1) {
      ^bb0(%l: f32, %r: f32):
        %m = arith.maxnumf %l, %r : f32
        scf.reduce.return %m : f32
      }, {
      ^bb0(%l: i1, %r: i1):
        %o = arith.ori %l, %r : i1
        scf.reduce.return %o : i1
      }
    } {mapping = [#thread]}
    %rmax = arith.select %mx#1, %nan, %mx#0 : f32
    memref.store %rmax, %row[%c0] : memref<1xf32>
    scf.parallel (%tid) = (%c0) to (%t) step (%c1) {
      scf.for %j = %tid to %n step %t {
        %v = memref.load %a[%i, %j] : memref<?x?xf32>
        %mm = memref.load %row[%c0] : memref<1xf32>
        %d = arith.subf %v, %mm : f32
        memref.store %d, %out[%i, %j] : memref<?x?xf32>
      }
      scf.reduce
    } {mapping = [#thread]}
    %s = scf.parallel (%tid) = (%c0) to (%t) step (%c1) init (%zero) -> f32 {
      %p = scf.for %j = %tid to %n step %t iter_args(%x = %zero) -> (f32) {
        %v = memref.load %out[%i, %j] : memref<?x?xf32>
        %y = arith.addf %x, %v fastmath<reassoc> : f32
        scf.yield %y : f32
      }
      scf.reduce(%p : f32) {
      ^bb0(%l: f32, %r: f32):
        %q = arith.addf %l, %r fastmath<reassoc> : f32
        scf.reduce.return %q : f32
      }
    } {mapping = [#thread]}
    scf.reduce
  } {disc.row_block, mapping = [#block]}
  return
}

// -----

#block = #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
#thread = #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>

// An f16 sum is reduced across the block as f32. A nest without the
// disc.row_block mark is left to convert-parallel-loops-to-gpu.
// CHECK-LABEL: func.func @half_sum
// CHECK:         gpu.launch
// CHECK:           %[[W:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK:           %[[S:.*]] = gpu.all_reduce %[[W]] uniform {
// CHECK:             arith.truncf %{{.*}} : f32 to f16
// CHECK:             arith.addf %{{.*}} : f16
// CHECK:             arith.extf %{{.*}} : f16 to f32
// CHECK:           arith.truncf %[[S]] : f32 to f16
// CHECK:         scf.parallel
// CHECK:           scf.parallel
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_x
func.func @half_sum(%a: memref<?x?xf16>, %acc: memref<?xf16>, %rows: index, %t: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : memref<?x?xf16>
  %zero = arith.constant -0.0 : f16
  scf.parallel (%i) = (%c0) to (%rows) step (%c1) {
    %s = scf.parallel (%tid) = (%c0) to (%t) step (%c1) init (%zero) -> f16 {
      %p = scf.for %j = %tid to %n step %t iter_args(%x = %zero) -> (f16) {
        %v = memref.load %a[%i, %j] : memref<?x?xf16>
        %y = arith.addf %x, %v fastmath<reassoc> : f16
        scf.yield %y : f16
      }
      scf.reduce(%p : f16) {
      ^bb0(%l: f16, %r: f16):
        %q = arith.addf %l, %r fastmath<reassoc> : f16
        scf.reduce.return %q : f16
      }
    } {mapping = [#thread]}
    memref.store %s, %acc[%i] : memref<?xf16>
    scf.reduce
  } {disc.row_block, mapping = [#block]}
  scf.parallel (%i) = (%c0) to (%rows) step (%c1) {
    scf.parallel (%tid) = (%c0) to (%t) step (%c1) {
      memref.store %zero, %acc[%i] : memref<?xf16>
      scf.reduce
    } {mapping = [#thread]}
    scf.reduce
  } {mapping = [#block]}
  return
}

// -----

#block = #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
#thread = #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>

// Malformed nests are errors naming the op.
func.func @two_thread_counts(%acc: memref<?xf32>, %rows: index, %t: index, %u: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%rows) step (%c1) {
    scf.parallel (%tid) = (%c0) to (%t) step (%c1) {
      memref.store %zero, %acc[%i] : memref<?xf32>
      scf.reduce
    } {mapping = [#thread]}
    // expected-error @+1 {{thread loops of a disc.row_block nest must all run 0 to the same thread count step 1}}
    scf.parallel (%tid) = (%c0) to (%u) step (%c1) {
      memref.store %zero, %acc[%i] : memref<?xf32>
      scf.reduce
    } {mapping = [#thread]}
    scf.reduce
  } {disc.row_block, mapping = [#block]}
  return
}

// -----

func.func @region_op(%acc: memref<?xf32>, %rows: index, %c: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%rows) step (%c1) {
    // expected-error @+1 {{in a disc.row_block nest must be a thread loop}}
    scf.if %c {
      memref.store %zero, %acc[%i] : memref<?xf32>
    }
    scf.reduce
  } {disc.row_block}
  return
}

// -----

#block = #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
#warp = #gpu.loop_dim_map<processor = thread_y, map = (d0) -> (d0), bound = (d0) -> (d0)>
#thread = #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>

// A warp-per-row nest: blocks of 32 x 8 threads, the warp (row) thread_y
// and its lane thread_x; the row guard stays; reductions are five xor
// shuffles (16 to 1 lanes apart) with the combiner after each (an i1 flag
// shuffled as i32); a warp barrier, not a block one, where lanes may read
// what other lanes wrote. No shared memory, no gpu.all_reduce.
// CHECK-LABEL: func.func @warp_rows
// CHECK-SAME:    (%[[A:.*]]: memref<?x?xf32>, %[[OUT:.*]]: memref<?x?xf32>, %[[ROWS:.*]]: index, %[[GROUPS:.*]]: index)
// CHECK:         gpu.launch blocks(%[[G:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[GROUPS]], %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[LANE:.*]], %[[WARP:.*]], %{{.*}}) in (%{{.*}} = %c32{{.*}}, %{{.*}} = %c8{{.*}}, %{{.*}} = %c1
// CHECK:           %[[BASE:.*]] = arith.muli %[[G]], %c8
// CHECK:           %[[ROW:.*]] = arith.addi %[[BASE]], %[[WARP]]
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %[[ROW]], %[[ROWS]]
// CHECK:           scf.if %[[IN]] {
// CHECK:             %[[P:.*]]:2 = scf.for %{{.*}} = %[[LANE]] to
// CHECK:             %[[S16:.*]], %{{.*}} = gpu.shuffle  xor %[[P]]#0, %c16_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK:             %[[M16:.*]] = arith.maximumf %[[P]]#0, %[[S16]]
// CHECK:             %[[S8:.*]], %{{.*}} = gpu.shuffle  xor %[[M16]], %c8_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK:             %[[M8:.*]] = arith.maximumf %[[M16]], %[[S8]]
// CHECK:             gpu.shuffle  xor %{{.*}}, %c4_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK:             gpu.shuffle  xor %{{.*}}, %c2_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK:             gpu.shuffle  xor %{{.*}}, %c1_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK:             %[[F:.*]] = arith.extui %[[P]]#1 : i1 to i32
// CHECK:             gpu.shuffle  xor %[[F]], %c16_i32{{.*}}, %c32_i32{{.*}} : i32
// CHECK:             arith.ori
// CHECK:             gpu.shuffle  xor %{{.*}}, %c1_i32{{.*}}, %c32_i32{{.*}} : i32
// CHECK:             arith.trunci %{{.*}} : i32 to i1
// CHECK-NOT:         nvvm.bar.warp.sync
// CHECK:             scf.for %{{.*}} = %[[LANE]] to
// CHECK:               memref.store %{{.*}}, %[[OUT]][%[[ROW]],
// CHECK:             }
// CHECK-NEXT:        %[[ALL:.*]] = arith.constant -1 : i32
// CHECK-NEXT:        nvvm.bar.warp.sync %[[ALL]] : i32
// CHECK:             scf.for %{{.*}} = %[[LANE]] to
// CHECK:               memref.load %[[OUT]][%[[ROW]],
// CHECK:             gpu.shuffle  xor %{{.*}}, %c16_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK:             arith.addf
// CHECK:           }
// CHECK:           gpu.terminator
// CHECK-NOT:     gpu.all_reduce
// CHECK-NOT:     gpu.barrier
// CHECK-NOT:     scf.parallel
func.func @warp_rows(%a: memref<?x?xf32>, %out: memref<?x?xf32>, %rows: index, %groups: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %false = arith.constant false
  %zero = arith.constant -0.0 : f32
  scf.parallel (%g) = (%c0) to (%groups) step (%c1) {
    scf.parallel (%w) = (%c0) to (%c8) step (%c1) {
      %base = arith.muli %g, %c8 : index
      %i = arith.addi %base, %w : index
      %in = arith.cmpi ult, %i, %rows : index
      scf.if %in {
        %mx:2 = scf.parallel (%lane) = (%c0) to (%c32) step (%c1) init (%ninf, %false) -> (f32, i1) {
          %p:2 = scf.for %j = %lane to %n step %c32 iter_args(%x = %ninf, %f = %false) -> (f32, i1) {
            %v = memref.load %a[%i, %j] : memref<?x?xf32>
            %y = arith.maximumf %x, %v : f32
            %u = arith.cmpf uno, %v, %v : f32
            %h = arith.ori %f, %u : i1
            scf.yield %y, %h : f32, i1
          }
          scf.reduce(%p#0, %p#1 : f32, i1) {
          ^bb0(%l: f32, %r: f32):
            %m = arith.maximumf %l, %r : f32
            scf.reduce.return %m : f32
          }, {
          ^bb0(%l: i1, %r: i1):
            %o = arith.ori %l, %r : i1
            scf.reduce.return %o : i1
          }
        } {mapping = [#thread]}
        scf.parallel (%lane) = (%c0) to (%c32) step (%c1) {
          scf.for %j = %lane to %n step %c32 {
            %v = memref.load %a[%i, %j] : memref<?x?xf32>
            %d = arith.subf %v, %mx#0 : f32
            memref.store %d, %out[%i, %j] : memref<?x?xf32>
          }
          scf.reduce
        } {mapping = [#thread]}
        %s = scf.parallel (%lane) = (%c0) to (%c32) step (%c1) init (%zero) -> f32 {
          %p = scf.for %j = %lane to %n step %c32 iter_args(%x = %zero) -> (f32) {
            %v = memref.load %out[%i, %j] : memref<?x?xf32>
            %y = arith.addf %x, %v fastmath<reassoc> : f32
            scf.yield %y : f32
          }
          scf.reduce(%p : f32) {
          ^bb0(%l: f32, %r: f32):
            %q = arith.addf %l, %r fastmath<reassoc> : f32
            scf.reduce.return %q : f32
          }
        } {mapping = [#thread]}
        memref.store %s, %out[%i, %c0] : memref<?x?xf32>
      }
      scf.reduce
    } {mapping = [#warp]}
    scf.reduce
  } {disc.row_warp, mapping = [#block]}
  return
}

// -----

#block = #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
#warp = #gpu.loop_dim_map<processor = thread_y, map = (d0) -> (d0), bound = (d0) -> (d0)>
#thread = #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>

// A warp nest whose lanes are not 32 threads is an error naming the op.
func.func @warp_of_16(%acc: memref<?xf32>, %groups: index, %rows: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{marked disc.row_warp must run 0 to blocks step 1 around one scf.parallel over its warps}}
  scf.parallel (%g) = (%c0) to (%groups) step (%c1) {
    scf.parallel (%w) = (%c0) to (%c8) step (%c1) {
      %i = arith.addi %g, %w : index
      %in = arith.cmpi ult, %i, %rows : index
      scf.if %in {
        scf.parallel (%lane) = (%c0) to (%c16) step (%c1) {
          memref.store %zero, %acc[%i] : memref<?xf32>
          scf.reduce
        } {mapping = [#thread]}
      }
      scf.reduce
    } {mapping = [#warp]}
    scf.reduce
  } {disc.row_warp, mapping = [#block]}
  return
}

// -----

#block = #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>

// A warp count that is not a constant is an error too.
func.func @dynamic_warps(%acc: memref<?xf32>, %groups: index, %warps: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{marked disc.row_warp must run 0 to blocks step 1}}
  scf.parallel (%g) = (%c0) to (%groups) step (%c1) {
    scf.parallel (%w) = (%c0) to (%warps) step (%c1) {
      memref.store %zero, %acc[%w] : memref<?xf32>
      scf.reduce
    }
    scf.reduce
  } {disc.row_warp, mapping = [#block]}
  return
}

// -----

#block = #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
#warp = #gpu.loop_dim_map<processor = thread_y, map = (d0) -> (d0), bound = (d0) -> (d0)>
#thread = #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>

// Row caches (disc.row_cache, planRowCache) become slices of the block's
// dynamic shared memory: the launch asks for each cache's bytes (rounded
// up to 16) summed, times the rows of a block; cache by cache, a slice per
// row of the block. Their deallocs go.
// CHECK-LABEL: func.func @cached_rows
// CHECK-SAME:    (%[[A:.*]]: memref<?x?xf32>, %[[H:.*]]: memref<?x?xf16>, %[[ROWS:.*]]: index, %[[T:.*]]: index, %[[N:.*]]: index)
// CHECK:         %[[FB:.*]] = arith.muli %[[N]], %c4
// CHECK:         %[[FU:.*]] = arith.ceildivui %[[FB]], %c16
// CHECK:         %[[F16:.*]] = arith.muli %[[FU]], %c16
// CHECK:         %[[S1:.*]] = arith.addi %c0{{.*}}, %[[F16]]
// CHECK:         %[[HB:.*]] = arith.muli %[[N]], %c2
// CHECK:         %[[HU:.*]] = arith.ceildivui %[[HB]], %c16
// CHECK:         %[[H16:.*]] = arith.muli %[[HU]], %c16
// CHECK:         %[[S2:.*]] = arith.addi %[[S1]], %[[H16]]
// CHECK:         %[[BLOCK:.*]] = arith.muli %[[S2]], %c1
// CHECK:         %[[I32:.*]] = arith.index_cast %[[BLOCK]] : index to i32
// CHECK:         gpu.launch {{.*}} dynamic_shared_memory_size %[[I32]]
// CHECK:           %[[SHARED:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK:           %[[FC:.*]] = memref.view %[[SHARED]][%{{.*}}][%[[N]]] : memref<?xi8, #gpu.address_space<workgroup>> to memref<?xf32, #gpu.address_space<workgroup>>
// CHECK:           %[[HC:.*]] = memref.view %[[SHARED]][%{{.*}}][%[[N]]] : memref<?xi8, #gpu.address_space<workgroup>> to memref<?xf16, #gpu.address_space<workgroup>>
// CHECK:           scf.for
// CHECK:             memref.store %{{.*}}, %[[FC]]
// CHECK:             memref.store %{{.*}}, %[[HC]]
// CHECK:           gpu.barrier
// CHECK:           memref.load %[[FC]]
// CHECK:           memref.load %[[HC]]
// CHECK-NOT:       memref.dealloc
// CHECK:           gpu.terminator
func.func @cached_rows(%a: memref<?x?xf32>, %h: memref<?x?xf16>, %rows: index, %t: index, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant -0.0 : f32
  scf.parallel (%i) = (%c0) to (%rows) step (%c1) {
    %fc = memref.alloc(%n) {alignment = 64 : i64, disc.row_cache} : memref<?xf32>
    %hc = memref.alloc(%n) {alignment = 64 : i64, disc.row_cache} : memref<?xf16>
    scf.parallel (%tid) = (%c0) to (%t) step (%c1) {
      scf.for %j = %tid to %n step %t {
        %v = memref.load %a[%i, %j] : memref<?x?xf32>
        memref.store %v, %fc[%j] : memref<?xf32>
        %w = memref.load %h[%i, %j] : memref<?x?xf16>
        memref.store %w, %hc[%j] : memref<?xf16>
      }
      scf.reduce
    } {mapping = [#thread]}
    scf.parallel (%tid) = (%c0) to (%t) step (%c1) {
      scf.for %j = %tid to %n step %t {
        %v = memref.load %fc[%j] : memref<?xf32>
        %w = memref.load %hc[%j] : memref<?xf16>
        %x = arith.extf %w : f16 to f32
        %y = arith.addf %v, %x : f32
        memref.store %y, %a[%i, %j] : memref<?x?xf32>
      }
      scf.reduce
    } {mapping = [#thread]}
    memref.dealloc %fc : memref<?xf32>
    memref.dealloc %hc : memref<?xf16>
    scf.reduce
  } {disc.row_block, mapping = [#block]}
  return
}

// -----

#block = #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
#warp = #gpu.loop_dim_map<processor = thread_y, map = (d0) -> (d0), bound = (d0) -> (d0)>
#thread = #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>

// In a warp-per-row block, each of its 8 rows (warps) has a slice of each
// cache: the warp's at thread_y times the cache's bytes.
// CHECK-LABEL: func.func @cached_warp_rows
// CHECK-SAME:    (%[[A:.*]]: memref<?x?xf32>, %[[GROUPS:.*]]: index, %[[ROWS:.*]]: index, %[[N:.*]]: index)
// CHECK:         %[[ROUNDED:.*]] = arith.muli %{{.*}}, %c16
// CHECK:         %[[SUM:.*]] = arith.addi %c0{{.*}}, %[[ROUNDED]]
// CHECK:         %[[BLOCK:.*]] = arith.muli %[[SUM]], %c8
// CHECK:         %[[I32:.*]] = arith.index_cast %[[BLOCK]] : index to i32
// CHECK:         gpu.launch blocks({{.*}}) threads(%{{.*}}, %[[TY:.*]], %{{.*}}) in {{.*}} dynamic_shared_memory_size %[[I32]]
// CHECK:           scf.if
// CHECK:             %[[SHARED:.*]] = gpu.dynamic_shared_memory
// CHECK:             %[[BYTES:.*]] = arith.muli %{{.*}}, %c16
// CHECK:             %[[SLICE:.*]] = arith.muli %[[TY]], %[[BYTES]]
// CHECK:             %[[OFFSET:.*]] = arith.addi %c0{{.*}}, %[[SLICE]]
// CHECK:             memref.view %[[SHARED]][%[[OFFSET]]][%[[N]]]
// CHECK:             nvvm.bar.warp.sync
func.func @cached_warp_rows(%a: memref<?x?xf32>, %groups: index, %rows: index, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  scf.parallel (%g) = (%c0) to (%groups) step (%c1) {
    scf.parallel (%w) = (%c0) to (%c8) step (%c1) {
      %base = arith.muli %g, %c8 : index
      %i = arith.addi %base, %w : index
      %in = arith.cmpi ult, %i, %rows : index
      scf.if %in {
        %fc = memref.alloc(%n) {alignment = 64 : i64, disc.row_cache} : memref<?xf32>
        scf.parallel (%lane) = (%c0) to (%c32) step (%c1) {
          scf.for %j = %lane to %n step %c32 {
            %v = memref.load %a[%i, %j] : memref<?x?xf32>
            memref.store %v, %fc[%j] : memref<?xf32>
          }
          scf.reduce
        } {mapping = [#thread]}
        scf.parallel (%lane) = (%c0) to (%c32) step (%c1) {
          scf.for %j = %lane to %n step %c32 {
            %v = memref.load %fc[%j] : memref<?xf32>
            %y = arith.addf %v, %v : f32
            memref.store %y, %a[%i, %j] : memref<?x?xf32>
          }
          scf.reduce
        } {mapping = [#thread]}
        memref.dealloc %fc : memref<?xf32>
      }
      scf.reduce
    } {mapping = [#warp]}
    scf.reduce
  } {disc.row_warp, mapping = [#block]}
  return
}

// -----

#block = #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
#thread = #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>

// Step loops (scf.for in the row's body, disc-cuda-sort-loops' stages):
// every thread runs them, a barrier after each thread loop that writes
// (inside the loop, before the next iteration's reads), and one at the end
// of an iteration whose last row-level store nothing synchronized; a step
// loop whose thread loops only read gets no barrier.
// CHECK-LABEL: func.func @step_loops
// CHECK:         gpu.launch
// CHECK:           scf.for %{{.*}} = %[[TID:.*]] to
// CHECK:           gpu.barrier
// CHECK-NEXT:      scf.for %[[S:.*]] = %c0{{.*}} to %{{.*}} step %c1
// CHECK-NEXT:        scf.for %{{.*}} = %[[TID]] to
// CHECK:               memref.store
// CHECK:             }
// CHECK-NEXT:        gpu.barrier
// CHECK-NEXT:        scf.for %{{.*}} = %c0{{.*}} to %[[S]] step %c1
// CHECK-NEXT:          scf.for %{{.*}} = %[[TID]] to
// CHECK:               }
// CHECK-NEXT:          gpu.barrier
// CHECK-NEXT:        }
// CHECK-NEXT:        memref.store
// CHECK-NEXT:        gpu.barrier
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.for %{{.*}} = %c0{{.*}} to %{{.*}} step %c1
// CHECK-NEXT:        scf.for %{{.*}} = %[[TID]] to
// CHECK-NEXT:          memref.load
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      gpu.terminator
// CHECK-NOT:     scf.parallel
func.func @step_loops(%a: memref<?x?xf32>, %flag: memref<?xf32>, %rows: index, %n: index, %stages: index, %t: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%row) = (%c0) to (%rows) step (%c1) {
    scf.parallel (%tid) = (%c0) to (%t) step (%c1) {
      scf.for %j = %tid to %n step %t {
        memref.store %f, %a[%row, %j] : memref<?x?xf32>
      }
      scf.reduce
    } {mapping = [#thread]}
    scf.for %s = %c0 to %stages step %c1 {
      scf.parallel (%tid) = (%c0) to (%t) step (%c1) {
        scf.for %j = %tid to %n step %t {
          %v = memref.load %a[%row, %j] : memref<?x?xf32>
          %w = arith.addf %v, %f : f32
          memref.store %w, %a[%row, %j] : memref<?x?xf32>
        }
        scf.reduce
      } {mapping = [#thread]}
      scf.for %q = %c0 to %s step %c1 {
        scf.parallel (%tid) = (%c0) to (%t) step (%c1) {
          scf.for %j = %tid to %n step %t {
            %v = memref.load %a[%row, %j] : memref<?x?xf32>
            memref.store %v, %a[%row, %q] : memref<?x?xf32>
          }
          scf.reduce
        } {mapping = [#thread]}
      }
      memref.store %f, %flag[%row] : memref<?xf32>
    }
    scf.for %s = %c0 to %stages step %c1 {
      scf.parallel (%tid) = (%c0) to (%t) step (%c1) {
        scf.for %j = %tid to %n step %t {
          %v = memref.load %a[%row, %j] : memref<?x?xf32>
        }
        scf.reduce
      } {mapping = [#thread]}
    }
    scf.reduce
  } {disc.row_block, mapping = [#block]}
  return
}
