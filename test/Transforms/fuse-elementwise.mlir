// RUN: disc-opt %s -split-input-file -disc-fuse-elementwise | FileCheck %s
// RUN: disc-opt %s -split-input-file -disc-fuse-elementwise=log=1 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG
// RUN: disc-opt %s -split-input-file '-disc-fuse-elementwise=recompute-broadcasts=1 log=1' 2>%t.log | FileCheck %s --check-prefix=RECOMPUTE
// RUN: FileCheck %s --check-prefix=RECOMPUTE-LOG --allow-empty < %t.log

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// A cheap producer read through a broadcast fuses (upstream behaviour):
// the bias add is recomputed per row, which costs nothing.
// CHECK-LABEL: func.func @cheap_broadcast_producer_fuses
// CHECK: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @cheap_broadcast_producer_fuses(%x: tensor<?x?xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %x, %c0 : tensor<?x?xf32>
  %n = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e1 = tensor.empty(%n) : tensor<?xf32>
  %b2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%b : tensor<?xf32>) outs(%e1 : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %in : f32
    linalg.yield %0 : f32
  } -> tensor<?xf32>
  %e2 = tensor.empty(%m, %n) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b2 : tensor<?x?xf32>, tensor<?xf32>) outs(%e2 : tensor<?x?xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %0 = arith.addf %in, %in2 : f32
    linalg.yield %0 : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// Must NOT fuse: exp of the bias read through a broadcast would run once per
// row instead of once. The producer stays its own op; the consumer reads
// its result.
// CHECK-LABEL: func.func @expensive_broadcast_producer_stays
// CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<?xf32>)
// CHECK:   math.exp
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[E]] : tensor<?x?xf32>, tensor<?xf32>)
// CHECK-NOT: math.exp
// CHECK: return
// LOG: [disc] fusion: not fused (would recompute linalg.generic
// With recompute-broadcasts (the cuda targets) it fuses: one loop, exp per
// element, and nothing is refused.
// RECOMPUTE-LABEL: func.func @expensive_broadcast_producer_stays
// RECOMPUTE:       linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<?x?xf32>, tensor<?xf32>)
// RECOMPUTE:         math.exp
// RECOMPUTE-NOT:   linalg.generic
// RECOMPUTE:       return
// RECOMPUTE-LOG-NOT: not fused
func.func @expensive_broadcast_producer_stays(%x: tensor<?x?xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32> {
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
  return %r : tensor<?x?xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// An expensive producer over the same iteration space fuses: each element
// is still computed once.
// CHECK-LABEL: func.func @expensive_same_space_producer_fuses
// CHECK: linalg.generic
// CHECK:   math.exp
// CHECK:   arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @expensive_same_space_producer_fuses(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %x, %c0 : tensor<?x?xf32>
  %n = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %ex = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  } -> tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %y : tensor<?x?xf32>, tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %0 = arith.addf %in, %in2 : f32
    linalg.yield %0 : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>

// A broadcast zero shared by two ReLUs (CSE merges them) is copied into
// each: two kernels, no zero tensor left in memory. The full-size x + 1
// that both also read must NOT be duplicated: each would read x again.
// CHECK-LABEL: func.func @cheap_shared_producer_duplicated
// CHECK: %[[ADD:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<?x?xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[ADD]] : tensor<?x?xf32>)
// CHECK:   arith.maximumf %{{.*}}, %cst
// CHECK: linalg.generic {{.*}} ins(%[[ADD]] : tensor<?x?xf32>)
// CHECK:   arith.maximumf %{{.*}}, %cst
// CHECK-NOT: linalg.generic
// CHECK: return
// LOG: [disc] fusion: duplicated linalg.generic at {{.*}} into 1 more consumers
func.func @cheap_shared_producer_duplicated(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<f32>
  %one = arith.constant 1.0 : f32
  %m = tensor.dim %x, %c0 : tensor<?x?xf32>
  %n = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %zeros = linalg.generic {indexing_maps = [#scalar, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%zero : tensor<f32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<?x?xf32>
  %plus = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %one : f32
    linalg.yield %0 : f32
  } -> tensor<?x?xf32>
  %r1 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%plus, %zeros : tensor<?x?xf32>, tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %z: f32, %out: f32):
    %0 = arith.maximumf %in, %z : f32
    linalg.yield %0 : f32
  } -> tensor<?x?xf32>
  %r2 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%plus, %zeros : tensor<?x?xf32>, tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %z: f32, %out: f32):
    %0 = arith.maximumf %in, %z : f32
    linalg.yield %0 : f32
  } -> tensor<?x?xf32>
  return %r1, %r2 : tensor<?x?xf32>, tensor<?x?xf32>
}
