// RUN: disc-opt %s -allow-unregistered-dialect -split-input-file -disc-fuse-elementwise=multi-result=1 | FileCheck %s
// RUN: disc-opt %s -allow-unregistered-dialect -split-input-file -disc-fuse-elementwise | FileCheck %s --check-prefix=OFF
// RUN: disc-opt %s -allow-unregistered-dialect -split-input-file -disc-fuse-elementwise="multi-result=1 log=1" 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

#id = affine_map<(d0) -> (d0)>

// An optimizer-style update: %m (a result) is also read by the update. With
// multi-result the update's loop computes %m too: one generic, two results,
// and %m's own loop is gone.
// CHECK-LABEL: func.func @producer_also_returned
// CHECK: %[[F:.*]]:2 = linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return %[[F]]#0, %[[F]]#1
// Without the option the producer keeps its loop (two generics).
// OFF-LABEL: func.func @producer_also_returned
// OFF-COUNT-2: linalg.generic
// LOG: fused into its consumer at {{.*}} (multi-result
func.func @producer_also_returned(%m: tensor<?xf32>, %g: tensor<?xf32>, %p: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %m, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %m2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%m, %g : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %0 = arith.subf %b, %a : f32
    %1 = arith.addf %a, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<?xf32>
  %p2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %m2 : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %0 = arith.subf %a, %b : f32
    linalg.yield %0 : f32
  } -> tensor<?xf32>
  return %m2, %p2 : tensor<?xf32>, tensor<?xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// Two producers that are results and inputs of one update (Adam's exp_avg and
// exp_avg_sq): all three in one loop.
// CHECK-LABEL: func.func @two_producers_one_update
// CHECK: %[[F:.*]]:3 = linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @two_producers_one_update(%m: tensor<?xf32>, %v: tensor<?xf32>, %g: tensor<?xf32>, %p: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %m, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %m2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%m, %g : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %0 = arith.addf %a, %b : f32
    linalg.yield %0 : f32
  } -> tensor<?xf32>
  %v2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%v, %g : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %0 = arith.mulf %b, %b : f32
    %1 = arith.addf %a, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<?xf32>
  %p2 = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %m2, %v2 : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %0 = math.sqrt %c : f32
    %1 = arith.divf %b, %0 : f32
    %2 = arith.subf %a, %1 : f32
    linalg.yield %2 : f32
  } -> tensor<?xf32>
  return %m2, %v2, %p2 : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// Must NOT fuse: %t is read by an op before the consumer (%use), which
// would then need %t's own loop and the fused op would compute it twice.
// CHECK-LABEL: func.func @use_before_the_consumer
// CHECK-COUNT-3: linalg.generic
func.func @use_before_the_consumer(%x: tensor<?xf32>, %y: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = math.exp %a : f32
    linalg.yield %0 : f32
  } -> tensor<?xf32>
  %sorted = "test.opaque"(%t) : (tensor<?xf32>) -> tensor<?xf32>
  %r1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%t, %sorted : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %0 = arith.addf %a, %b : f32
    linalg.yield %0 : f32
  } -> tensor<?xf32>
  %r2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%t, %y : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %0 = arith.mulf %a, %b : f32
    linalg.yield %0 : f32
  } -> tensor<?xf32>
  return %r1, %r2 : tensor<?xf32>, tensor<?xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Must NOT fuse: the consumer reads %b2 through a broadcast (its result would
// be computed and written once per row), nor into a reduction.
// CHECK-LABEL: func.func @broadcast_and_reduction_consumers
// CHECK-COUNT-3: linalg.generic
func.func @broadcast_and_reduction_consumers(%x: tensor<?x?xf32>, %b: tensor<?xf32>) -> (tensor<?xf32>, tensor<?x?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %x, %c0 : tensor<?x?xf32>
  %n = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e1 = tensor.empty(%n) : tensor<?xf32>
  %b2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%b : tensor<?xf32>) outs(%e1 : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  } -> tensor<?xf32>
  %e2 = tensor.empty(%m, %n) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b2 : tensor<?x?xf32>, tensor<?xf32>) outs(%e2 : tensor<?x?xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %0 = arith.addf %in, %in2 : f32
    linalg.yield %0 : f32
  } -> tensor<?x?xf32>
  %cst = arith.constant 0.0 : f32
  %e3 = tensor.empty(%m) : tensor<?xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e3 : tensor<?xf32>) -> tensor<?xf32>
  %s = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%r : tensor<?x?xf32>) outs(%z : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<?xf32>
  return %b2, %r, %s : tensor<?xf32>, tensor<?x?xf32>, tensor<?xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// %sq reads %t through two operands; fused as it is, the fused op would
// read its own result, so the pattern waits for canonicalization to merge
// the two operands. Then all three fuse, and exp is computed once (this
// crashed the compiler before the operand check).
// CHECK-LABEL: func.func @consumer_reads_the_producer_twice
// CHECK: %[[F:.*]]:2 = linalg.generic
// CHECK: math.exp
// CHECK-NOT: math.exp
// CHECK: return %[[F]]#0, %[[F]]#1
func.func @consumer_reads_the_producer_twice(%x: tensor<?xf32>, %y: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = math.exp %a : f32
    linalg.yield %0 : f32
  } -> tensor<?xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%t, %t : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %0 = arith.mulf %a, %b : f32
    linalg.yield %0 : f32
  } -> tensor<?xf32>
  %r2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%t, %y : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %0 = arith.addf %a, %b : f32
    linalg.yield %0 : f32
  } -> tensor<?xf32>
  return %sq, %r2 : tensor<?xf32>, tensor<?xf32>
}
