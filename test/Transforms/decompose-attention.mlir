// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(disc-decompose-attention))' | FileCheck %s

// Static shapes, no mask: q k^T (k read transposed by the product), the
// default scale 1 / sqrt(8), the row max shifted by 0 where it is -inf,
// the log-sum-exp (a sum of 0 counted as 1), exp(s - lse), then p v.
// CHECK-LABEL: func.func @plain
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x5x8xf32>, %[[K:.*]]: tensor<2x4x7x8xf32>, %[[V:.*]]: tensor<2x4x7x16xf32>)
// CHECK-NOT: disc.attention
// CHECK: %[[S:.*]] = disc.dot_general %[[Q]], %[[K]], batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] {{.*}}-> tensor<2x4x5x7xf32>
// CHECK: disc.constant dense<0.353553385> : tensor<f32>
// CHECK: %[[SCALED:.*]] = disc.multiply %[[S]],
// CHECK: %[[MAX:.*]] = disc.reduce %[[SCALED]], dims = [3], kind = max {{.*}}-> tensor<2x4x5xf32>
// CHECK: %[[NOFINITE:.*]] = disc.compare EQ, %[[MAX]],
// CHECK: %[[SHIFT:.*]] = disc.select %[[NOFINITE]], %{{.*}}, %[[MAX]]
// CHECK: disc.exponential
// CHECK: %[[SUM:.*]] = disc.reduce %{{.*}}, dims = [3], kind = sum
// CHECK: %[[EMPTY:.*]] = disc.compare EQ, %[[SUM]],
// CHECK: %[[ONE_IF_EMPTY:.*]] = disc.select %[[EMPTY]], %{{.*}}, %[[SUM]]
// CHECK: %[[LOG:.*]] = disc.log %[[ONE_IF_EMPTY]]
// CHECK: %[[LSE:.*]] = disc.add %[[SHIFT]], %[[LOG]]
// CHECK: %[[P:.*]] = disc.exponential
// CHECK: %[[OUT:.*]] = disc.dot_general %[[P]], %[[V]], batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] {{.*}}-> tensor<2x4x5x16xf32>
// CHECK: return %[[OUT]]
func.func @plain(%q: tensor<2x4x5x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x16xf32>) -> tensor<2x4x5x16xf32> {
  %0 = disc.attention %q, %k, %v : (tensor<2x4x5x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x16xf32>) -> tensor<2x4x5x16xf32>
  return %0 : tensor<2x4x5x16xf32>
}

// -----

// Dynamic sizes named by the importer: every new op carries disc.dims (the
// fusion passes see equal dims), the row broadcasts are nonexpanding, and
// heads of one symbol are not repeated (no reshape, no run-time check).
// The mask's dim 3 is the scores' symbol (nonexpanding), its dims 0 and 2
// may expand. The explicit scale is used as is.
// CHECK-LABEL: func.func @named_dynamic
// CHECK-NOT: cf.assert
// CHECK-NOT: disc.dynamic_reshape
// CHECK: disc.dot_general {{.*}} {disc.dims = ["s0", "8", "s1", "s2"]}
// CHECK: disc.constant dense<1.250000e-01> : tensor<f32>
// CHECK: disc.dynamic_broadcast_in_dim %{{.*}}, %{{.*}}, dims = [0, 1, 2, 3] nonexpanding = [1, 3] {disc.dims = ["s0", "8", "s1", "s2"]}
// CHECK: disc.add
// CHECK: disc.reduce {{.*}} kind = max {disc.dims = ["s0", "8", "s1"]}
// CHECK: disc.dynamic_broadcast_in_dim %{{.*}}, %{{.*}}, dims = [0, 1, 2] nonexpanding = [0, 1, 2] {disc.dims = ["s0", "8", "s1", "s2"]}
// CHECK-NOT: disc.attention
func.func @named_dynamic(%q: tensor<?x8x?x64xf32> {disc.dims = ["s0", "8", "s1", "64"]}, %k: tensor<?x8x?x64xf32> {disc.dims = ["s0", "8", "s2", "64"]}, %v: tensor<?x8x?x64xf32> {disc.dims = ["s0", "8", "s2", "64"]}, %m: tensor<?x8x?x?xf32> {disc.dims = ["s3", "8", "s4", "s2"]}) -> tensor<?x8x?x64xf32> {
  %0 = disc.attention %q, %k, %v mask(%m) scale = 1.250000e-01 : (tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x?xf32>) -> tensor<?x8x?x64xf32>
  return %0 : tensor<?x8x?x64xf32>
}

// -----

// Grouped-query heads of unknown counts: a run-time check that the key
// heads divide the query heads (a count of 0 divides by 1), key and value
// broadcast to [B, Hk, H / Hk, S, E] and reshaped to [B, H, S, E]; causal:
// iota over rows and keys, -inf where key > row. f16 products, the softmax
// in f32, p converted back for the second product.
// CHECK-LABEL: func.func @grouped_causal_f16
// CHECK-SAME: (%[[Q:.*]]: tensor<?x?x?x?xf16>, %[[K:.*]]: tensor<?x?x?x?xf16>, %[[V:.*]]: tensor<?x?x?x?xf16>)
// CHECK: %[[KH:.*]] = tensor.dim %[[K]], %c1
// CHECK: %[[NOKEYS:.*]] = arith.cmpi eq, %[[KH]], %c0
// CHECK: %[[DIVISOR:.*]] = arith.select %[[NOKEYS]], %c1{{.*}}, %[[KH]]
// CHECK: arith.remui
// CHECK: cf.assert %{{.*}}, "disc.attention: the query head count must be a multiple of the key/value head count"
// CHECK: %[[GROUP:.*]] = arith.divui %{{.*}}, %[[DIVISOR]]
// CHECK: %[[KB:.*]] = disc.dynamic_broadcast_in_dim %[[K]], %{{.*}}, dims = [0, 1, 3, 4] nonexpanding = [0, 1, 2, 3] : {{.*}} -> tensor<?x?x?x?x?xf16>
// CHECK: %[[KR:.*]] = disc.dynamic_reshape %[[KB]], {{.*}} -> tensor<?x?x?x?xf16>
// CHECK: %[[VB:.*]] = disc.dynamic_broadcast_in_dim %[[V]]
// CHECK: %[[VR:.*]] = disc.dynamic_reshape %[[VB]]
// CHECK: %[[S:.*]] = disc.dot_general %[[Q]], %[[KR]], {{.*}} -> tensor<?x?x?x?xf16>
// CHECK: disc.convert %[[S]] : (tensor<?x?x?x?xf16>) -> tensor<?x?x?x?xf32>
// CHECK: %[[ROW:.*]] = disc.dynamic_iota %{{.*}}, dim = 2
// CHECK: %[[COL:.*]] = disc.dynamic_iota %{{.*}}, dim = 3
// CHECK: %[[LATER:.*]] = disc.compare GT, %[[COL]], %[[ROW]]
// CHECK: disc.select %[[LATER]],
// CHECK: %[[P:.*]] = disc.convert %{{.*}} : (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf16>
// CHECK: disc.dot_general %[[P]], %[[VR]]
func.func @grouped_causal_f16(%q: tensor<?x?x?x?xf16>, %k: tensor<?x?x?x?xf16>, %v: tensor<?x?x?x?xf16>) -> tensor<?x?x?x?xf16> {
  %0 = disc.attention %q, %k, %v causal : (tensor<?x?x?x?xf16>, tensor<?x?x?x?xf16>, tensor<?x?x?x?xf16>) -> tensor<?x?x?x?xf16>
  return %0 : tensor<?x?x?x?xf16>
}

// -----

// Nothing else is touched: a function without attention is left as is.
// CHECK-LABEL: func.func @no_attention
// CHECK-NEXT: %[[P:.*]] = disc.dot_general
// CHECK-NEXT: return %[[P]]
func.func @no_attention(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %0 = disc.dot_general %a, %b, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
