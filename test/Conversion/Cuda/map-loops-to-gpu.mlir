// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(disc-map-loops-to-gpu{block-size=128 row-variant=auto vectorize=false index32-limit=0})' -verify-diagnostics | FileCheck %s

// A 2-d elementwise nest: one grid over rows * cols, innermost dim fastest.
// CHECK-LABEL: func.func @elementwise
// CHECK:         %[[TOTAL:.*]] = arith.muli
// CHECK:         %[[C128:.*]] = arith.constant 128 : index
// CHECK:         %[[BLOCKS:.*]] = arith.ceildivui %[[TOTAL]], %[[C128]]
// CHECK:         scf.parallel (%[[BX:.*]]) = (%{{.*}}) to (%[[BLOCKS]])
// CHECK:           scf.parallel (%[[TX:.*]]) = (%{{.*}}) to (%[[C128]])
// CHECK:             %[[START:.*]] = arith.muli %[[BX]], %[[C128]]
// CHECK:             %[[LIN:.*]] = arith.addi %[[START]], %[[TX]]
// CHECK:             %[[IN:.*]] = arith.cmpi ult, %[[LIN]], %[[TOTAL]]
// CHECK:             scf.if %[[IN]]
// CHECK:               arith.remui %[[LIN]]
// CHECK:               arith.divui %[[LIN]]
// CHECK:               memref.load
// CHECK:               math.exp
// CHECK:               memref.store
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
// CHECK-NOT:     scf.parallel
func.func @elementwise(%a: memref<?x?xf32>, %b: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<?x?xf32>
    %e = math.exp %v : f32
    memref.store %e, %b[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return
}

// -----

// A stitch-style row nest: one thread per row; the per-row parallel stage
// becomes a sequential loop in the thread (no nested parallel loop left).
// CHECK-LABEL: func.func @row_per_thread
// CHECK:         scf.parallel
// CHECK:           scf.parallel
// CHECK:             scf.if
// CHECK:               scf.for
// CHECK:               scf.for
// CHECK-NOT:           scf.parallel
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x
func.func @row_per_thread(%a: memref<?x?xf32>, %b: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %acc = memref.alloca() : memref<1xf32>
    %s = scf.for %j = %c0 to %n step %c1 iter_args(%x = %zero) -> (f32) {
      %v = memref.load %a[%i, %j] : memref<?x?xf32>
      %y = arith.addf %x, %v : f32
      scf.yield %y : f32
    }
    memref.store %s, %acc[%c0] : memref<1xf32>
    scf.parallel (%j) = (%c0) to (%n) step (%c1) {
      %v = memref.load %a[%i, %j] : memref<?x?xf32>
      %t = memref.load %acc[%c0] : memref<1xf32>
      %d = arith.divf %v, %t : f32
      memref.store %d, %b[%i, %j] : memref<?x?xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// A whole-tensor reduction in the host code (no parallel loop): the
// stores, the loop and the loads run as one single-thread grid, a host
// stack buffer becomes a device allocation, and a copy becomes a grid.
// CHECK-LABEL: func.func @host_serial
// CHECK:         %[[ACC:.*]] = memref.alloc() : memref<f32>
// CHECK-NOT:     memref.alloca
// CHECK:         scf.parallel
// CHECK:           scf.parallel
// CHECK:             scf.if
// CHECK:               memref.store %{{.*}}, %[[ACC]][]
// CHECK:               scf.for
// CHECK:               memref.store %{{.*}}, %[[ACC]][]
// CHECK:               %[[V:.*]] = memref.load %[[ACC]][]
// CHECK:               memref.store %[[V]], %{{.*}}[]
// CHECK:         {mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK-NOT:     scf.parallel
// CHECK-NOT:     memref.copy
func.func @host_serial(%a: memref<?xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloca() : memref<f32>
  memref.store %zero, %acc[] : memref<f32>
  %n = memref.dim %a, %c0 : memref<?xf32>
  %init = memref.load %acc[] : memref<f32>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%x = %init) -> (f32) {
    %v = memref.load %a[%i] : memref<?xf32>
    %y = arith.addf %x, %v : f32
    scf.yield %y : f32
  }
  memref.store %s, %acc[] : memref<f32>
  memref.copy %acc, %out : memref<f32> to memref<f32>
  return
}

// -----

// A check of a value read from memory runs in the grid that reads it; a
// later check of the same condition after the op that ends the run (a
// check of a host value here) is dropped, and a later check of another
// condition of the run moves into it. The walk over the block used to
// visit the dropped check after erasing it (a crash on GraphNet's
// Fast-SCNN). An allocation does not end a run.
// CHECK-LABEL: func.func @later_checks
// CHECK:         scf.parallel
// CHECK:           scf.parallel
// CHECK:             memref.load
// CHECK:             cf.assert %{{.*}}, "in bounds"
// CHECK:             cf.assert %{{.*}}, "positive"
// CHECK:         cf.assert %arg2, "host"
// CHECK:         memref.alloc
// CHECK-NOT:     cf.assert
// CHECK:         return
func.func @later_checks(%m: memref<i64>, %out: memref<4xi64>, %flag: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0 : i64
  %v = memref.load %m[] : memref<i64>
  %ok = arith.cmpi sge, %v, %zero : i64
  %pos = arith.cmpi sgt, %v, %zero : i64
  cf.assert %ok, "in bounds"
  cf.assert %flag, "host"
  %a = memref.alloc() : memref<4xi64>
  cf.assert %ok, "in bounds (again)"
  cf.assert %pos, "positive"
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %zero, %a[%i] : memref<4xi64>
    scf.reduce
  }
  memref.copy %a, %out : memref<4xi64> to memref<4xi64>
  return
}

// -----

// Bounds with a lower bound and a step: trip count ceildiv(ub - lb, step),
// induction variable lb + index * step.
// CHECK-LABEL: func.func @strided
// CHECK:         %[[EXT:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK:         %[[POS:.*]] = arith.maxsi %[[EXT]], %{{.*}} : index
// CHECK:         arith.ceildivui %[[POS]], %{{.*}} : index
// CHECK:         scf.if
// CHECK:           %[[SCALED:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK:           %[[IV:.*]] = arith.addi %{{.*}}, %[[SCALED]] : index
// CHECK:           memref.store %{{.*}}, %{{.*}}[%[[IV]]]
func.func @strided(%b: memref<?xf32>, %lb: index, %ub: index) {
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%lb) to (%ub) step (%c3) {
    memref.store %one, %b[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// A constant single-iteration nest gets a one-thread block.
// CHECK-LABEL: func.func @single
// CHECK:         scf.parallel
// CHECK:           scf.parallel (%{{.*}}) = (%{{.*}}) to (%c1{{.*}}) step
func.func @single(%b: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    memref.store %one, %b[] : memref<f32>
    scf.reduce
  }
  return
}

// -----

// A library call of the host code stays on the host, between the grids;
// one inside a loop nest cannot run in a kernel.
// CHECK-LABEL: func.func @library_call
// CHECK:         call @disc_ral_cuda_matmul_f32
// CHECK-NEXT:    return
func.func private @disc_ral_cuda_matmul_f32(memref<?x?xf32>)
func.func @library_call(%a: memref<?x?xf32>) {
  func.call @disc_ral_cuda_matmul_f32(%a) : (memref<?x?xf32>) -> ()
  return
}

// -----

func.func private @disc_ral_cuda_matmul_f32(memref<?x?xf32>)
func.func @library_call_in_loop(%a: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    // expected-error @+1 {{calls @disc_ral_cuda_matmul_f32 (a library or runtime call), which the cuda target does not support yet}}
    func.call @disc_ral_cuda_matmul_f32(%a) : (memref<?x?xf32>) -> ()
    scf.reduce
  }
  return
}

// -----

// Must not: heap allocation per iteration.
func.func @alloc_in_loop(%a: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    // expected-error @+1 {{inside a loop nest cannot run in a GPU kernel (heap allocation per iteration)}}
    %t = memref.alloc(%n) : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// Must not: a value read from device memory steering host code (a
// data-dependent size).
func.func @data_dependent(%a: memref<index>) -> memref<?xf32> {
  %n = memref.load %a[] : memref<index>
  // expected-error @+1 {{uses a value that host code reads from device memory}}
  %b = memref.alloc(%n) : memref<?xf32>
  return %b : memref<?xf32>
}

// -----

// A one-element buffer written once on the host with a value computed from
// shapes and only read afterwards: the reads take the value (a kernel
// argument on the GPU), with no one-thread grid for the write.
// CHECK-LABEL: func.func @host_scalar
// CHECK-NOT:     memref.alloc() : memref<f32>
// CHECK:         %[[LEN:.*]] = arith.sitofp
// CHECK:         scf.parallel
// CHECK:           scf.parallel
// CHECK:             arith.divf %{{.*}}, %[[LEN]]
// CHECK-NOT:     scf.parallel
func.func @host_scalar(%a: memref<?x?xf32>, %b: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  %ni = arith.index_cast %n : index to i64
  %nf = arith.sitofp %ni : i64 to f32
  %len = memref.alloc() : memref<f32>
  memref.store %nf, %len[] : memref<f32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<?x?xf32>
    %l = memref.load %len[] : memref<f32>
    %d = arith.divf %v, %l : f32
    memref.store %d, %b[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return
}

// -----

// Must not: a one-element buffer that is returned (or written twice) keeps
// its store, which runs as a one-thread grid.
// CHECK-LABEL: func.func @returned_scalar
// CHECK:         %[[OUT:.*]] = memref.alloc() : memref<f32>
// CHECK:         scf.parallel
// CHECK:           scf.parallel
// CHECK:             memref.store %{{.*}}, %[[OUT]][]
// CHECK:         return %[[OUT]]
func.func @returned_scalar(%a: memref<?xf32>) -> memref<f32> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %ni = arith.index_cast %n : index to i64
  %nf = arith.sitofp %ni : i64 to f32
  %out = memref.alloc() : memref<f32>
  memref.store %nf, %out[] : memref<f32>
  return %out : memref<f32>
}

// -----

// A reassociable sum of a whole range into one element: cut into parts of
// `chunk` consecutive elements (at least 4096; at most 4096 parts), both
// computed on the host. A row kernel of `parts` rows reduces each part
// from the identity (-0.0) into a slot of its own (for such rows, one
// block per row: the block's threads then combine); then a one-row row
// kernel adds the element's value, the slots and the last elements (fewer
// than a chunk: the second phase). No fill, no atomics. The part reads the
// input through row p of a [parts, chunk] view (the chunk a multiple of 4),
// the form the row kernels' vector path takes. The initial store stays a
// one-thread grid before it.
// CHECK-LABEL: func.func @whole_sum
// CHECK:         %[[ACC:.*]] = memref.alloc() : memref<f32>
// CHECK:         scf.parallel
// CHECK:           scf.parallel
// CHECK:             memref.store %{{.*}}, %[[ACC]][]
// CHECK:         %[[COUNT:.*]] = arith.maxsi %{{.*}}, %c0
// CHECK:         %[[MINUS_ZERO:.*]] = arith.constant -0.000000e+00 : f32
// CHECK:         %[[SPREAD:.*]] = arith.ceildivui %[[COUNT]], %c4096
// CHECK:         %[[LEAST:.*]] = arith.maxui %[[SPREAD]], %c4096
// CHECK:         %[[QUADS:.*]] = arith.ceildivui %[[LEAST]], %c4
// CHECK:         %[[CHUNK:.*]] = arith.muli %[[QUADS]], %c4
// CHECK:         %[[PARTS:.*]] = arith.divui %[[COUNT]], %[[CHUNK]]
// CHECK:         %[[SLOTS:.*]] = memref.alloc(%[[PARTS]]) : memref<?xf32>
// CHECK:         %[[WHOLE:.*]] = memref.subview %arg0[0] [%[[TAIL:.*]]] [1]
// CHECK:         %[[ROWS:.*]] = memref.expand_shape %[[WHOLE]] {{\[\[}}0, 1]] output_shape [%[[PARTS]], %[[CHUNK]]]
// CHECK-NOT:     memref.atomic_rmw
// CHECK:         %[[ROW:.*]] = memref.subview %[[ROWS]][%{{.*}}, 0] [1, %[[CHUNK]]] [1, 1]
// CHECK:         vector.load %[[ROW]]
// CHECK:         arith.addf {{.*}} fastmath<reassoc>
// CHECK:         memref.store %{{.*}}, %[[SLOTS]][%{{.*}}]
// CHECK:         } {disc.row_warp
// CHECK:         memref.store %{{.*}}, %[[SLOTS]][%{{.*}}]
// CHECK:         } {disc.row_block
// CHECK:         memref.store %{{.*}}, %[[SLOTS]][%{{.*}}]
// CHECK:         } {disc.row_variants}
// CHECK:         scf.parallel (%{{.*}}) = (%{{.*}}) to (%c1{{.*}})
// CHECK:           memref.load %[[ACC]][]
// CHECK:           memref.load %[[SLOTS]]
// CHECK:           scf.for %{{.*}} = %{{.*}} to %[[COUNT]]
// CHECK:           memref.store %{{.*}}, %[[ACC]][]
// CHECK:         memref.dealloc %[[SLOTS]]
// CHECK-NOT:     memref.atomic_rmw
func.func @whole_sum(%a: memref<?xf32>) -> memref<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<f32>
  memref.store %zero, %acc[] : memref<f32>
  %n = memref.dim %a, %c0 : memref<?xf32>
  %init = memref.load %acc[] : memref<f32>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%x = %init) -> (f32) {
    %v = memref.load %a[%i] : memref<?xf32>
    %y = arith.addf %x, %v fastmath<reassoc> : f32
    scf.yield %y : f32
  }
  memref.store %s, %acc[] : memref<f32>
  return %acc : memref<f32>
}

// -----

// A sum starting from a value the host computes (disc-forward-host-scalars
// left the reduction's zero fill out) and followed by scalar work on its
// result alone (a mean: the sum divided by the host's element count,
// stored in another one-element buffer): the combining row kernel starts
// from that value, and the load, the division and its store move into it,
// after the result's store (they would be a one-thread kernel of their
// own).
// Nothing else moves: the next loop still reads the mean from memory.
// CHECK-LABEL: func.func @whole_mean
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[COUNT:.*]] = arith.sitofp
// CHECK:         %[[ACC:.*]] = memref.alloc() : memref<f32>
// CHECK:         %[[MEAN:.*]] = memref.alloc() : memref<f32>
// CHECK:         scf.if
// CHECK:           scf.parallel (%{{.*}}) = (%{{.*}}) to (%c1{{.*}})
// CHECK-NOT:         memref.load %[[ACC]][]
// CHECK:             %[[SLOTS:.*]] = arith.addf %[[ZERO]], %{{.*}} fastmath<reassoc>
// CHECK:             %[[SUM:.*]] = arith.addf %[[SLOTS]], %{{.*}} fastmath<reassoc>
// CHECK:             memref.store %[[SUM]], %[[ACC]][]
// CHECK:             %[[R:.*]] = memref.load %[[ACC]][]
// CHECK:             %[[M:.*]] = arith.divf %[[R]], %[[COUNT]] : f32
// CHECK:             memref.store %[[M]], %[[MEAN]][]
// CHECK:           } {disc.row_warp
// CHECK:         memref.load %[[MEAN]][]
func.func @whole_mean(%a: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %a, %c0 : memref<?xf32>
  %ni = arith.index_cast %n : index to i64
  %count = arith.sitofp %ni : i64 to f32
  %acc = memref.alloc() : memref<f32>
  %mean = memref.alloc() : memref<f32>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%x = %zero) -> (f32) {
    %v = memref.load %a[%i] : memref<?xf32>
    %y = arith.addf %x, %v fastmath<reassoc> : f32
    scf.yield %y : f32
  }
  memref.store %s, %acc[] : memref<f32>
  %r = memref.load %acc[] : memref<f32>
  %m = arith.divf %r, %count : f32
  memref.store %m, %mean[] : memref<f32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %a[%i] : memref<?xf32>
    %mm = memref.load %mean[] : memref<f32>
    %q = arith.subf %v, %mm : f32
    memref.store %q, %out[%i] : memref<?xf32>
    scf.reduce
  }
  memref.dealloc %acc : memref<f32>
  memref.dealloc %mean : memref<f32>
  return
}

// -----

// A range known to be at most 2048 long (an index tensor's bounds check)
// is a row kernel of one row: its block reduces the range from the
// element's value (warp shuffles in the warp variant) and stores the result,
// in one launch: no slots, no atomics.
// CHECK-LABEL: func.func @small_static_min_i64
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     memref.atomic_rmw
// CHECK:         scf.parallel (%{{.*}}) = (%{{.*}}) to (%c1{{.*}})
// CHECK:           %[[INIT:.*]] = memref.load %arg1[]
// CHECK:           scf.parallel (%{{.*}}) = (%{{.*}}) to (%c32{{.*}}) {{.*}} init (%c9223372036854775807_i64)
// CHECK:             arith.minsi
// CHECK:           arith.minsi %[[INIT]], %{{.*}}
// CHECK:           memref.store %{{.*}}, %arg1[]
// CHECK:       } {disc.row_warp
// CHECK-NOT:     memref.atomic_rmw
// CHECK-NOT:     memref.alloc
func.func @small_static_min_i64(%a: memref<16xi64>, %acc: memref<i64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %init = memref.load %acc[] : memref<i64>
  %s = scf.for %i = %c0 to %c16 step %c1 iter_args(%x = %init) -> (i64) {
    %v = memref.load %a[%i] : memref<16xi64>
    %y = arith.minsi %x, %v : i64
    scf.yield %y : i64
  }
  memref.store %s, %acc[] : memref<i64>
  return
}

// -----

// An index tensor's bounds check: its min and its max (ranges known to be
// short: one-row kernels), then a check on both. The check moves into the
// second kernel, and the two kernels become one: one launch where there
// were three. Every thread of the block runs the check.
// CHECK-LABEL: func.func @index_bounds_check
// CHECK:         scf.parallel (%{{.*}}) = (%{{.*}}) to (%c1{{.*}})
// CHECK:           arith.minsi
// CHECK:           memref.store %{{.*}}, %[[LO:.*]][]
// CHECK:           arith.maxsi
// CHECK:           memref.store %{{.*}}, %[[HI:.*]][]
// CHECK:           memref.load %[[LO]][]
// CHECK:           memref.load %[[HI]][]
// CHECK:           cf.assert %{{.*}}, "index out of range"
// CHECK:       } {disc.row_warp
// CHECK-NOT:     cf.assert
// CHECK:         return
func.func @index_bounds_check(%i: memref<16xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %big = arith.constant 9223372036854775807 : i64
  %small = arith.constant -9223372036854775808 : i64
  %size = arith.constant 7 : i64
  %lo = memref.alloc() : memref<i64>
  %hi = memref.alloc() : memref<i64>
  %mn = scf.for %k = %c0 to %c16 step %c1 iter_args(%x = %big) -> (i64) {
    %v = memref.load %i[%k] : memref<16xi64>
    %y = arith.minsi %x, %v : i64
    scf.yield %y : i64
  }
  memref.store %mn, %lo[] : memref<i64>
  %mx = scf.for %k = %c0 to %c16 step %c1 iter_args(%x = %small) -> (i64) {
    %v = memref.load %i[%k] : memref<16xi64>
    %y = arith.maxsi %x, %v : i64
    scf.yield %y : i64
  }
  memref.store %mx, %hi[] : memref<i64>
  %a = memref.load %lo[] : memref<i64>
  %b = memref.load %hi[] : memref<i64>
  %zero = arith.constant 0 : i64
  %okLo = arith.cmpi sge, %a, %zero : i64
  %okHi = arith.cmpi slt, %b, %size : i64
  %ok = arith.andi %okLo, %okHi : i1
  cf.assert %ok, "index out of range"
  memref.dealloc %lo : memref<i64>
  memref.dealloc %hi : memref<i64>
  return
}

// -----

// Scalar work whose value an op it cannot move uses (a branch, which
// needs the one-thread grid anyway) stays where it is, loads included.
// CHECK-LABEL: func.func @scalar_work_a_branch_uses
// CHECK:         } {disc.row_variants}
// CHECK:         scf.parallel
// CHECK:           memref.load %{{.*}}[] : memref<i64>
// CHECK:           scf.if
func.func @scalar_work_a_branch_uses(%i: memref<16xi64>, %out: memref<i64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %small = arith.constant -9223372036854775808 : i64
  %zero = arith.constant 0 : i64
  %acc = memref.alloc() : memref<i64>
  %mx = scf.for %k = %c0 to %c16 step %c1 iter_args(%x = %small) -> (i64) {
    %v = memref.load %i[%k] : memref<16xi64>
    %y = arith.maxsi %x, %v : i64
    scf.yield %y : i64
  }
  memref.store %mx, %acc[] : memref<i64>
  %n = memref.load %acc[] : memref<i64>
  %positive = arith.cmpi sgt, %n, %zero : i64
  scf.if %positive {
    memref.store %n, %out[] : memref<i64>
  }
  return
}

// -----

// Integer max: parts from the smallest i64, no atomic.
// CHECK-LABEL: func.func @whole_max_i64
// CHECK:         arith.constant -9223372036854775808 : i64
// CHECK-NOT:     memref.atomic_rmw
// CHECK:         arith.maxsi
// CHECK-NOT:     memref.atomic_rmw
// CHECK:         return
func.func @whole_max_i64(%a: memref<?xi64>, %acc: memref<i64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xi64>
  %init = memref.load %acc[] : memref<i64>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%x = %init) -> (i64) {
    %v = memref.load %a[%i] : memref<?xi64>
    %y = arith.maxsi %x, %v : i64
    scf.yield %y : i64
  }
  memref.store %s, %acc[] : memref<i64>
  return
}

// -----

// A whole sum of a strided 2-d view is two nested loops carrying one value:
// they become one range over i * J + j ((k / J, k % J): the same order),
// which then splits like any whole-range reduction.
// CHECK-LABEL: func.func @strided_2d_sum
// CHECK-DAG:     %[[M:.*]] = memref.dim %arg0, %c0
// CHECK-DAG:     %[[N:.*]] = memref.dim %arg0, %c1
// CHECK:         %[[J:.*]] = arith.maxsi %[[N]]
// CHECK:         scf.parallel
// CHECK:           scf.parallel
// CHECK:             scf.for %{{.*}} iter_args
// CHECK:               %[[K:.*]] = arith.addi
// CHECK-DAG:           %[[R:.*]] = arith.remui %[[K]], %[[J]]
// CHECK-DAG:           %[[Q:.*]] = arith.divui %[[K]], %[[J]]
// CHECK:               memref.load %arg0[%[[Q]], %[[R]]]
// CHECK-NOT:         memref.atomic_rmw
func.func @strided_2d_sum(%a: memref<?x?xf32, strided<[?, 1], offset: ?>>, %acc: memref<f64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32, strided<[?, 1], offset: ?>>
  %n = memref.dim %a, %c1 : memref<?x?xf32, strided<[?, 1], offset: ?>>
  %init = memref.load %acc[] : memref<f64>
  %s = scf.for %i = %c0 to %m step %c1 iter_args(%x = %init) -> (f64) {
    %t = scf.for %j = %c0 to %n step %c1 iter_args(%y = %x) -> (f64) {
      %v = memref.load %a[%i, %j] : memref<?x?xf32, strided<[?, 1], offset: ?>>
      %e = arith.extf %v : f32 to f64
      %z = arith.addf %y, %e fastmath<reassoc> : f64
      scf.yield %z : f64
    }
    scf.yield %t : f64
  }
  memref.store %s, %acc[] : memref<f64>
  return
}

// -----

// Not collapsed: an inner range that depends on the outer index (a
// triangle) stays one thread.
// CHECK-LABEL: func.func @triangle_sum
// CHECK-NOT:     memref.atomic_rmw
// CHECK-NOT:     arith.divui
// CHECK:         return
func.func @triangle_sum(%a: memref<?x?xf32>, %acc: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %init = memref.load %acc[] : memref<f32>
  %s = scf.for %i = %c0 to %m step %c1 iter_args(%x = %init) -> (f32) {
    %t = scf.for %j = %c0 to %i step %c1 iter_args(%y = %x) -> (f32) {
      %v = memref.load %a[%i, %j] : memref<?x?xf32>
      %z = arith.addf %y, %v fastmath<reassoc> : f32
      scf.yield %z : f32
    }
    scf.yield %t : f32
  }
  memref.store %s, %acc[] : memref<f32>
  return
}

// -----

// A float max (NaN-propagating: no atomic has its rule) splits the same
// way: parts from -inf, each into a slot of its own, then the one-row row
// kernel over the slots and the last elements.
// CHECK-LABEL: func.func @whole_max_f32
// CHECK:         %[[LEAST:.*]] = arith.maxui %{{.*}}, %c4096
// CHECK:         %[[QUADS:.*]] = arith.ceildivui %[[LEAST]], %c4
// CHECK:         %[[CHUNK:.*]] = arith.muli %[[QUADS]], %c4
// CHECK:         %[[PARTS:.*]] = arith.divui %{{.*}}, %[[CHUNK]]
// CHECK:         %[[SLOTS:.*]] = memref.alloc(%[[PARTS]]) : memref<?xf32>
// CHECK-NOT:     memref.atomic_rmw
// CHECK:         scf.parallel (%[[P:.*]]) = (%{{.*}}) to (%{{.*}})
// CHECK:           scf.parallel {{.*}} init (%cst{{.*}})
// CHECK:             arith.maximumf
// CHECK:           memref.store %{{.*}}, %[[SLOTS]][%[[P]]]
// CHECK:         scf.if
// CHECK:           scf.parallel (%{{.*}}) = (%{{.*}}) to (%c1{{.*}})
// CHECK:             scf.parallel
// CHECK:               memref.load %[[SLOTS]]
// CHECK:               arith.maximumf
// CHECK:             memref.store %{{.*}}, %arg1[]
// CHECK:         memref.dealloc %[[SLOTS]]
// CHECK-NOT:     memref.atomic_rmw
func.func @whole_max_f32(%a: memref<?xf32>, %acc: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %init = memref.load %acc[] : memref<f32>
  %m = scf.for %i = %c0 to %n step %c1 iter_args(%x = %init) -> (f32) {
    %v = memref.load %a[%i] : memref<?xf32>
    %y = arith.maximumf %x, %v : f32
    scf.yield %y : f32
  }
  memref.store %m, %acc[] : memref<f32>
  return
}

// -----

// Must not: a sum not marked reassociable, or a loop that also writes
// memory stay one-thread grids.
// CHECK-LABEL: func.func @not_parallelized
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     memref.atomic_rmw
// CHECK:         return
func.func @not_parallelized(%a: memref<?xf32>, %acc: memref<f32>, %acc2: memref<f32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %init = memref.load %acc[] : memref<f32>
  %o = scf.for %i = %c0 to %n step %c1 iter_args(%x = %init) -> (f32) {
    %v = memref.load %a[%i] : memref<?xf32>
    %y = arith.addf %x, %v : f32
    scf.yield %y : f32
  }
  memref.store %o, %acc[] : memref<f32>
  %init2 = memref.load %acc2[] : memref<f32>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%x = %init2) -> (f32) {
    %v = memref.load %a[%i] : memref<?xf32>
    memref.store %v, %out[%i] : memref<?xf32>
    %y = arith.addf %x, %v fastmath<reassoc> : f32
    scf.yield %y : f32
  }
  memref.store %s, %acc2[] : memref<f32>
  return
}

// -----

// A constant (host memory) that only loops load is read in place: a
// get_global inside the kernel (outlining clones the global into the
// kernel's module), no buffer, no copy grid. One with another user (the
// return) becomes a device buffer filled by a copy grid that reads the
// global inside the kernel. No get_global is left in the host code.
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
memref.global "private" constant @scalar : memref<f32> = dense<7.0>
// CHECK-LABEL: func.func @constants
// CHECK-NOT:     memref.alloc() : memref<4xf32>
// CHECK:         %[[SCALAR:.*]] = memref.alloc() : memref<f32>
// CHECK:         scf.parallel
// CHECK:           scf.parallel
// CHECK:             memref.get_global @scalar : memref<f32>
// CHECK:         scf.parallel
// CHECK:           scf.parallel
// CHECK:             scf.if
// CHECK:               %[[G:.*]] = memref.get_global @table : memref<4xf32>
// CHECK:               memref.load %[[G]]
// CHECK:         scf.parallel
// CHECK:           scf.parallel
// CHECK:             scf.if
// CHECK:               %[[G2:.*]] = memref.get_global @table : memref<4xf32>
// CHECK:               memref.load %[[G2]]
// CHECK:         return %[[SCALAR]] : memref<f32>
func.func @constants(%out: memref<4xf32>, %out2: memref<4xf32>) -> memref<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %t = memref.get_global @table : memref<4xf32>
  %s = memref.get_global @scalar : memref<f32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %t[%i] : memref<4xf32>
    memref.store %v, %out[%i] : memref<4xf32>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %t[%i] : memref<4xf32>
    memref.store %v, %out2[%i] : memref<4xf32>
  }
  return %s : memref<f32>
}

// -----

// A host-level scf.if that writes a buffer (disc-if-results-to-buffers
// made it so), chosen by a value read from device memory: the if, with its
// loads and the else branch's copy (a loop), runs in a one-thread grid
// after the allocation; the host returns the buffer.
// CHECK-LABEL: func.func @if_writing_a_buffer
// CHECK-SAME:    (%[[X:.*]]: memref<?xf32>, %[[I:.*]]: memref<index>, %[[U:.*]]: memref<f32>)
// CHECK:         %[[N:.*]] = memref.dim %[[X]], %c0
// CHECK:         %[[R:.*]] = memref.alloc(%[[N]]) {alignment = 64 : i64} : memref<?xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         scf.parallel
// CHECK:           memref.load %[[I]][]
// CHECK:           scf.if %{{.*}} {
// CHECK:             memref.store %{{.*}}, %[[R]]
// CHECK:           } else {
// CHECK:             memref.load %[[X]]
// CHECK:             memref.store %{{.*}}, %[[R]]
// CHECK:           }
// CHECK:         return %[[R]] : memref<?xf32>
func.func @if_writing_a_buffer(%x: memref<?xf32>, %i: memref<index>, %u: memref<f32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %k = memref.load %i[] : memref<index>
  %in = arith.cmpi ult, %k, %n : index
  %r = memref.alloc(%n) {alignment = 64 : i64} : memref<?xf32>
  scf.if %in {
    memref.copy %x, %r : memref<?xf32> to memref<?xf32>
    %v = memref.load %u[] : memref<f32>
    memref.store %v, %r[%k] : memref<?xf32>
  } else {
    memref.copy %x, %r : memref<?xf32> to memref<?xf32>
  }
  return %r : memref<?xf32>
}

// -----

// An if still yielding buffers (disc-if-results-to-buffers left it: a
// branch allocates a buffer it does not yield): the host's use of the
// result is named.
func.func @if_with_a_scratch_buffer(%x: memref<?xf32>, %i: memref<index>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %k = memref.load %i[] : memref<index>
  %in = arith.cmpi ult, %k, %n : index
  %r = scf.if %in -> (memref<?xf32>) {
    %scratch = memref.alloc(%n) : memref<?xf32>
    memref.copy %x, %scratch : memref<?xf32> to memref<?xf32>
    scf.yield %x : memref<?xf32>
  } else {
    scf.yield %x : memref<?xf32>
  }
  // expected-error @+1 {{uses a value that host code reads from device memory}}
  return %r : memref<?xf32>
}

// -----

// An if still yielding buffers (disc-if-results-to-buffers left it: the
// branches' buffers may differ in size): the host's use is named.
func.func @if_with_buffers_of_two_sizes(%x: memref<?xf32>, %y: memref<?xf32>, %i: memref<index>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %k = memref.load %i[] : memref<index>
  %in = arith.cmpi ult, %k, %n : index
  %r = scf.if %in -> (memref<?xf32>) {
    %copy = memref.alloc(%n) : memref<?xf32>
    memref.copy %x, %copy : memref<?xf32> to memref<?xf32>
    scf.yield %copy : memref<?xf32>
  } else {
    scf.yield %y : memref<?xf32>
  }
  // expected-error @+1 {{uses a value that host code reads from device memory}}
  return %r : memref<?xf32>
}
