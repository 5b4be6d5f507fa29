// RUN: disc-opt %s -canonicalize -split-input-file | FileCheck %s

// CHECK-LABEL: func @identities
// CHECK-SAME: (%[[A:.*]]: tensor<?xf32>, %[[I:.*]]: tensor<?xi32>)
// CHECK-NEXT: return %[[A]], %[[I]], %[[A]], %[[A]]
func.func @identities(%a: tensor<?xf32>, %i: tensor<?xi32>) -> (tensor<?xf32>, tensor<?xi32>, tensor<?xf32>, tensor<?xf32>) {
  %one = disc.constant dense<1.0> : tensor<1xf32>
  %zero_i = disc.constant dense<0> : tensor<1xi32>
  %0 = disc.convert %a : (tensor<?xf32>) -> tensor<?xf32>
  %1 = disc.transpose %0, dims = [0] : (tensor<?xf32>) -> tensor<?xf32>
  return %1, %i, %a, %1 : tensor<?xf32>, tensor<?xi32>, tensor<?xf32>, tensor<?xf32>
}

// -----

// x + 0.0 is NOT folded (x = -0.0 would change sign); x + (-0.0) is.
// CHECK-LABEL: func @add_zero
// CHECK: %[[R:.*]] = disc.add
// CHECK: return %[[R]], %arg0
func.func @add_zero(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %pz = disc.constant dense<0.0> : tensor<4xf32>
  %nz = disc.constant dense<-0.0> : tensor<4xf32>
  %0 = disc.add %a, %pz : tensor<4xf32>
  %1 = disc.add %a, %nz : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func @mul_one_reshape_const
// CHECK-DAG: %[[C:.*]] = disc.constant dense<{{\[\[}}1, 2], [3, 4]]> : tensor<2x2xi32>
// CHECK: return %arg0, %[[C]]
func.func @mul_one_reshape_const(%a: tensor<4xi32>) -> (tensor<4xi32>, tensor<2x2xi32>) {
  %one = disc.constant dense<1> : tensor<4xi32>
  %c = disc.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %0 = disc.multiply %a, %one : tensor<4xi32>
  %1 = disc.reshape %c : (tensor<4xi32>) -> tensor<2x2xi32>
  return %0, %1 : tensor<4xi32>, tensor<2x2xi32>
}

// -----

// x * 1 folds when the 1 is broadcast to x's dynamic shape (PyTorch's addmm
// decomposition writes mm * 1), on either side; x * 2 must NOT fold.
// CHECK-LABEL: func @mul_broadcast_one
// CHECK-SAME: (%[[A:.*]]: tensor<?x4xf32>, %{{.*}}: tensor<2xindex>, %[[I:.*]]: tensor<?xi32>, %{{.*}}: tensor<1xindex>)
// CHECK: %[[TWO:.*]] = disc.multiply %[[A]], %{{.*}} : tensor<?x4xf32>
// CHECK: return %[[A]], %[[A]], %[[TWO]], %[[I]]
func.func @mul_broadcast_one(%a: tensor<?x4xf32>, %shape: tensor<2xindex>, %i: tensor<?xi32>, %ishape: tensor<1xindex>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?xi32>) {
  %one = disc.constant dense<1.0> : tensor<f32>
  %two = disc.constant dense<2.0> : tensor<f32>
  %ione = disc.constant dense<1> : tensor<i32>
  %b1 = disc.dynamic_broadcast_in_dim %one, %shape, dims = [] : (tensor<f32>, tensor<2xindex>) -> tensor<?x4xf32>
  %b2 = disc.dynamic_broadcast_in_dim %two, %shape, dims = [] : (tensor<f32>, tensor<2xindex>) -> tensor<?x4xf32>
  %bi = disc.dynamic_broadcast_in_dim %ione, %ishape, dims = [] : (tensor<i32>, tensor<1xindex>) -> tensor<?xi32>
  %0 = disc.multiply %a, %b1 : tensor<?x4xf32>
  %1 = disc.multiply %b1, %a : tensor<?x4xf32>
  %2 = disc.multiply %a, %b2 : tensor<?x4xf32>
  %3 = disc.multiply %bi, %i : tensor<?xi32>
  return %0, %1, %2, %3 : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?xi32>
}

// -----

// Reversing only unit dims folds away; a real reverse stays.
// CHECK-LABEL: func @reverse_fold
// CHECK-NOT: disc.reverse %arg0
// CHECK: %[[R:.*]] = disc.reverse %arg1, dims = [0]
// CHECK: return %arg0, %[[R]]
func.func @reverse_fold(%a: tensor<1x?xf32>, %b: tensor<?xf32>) -> (tensor<1x?xf32>, tensor<?xf32>) {
  %0 = disc.reverse %a, dims = [0] : tensor<1x?xf32>
  %1 = disc.reverse %b, dims = [0] : tensor<?xf32>
  return %0, %1 : tensor<1x?xf32>, tensor<?xf32>
}

// -----

// A weight transposed for a matmul (x @ w.t()) is read transposed by the
// library call: the transpose folds into the contracting dims.
// CHECK-LABEL: func.func @dot_general_folds_rhs_transpose
// CHECK-NOT: disc.transpose
// CHECK: disc.dot_general %arg0, %arg1, batching_dims = [] x [], contracting_dims = [1] x [1] : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
func.func @dot_general_folds_rhs_transpose(%x: tensor<?x64xf32>, %w: tensor<32x64xf32>) -> tensor<?x32xf32> {
  %t = disc.transpose %w, dims = [1, 0] : (tensor<32x64xf32>) -> tensor<64x32xf32>
  %0 = disc.dot_general %x, %t, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<?x64xf32>, tensor<64x32xf32>) -> tensor<?x32xf32>
  return %0 : tensor<?x32xf32>
}

// -----

// Attention scores q @ k^T: the batch dims map through the permutation too.
// CHECK-LABEL: func.func @dot_general_folds_batched_transpose
// CHECK-NOT: disc.transpose
// CHECK: disc.dot_general %arg0, %arg1, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] {disc.dims = ["s0", "4", "s1", "s2"]}
func.func @dot_general_folds_batched_transpose(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>) -> tensor<?x4x?x?xf32> {
  %t = disc.transpose %k, dims = [0, 1, 3, 2] : (tensor<?x4x?x16xf32>) -> tensor<?x4x16x?xf32>
  %0 = disc.dot_general %q, %t, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] {disc.dims = ["s0", "4", "s1", "s2"]} : (tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32>
  return %0 : tensor<?x4x?x?xf32>
}

// -----

// Must NOT fold: the transpose swaps the two free dims of the lhs, which
// would swap the result's dims.
// CHECK-LABEL: func.func @dot_general_keeps_free_dim_reordering
// CHECK: %[[T:.*]] = disc.transpose %arg0, dims = [1, 0, 2]
// CHECK: disc.dot_general %[[T]], %arg1, batching_dims = [] x [], contracting_dims = [2] x [0]
func.func @dot_general_keeps_free_dim_reordering(%a: tensor<3x5x8xf32>, %b: tensor<8x2xf32>) -> tensor<5x3x2xf32> {
  %t = disc.transpose %a, dims = [1, 0, 2] : (tensor<3x5x8xf32>) -> tensor<5x3x8xf32>
  %0 = disc.dot_general %t, %b, batching_dims = [] x [], contracting_dims = [2] x [0] : (tensor<5x3x8xf32>, tensor<8x2xf32>) -> tensor<5x3x2xf32>
  return %0 : tensor<5x3x2xf32>
}

// -----

// upsample_bilinear2d's backward: the gradient [N, C, H', W'] moved to
// [H', W', N, C] for a scatter at (h', w') positions. The transpose keeps
// the window dims (N, C) in order and the batch dims (H', W') in order, so
// the scatter reads the gradient where it lies: window dims [0, 1].
// CHECK-LABEL: func.func @scatter_folds_updates_transpose
// CHECK-NOT: disc.transpose
// CHECK: disc.scatter %arg0[%arg1], %arg2, kind = add, update_window_dims = [0, 1], inserted_window_dims = [2, 3], scatter_dims_to_operand_dims = [2, 3], index_vector_dim = 2 {disc.dims = ["1", "s0", "s1", "s1"]}
func.func @scatter_folds_updates_transpose(%a: tensor<1x?x?x?xf32>, %i: tensor<?x?x2xi64>, %g: tensor<1x?x?x?xf32>) -> tensor<1x?x?x?xf32> {
  %t = disc.transpose %g, dims = [2, 3, 0, 1] : (tensor<1x?x?x?xf32>) -> tensor<?x?x1x?xf32>
  %0 = disc.scatter %a[%i], %t, kind = add, update_window_dims = [2, 3], inserted_window_dims = [2, 3], scatter_dims_to_operand_dims = [2, 3], index_vector_dim = 2 {disc.dims = ["1", "s0", "s1", "s1"]} : (tensor<1x?x?x?xf32>, tensor<?x?x2xi64>, tensor<?x?x1x?xf32>) -> tensor<1x?x?x?xf32>
  return %0 : tensor<1x?x?x?xf32>
}

// -----

// Must NOT fold: the transpose swaps the two window dims (the k-th window
// dim covers the k-th operand dim: folding would swap N and C).
// CHECK-LABEL: func.func @scatter_keeps_window_reordering
// CHECK: %[[T:.*]] = disc.transpose %arg2, dims = [2, 3, 1, 0]
// CHECK: disc.scatter %arg0[%arg1], %[[T]], kind = add, update_window_dims = [2, 3]
func.func @scatter_keeps_window_reordering(%a: tensor<4x4x8x8xf32>, %i: tensor<5x6x2xi64>, %g: tensor<4x4x5x6xf32>) -> tensor<4x4x8x8xf32> {
  %t = disc.transpose %g, dims = [2, 3, 1, 0] : (tensor<4x4x5x6xf32>) -> tensor<5x6x4x4xf32>
  %0 = disc.scatter %a[%i], %t, kind = add, update_window_dims = [2, 3], inserted_window_dims = [2, 3], scatter_dims_to_operand_dims = [2, 3], index_vector_dim = 2 : (tensor<4x4x8x8xf32>, tensor<5x6x2xi64>, tensor<5x6x4x4xf32>) -> tensor<4x4x8x8xf32>
  return %0 : tensor<4x4x8x8xf32>
}

// -----

// Must NOT fold: the transpose swaps two batch dims (the k-th batch dim of
// the updates pairs with the k-th of the indices).
// CHECK-LABEL: func.func @scatter_keeps_batch_reordering
// CHECK: %[[T:.*]] = disc.transpose %arg2, dims = [1, 0, 2]
// CHECK: disc.scatter %arg0[%arg1], %[[T]]
func.func @scatter_keeps_batch_reordering(%a: tensor<9x4xf32>, %i: tensor<5x6x1xi64>, %g: tensor<6x5x4xf32>) -> tensor<9x4xf32> {
  %t = disc.transpose %g, dims = [1, 0, 2] : (tensor<6x5x4xf32>) -> tensor<5x6x4xf32>
  %0 = disc.scatter %a[%i], %t, kind = add, update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2 : (tensor<9x4xf32>, tensor<5x6x1xi64>, tensor<5x6x4xf32>) -> tensor<9x4xf32>
  return %0 : tensor<9x4xf32>
}

// -----

// Two embedding gradients of one table (or one and a tied projection's
// gradient): the add of a scatter into zeros becomes the scatter into the
// other addend; a chain of two folds into one scatter into the other.
// CHECK-LABEL: func.func @add_folds_into_scatter_of_zeros
// CHECK-NOT: disc.add
// CHECK-NOT: dynamic_broadcast_in_dim
// CHECK: %[[S:.*]] = disc.scatter %arg0[%arg1], %arg2, kind = add
// CHECK: return %[[S]]
func.func @add_folds_into_scatter_of_zeros(%x: tensor<?x32xf32>, %i: tensor<1x17x1xi64>, %u: tensor<1x17x32xf32>, %n: index) -> tensor<?x32xf32> {
  %zero = disc.constant dense<0.000000e+00> : tensor<f32>
  %c32 = arith.constant 32 : index
  %shape = tensor.from_elements %n, %c32 : tensor<2xindex>
  %z = disc.dynamic_broadcast_in_dim %zero, %shape, dims = [] : (tensor<f32>, tensor<2xindex>) -> tensor<?x32xf32>
  %s = disc.scatter %z[%i], %u, kind = add, update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2 : (tensor<?x32xf32>, tensor<1x17x1xi64>, tensor<1x17x32xf32>) -> tensor<?x32xf32>
  %r = disc.add %x, %s : tensor<?x32xf32>
  return %r : tensor<?x32xf32>
}

// CHECK-LABEL: func.func @add_of_two_scatters_of_zeros
// CHECK-NOT: disc.add
// CHECK: %[[Z:.*]] = disc.constant dense<0.000000e+00> : tensor<50x32xf32>
// CHECK: %[[S1:.*]] = disc.scatter %[[Z]][%arg1], %arg2, kind = add
// CHECK: %[[S2:.*]] = disc.scatter %[[S1]][%arg0], %arg2, kind = add
// CHECK: return %[[S2]]
func.func @add_of_two_scatters_of_zeros(%i: tensor<1x17x1xi64>, %j: tensor<1x17x1xi64>, %u: tensor<1x17x32xf32>) -> tensor<50x32xf32> {
  %zero = disc.constant dense<0.000000e+00> : tensor<f32>
  %z = disc.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<50x32xf32>
  %s1 = disc.scatter %z[%i], %u, kind = add, update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2 : (tensor<50x32xf32>, tensor<1x17x1xi64>, tensor<1x17x32xf32>) -> tensor<50x32xf32>
  %s2 = disc.scatter %z[%j], %u, kind = add, update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2 : (tensor<50x32xf32>, tensor<1x17x1xi64>, tensor<1x17x32xf32>) -> tensor<50x32xf32>
  %r = disc.add %s1, %s2 : tensor<50x32xf32>
  return %r : tensor<50x32xf32>
}

// Must not fold: a scatter into something other than zeros, a scatter that
// is not an add, a scatter whose result is used elsewhere.
// CHECK-LABEL: func.func @add_keeps_other_scatters
// CHECK-COUNT-3: disc.add
func.func @add_keeps_other_scatters(%x: tensor<50x32xf32>, %i: tensor<1x17x1xi64>, %u: tensor<1x17x32xf32>) -> (tensor<50x32xf32>, tensor<50x32xf32>, tensor<50x32xf32>, tensor<50x32xf32>) {
  %one = disc.constant dense<1.000000e+00> : tensor<f32>
  %ones = disc.broadcast_in_dim %one, dims = [] : (tensor<f32>) -> tensor<50x32xf32>
  %s1 = disc.scatter %ones[%i], %u, kind = add, update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2 : (tensor<50x32xf32>, tensor<1x17x1xi64>, tensor<1x17x32xf32>) -> tensor<50x32xf32>
  %r1 = disc.add %x, %s1 : tensor<50x32xf32>
  %zero = disc.constant dense<0.000000e+00> : tensor<f32>
  %z = disc.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<50x32xf32>
  %s2 = disc.scatter %z[%i], %u, kind = max, update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2 : (tensor<50x32xf32>, tensor<1x17x1xi64>, tensor<1x17x32xf32>) -> tensor<50x32xf32>
  %r2 = disc.add %x, %s2 : tensor<50x32xf32>
  %s3 = disc.scatter %z[%i], %u, kind = add, update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2 : (tensor<50x32xf32>, tensor<1x17x1xi64>, tensor<1x17x32xf32>) -> tensor<50x32xf32>
  %r3 = disc.add %x, %s3 : tensor<50x32xf32>
  return %r1, %r2, %r3, %s3 : tensor<50x32xf32>, tensor<50x32xf32>, tensor<50x32xf32>, tensor<50x32xf32>
}
