// RUN: disc-opt %s -pass-pipeline='builtin.module(func.func(disc-row-blocks-to-gpu),gpu-kernel-outlining,nvvm-attach-target{chip=sm_90 features=+ptx80},gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm,reconcile-unrealized-casts),disc-gpu-module-to-binary{format=isa})' | FileCheck %s
// RUN: disc-opt %s -pass-pipeline='builtin.module(func.func(disc-row-blocks-to-gpu),gpu-kernel-outlining,nvvm-attach-target{chip=sm_90 features=+ptx80},gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm,reconcile-unrealized-casts),disc-gpu-module-to-binary{format=isa})' | not grep "bar\.sync"

// A warp-per-row nest down to PTX (no ptxas: format=isa): the row's
// reductions are full-warp butterfly shuffles and the barrier between the
// stage that writes the output and the sum that reads it is a warp
// barrier over all 32 lanes, never a block barrier (bar.sync: the second
// RUN line), which the warps past the last row would never reach.
// CHECK: gpu.binary @warp_rows_kernel
// CHECK-SAME: shfl.sync.bfly.b32
// CHECK-SAME: bar.warp.sync {{.*}}-1;


#block = #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
#warp = #gpu.loop_dim_map<processor = thread_y, map = (d0) -> (d0), bound = (d0) -> (d0)>
#thread = #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>

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
