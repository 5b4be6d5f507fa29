// RUN: disc-opt %s -split-input-file -disc-fuse-elementwise | FileCheck %s
// RUN: disc-opt %s -split-input-file -disc-fuse-elementwise=recompute-broadcasts=1 | FileCheck %s
// RUN: disc-opt %s -split-input-file -disc-fuse-elementwise=log=1 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// A producer whose payload reads its init: stitch fusion writes a row's
// log-sum-exp, log(sum) + max, over the max's buffer. Must NOT fuse into a
// consumer that reads it through a broadcast (x - lse over the row):
// upstream's fusion keeps such a result as a result of the fused op,
// indexed without the broadcast dim, so each element along the row would
// add log(sum) again to what the previous element wrote. On either target
// (recompute-broadcasts too: the producer is cheap, so the recompute rule
// does not decide it).
// CHECK-LABEL: func.func @init_read_through_broadcast_stays
// CHECK:       %[[LSE:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<?xf32>) outs(%arg2 : tensor<?xf32>)
// CHECK:         math.log
// CHECK:         arith.addf
// CHECK:       linalg.generic {{.*}} ins(%arg0, %[[LSE]] : tensor<?x?xf32>, tensor<?xf32>)
// CHECK-NOT:     math.log
// CHECK:       return
// LOG: [disc] fusion: not fused ({{.*}} reads its init, which linalg.generic at {{.*}} would rewrite once per broadcast element)
#row = affine_map<(d0, d1) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @init_read_through_broadcast_stays(%x: tensor<?x?xf32>, %sum: tensor<?xf32>, %max: tensor<?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %x, %c0 : tensor<?x?xf32>
  %n = tensor.dim %x, %c1 : tensor<?x?xf32>
  %lse = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%sum : tensor<?xf32>) outs(%max : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.log %in : f32
    %1 = arith.addf %0, %out : f32
    linalg.yield %1 : f32
  } -> tensor<?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %lse : tensor<?x?xf32>, tensor<?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %0 = arith.subf %in, %in2 : f32
    linalg.yield %0 : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

// Read through a permutation, each element of the producer's result is
// written once, from its init: that fuses (one loop).
// CHECK-LABEL: func.func @init_read_elementwise_fuses
// CHECK:       linalg.generic
// CHECK:         math.log
// CHECK:         arith.addf
// CHECK:         arith.subf
// CHECK-NOT:   linalg.generic
// CHECK:       return
func.func @init_read_elementwise_fuses(%x: tensor<?xf32>, %sum: tensor<?xf32>, %max: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %lse = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%sum : tensor<?xf32>) outs(%max : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.log %in : f32
    %1 = arith.addf %0, %out : f32
    linalg.yield %1 : f32
  } -> tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x, %lse : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %0 = arith.subf %in, %in2 : f32
    linalg.yield %0 : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// A result nothing uses whose init the payload reads (a multi-result
// fusion's `tril(v)` written over v): the result goes and its init becomes
// an input, so bufferization needs no copy of v to write over. The other
// result, its init and the payload stay as they were.
// CHECK-LABEL: func.func @dead_result_reading_its_init
// CHECK-SAME:    (%[[V:.*]]: tensor<?xf32>, %[[X:.*]]: tensor<?xf32>)
// CHECK:       %[[E:.*]] = tensor.empty
// CHECK:       %[[R:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[V]] : tensor<?xf32>, tensor<?xf32>) outs(%[[E]] : tensor<?xf32>) attrs = {disc.kept}
// CHECK-NEXT:  ^bb0(%[[IN:.*]]: f32, %[[VIN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:    %[[S:.*]] = arith.addf %[[IN]], %[[VIN]]
// CHECK-NEXT:    %[[M:.*]] = arith.mulf %[[S]], %[[S]]
// CHECK-NEXT:    linalg.yield %[[M]] : f32
// CHECK:       return %[[R]]
func.func @dead_result_reading_its_init(%v: tensor<?xf32>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%d) : tensor<?xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%v, %e : tensor<?xf32>, tensor<?xf32>) attrs = {disc.kept} {
  ^bb0(%in: f32, %out: f32, %out2: f32):
    %s = arith.addf %in, %out : f32
    %m = arith.mulf %s, %s : f32
    linalg.yield %s, %m : f32, f32
  } -> (tensor<?xf32>, tensor<?xf32>)
  return %r#1 : tensor<?xf32>
}

// -----

// Must NOT touch a result that is used, even when its init is read.
// CHECK-LABEL: func.func @used_result_reading_its_init_stays
// CHECK:       %[[R:.*]]:2 = linalg.generic {{.*}} ins(%{{.*}} : tensor<?xf32>) outs(%{{.*}}, %{{.*}} : tensor<?xf32>, tensor<?xf32>)
// CHECK:       return %[[R]]#0, %[[R]]#1
func.func @used_result_reading_its_init_stays(%v: tensor<?xf32>, %x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%d) : tensor<?xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%v, %e : tensor<?xf32>, tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32, %out2: f32):
    %s = arith.addf %in, %out : f32
    %m = arith.mulf %s, %s : f32
    linalg.yield %s, %m : f32, f32
  } -> (tensor<?xf32>, tensor<?xf32>)
  return %r#0, %r#1 : tensor<?xf32>, tensor<?xf32>
}

// -----

// Must NOT rewrite a reduction's dead result: its out argument is the
// running value (here the max that the sum's payload reads), not the init.
// CHECK-LABEL: func.func @dead_result_of_a_reduction_stays
// CHECK:       %[[R:.*]]:2 = linalg.generic {{.*}} ins(%{{.*}} : tensor<?xf32>) outs(%{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>)
// CHECK:       return %[[R]]#1
func.func @dead_result_of_a_reduction_stays(%x: tensor<?xf32>, %m: tensor<f32>, %s: tensor<f32>) -> tensor<f32> {
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%x : tensor<?xf32>) outs(%m, %s : tensor<f32>, tensor<f32>) {
  ^bb0(%in: f32, %mx: f32, %sum: f32):
    %0 = arith.maximumf %in, %mx : f32
    %1 = arith.addf %sum, %0 : f32
    linalg.yield %0, %1 : f32, f32
  } -> (tensor<f32>, tensor<f32>)
  return %r#1 : tensor<f32>
}
