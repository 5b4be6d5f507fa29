// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(disc-transpose-after-collapse))' | FileCheck %s
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(disc-transpose-after-collapse,canonicalize))' | FileCheck %s --check-prefix=FOLD

// k^T of attention, batch and head dims merged for a batched matmul: the
// reshape moves before the transpose, whose permutation becomes [0, 2, 1];
// canonicalization then folds it into the dot_general.
// CHECK-LABEL: func.func @attention_scores
// CHECK-SAME: (%[[Q:.*]]: tensor<6x5x7xf32>, %[[K:.*]]: tensor<2x3x5x7xf32>)
// CHECK: %[[R:.*]] = disc.reshape %[[K]] : (tensor<2x3x5x7xf32>) -> tensor<6x5x7xf32>
// CHECK: %[[T:.*]] = disc.transpose %[[R]], dims = [0, 2, 1] : (tensor<6x5x7xf32>) -> tensor<6x7x5xf32>
// CHECK: disc.dot_general %[[Q]], %[[T]]
// FOLD-LABEL: func.func @attention_scores
// FOLD-NOT: disc.transpose
// FOLD: disc.dot_general %{{.*}}, %{{.*}}, batching_dims = [0] x [0], contracting_dims = [2] x [2]
func.func @attention_scores(%q: tensor<6x5x7xf32>, %k: tensor<2x3x5x7xf32>) -> tensor<6x5x5xf32> {
  %t = disc.transpose %k, dims = [0, 1, 3, 2] : (tensor<2x3x5x7xf32>) -> tensor<2x3x7x5xf32>
  %r = disc.reshape %t : (tensor<2x3x7x5xf32>) -> tensor<6x7x5xf32>
  %s = disc.dot_general %q, %r, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<6x5x7xf32>, tensor<6x7x5xf32>) -> tensor<6x5x5xf32>
  return %s : tensor<6x5x5xf32>
}

// -----

// Dynamic batch, heads and length: the shape operand is permuted and the
// symbolic dims follow their dims.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[K:.*]]: tensor<?x?x?x64xf32> {{.*}}, %[[SHAPE:.*]]: tensor<3xindex>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[E0:.*]] = tensor.extract %[[SHAPE]][%[[C0]]]
// CHECK-DAG: %[[E2:.*]] = tensor.extract %[[SHAPE]][%[[C2]]]
// CHECK-DAG: %[[E1:.*]] = tensor.extract %[[SHAPE]][%[[C1]]]
// CHECK: %[[NEW:.*]] = tensor.from_elements %[[E0]], %[[E2]], %[[E1]] : tensor<3xindex>
// CHECK: %[[R:.*]] = disc.dynamic_reshape %[[K]], %[[NEW]] {disc.dims = ["s0*s1", "s2", "64"]} : (tensor<?x?x?x64xf32>, tensor<3xindex>) -> tensor<?x?x64xf32>
// CHECK: disc.transpose %[[R]], dims = [0, 2, 1] {disc.dims = ["s0*s1", "64", "s2"]} : (tensor<?x?x64xf32>) -> tensor<?x64x?xf32>
// CHECK-NOT: disc.transpose
func.func @dynamic(%k: tensor<?x?x?x64xf32> {disc.dims = ["s0", "s1", "s2", "64"]}, %shape: tensor<3xindex>) -> tensor<?x64x?xf32> {
  %t = disc.transpose %k, dims = [0, 1, 3, 2] {disc.dims = ["s0", "s1", "64", "s2"]} : (tensor<?x?x?x64xf32>) -> tensor<?x?x64x?xf32>
  %r = disc.dynamic_reshape %t, %shape {disc.dims = ["s0*s1", "64", "s2"]} : (tensor<?x?x64x?xf32>, tensor<3xindex>) -> tensor<?x64x?xf32>
  return %r : tensor<?x64x?xf32>
}

// -----

// Must NOT rewrite: the merged dims are swapped by the transpose (merging
// them needs the copy), and a reshape that splits a dim.
// CHECK-LABEL: func.func @keeps
// CHECK: %[[T:.*]] = disc.transpose %arg0, dims = [1, 0, 2]
// CHECK: disc.reshape %[[T]] : (tensor<3x2x5xf32>) -> tensor<6x5xf32>
// CHECK: %[[U:.*]] = disc.transpose %arg1, dims = [1, 0]
// CHECK: disc.reshape %[[U]] : (tensor<5x6xf32>) -> tensor<5x2x3xf32>
func.func @keeps(%x: tensor<2x3x5xf32>, %y: tensor<6x5xf32>) -> (tensor<6x5xf32>, tensor<5x2x3xf32>) {
  %t = disc.transpose %x, dims = [1, 0, 2] : (tensor<2x3x5xf32>) -> tensor<3x2x5xf32>
  %r = disc.reshape %t : (tensor<3x2x5xf32>) -> tensor<6x5xf32>
  %u = disc.transpose %y, dims = [1, 0] : (tensor<6x5xf32>) -> tensor<5x6xf32>
  %s = disc.reshape %u : (tensor<5x6xf32>) -> tensor<5x2x3xf32>
  return %r, %s : tensor<6x5xf32>, tensor<5x2x3xf32>
}
