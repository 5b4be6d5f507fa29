// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(disc-scatter-window-indices))' | FileCheck %s

// PyTorch Geometric's max aggregation: scatter_add(x, 0, idx.view(-1, 1)
// .expand_as(src), src). The column component is an iota along dim 1 and
// the row component is constant along it: dim 1 becomes a window dim and
// the index tensor shrinks to the row index, [N, 1]. The front end's
// symbolic dims (disc.dims) prove the reshapes keep the batch shape.
// CHECK-LABEL: func.func @rows
// CHECK-SAME: (%[[X:.*]]: tensor<1000x256xf32>, %[[IDX:.*]]: tensor<?xi64>, %[[SRC:.*]]: tensor<?x256xf32>)
// The broadcast index is not built: its operand ([N, 1], the unit dim
// expanded along the window dim dropped) is broadcast to the piece [N, 1].
// CHECK: %[[COL:.*]] = disc.dynamic_reshape %[[IDX]], %{{.*}} : (tensor<?xi64>, tensor<2xindex>) -> tensor<?x1xi64>
// CHECK: %[[SHAPE:.*]] = tensor.from_elements %{{.*}}, %c256 : tensor<2xindex>
// CHECK: %[[EXTENT:.*]] = tensor.extract %[[SHAPE]][%{{.*}}] : tensor<2xindex>
// CHECK: %[[VEC:.*]] = disc.dynamic_reshape %[[COL]], %{{.*}} : (tensor<?x1xi64>, tensor<1xindex>) -> tensor<?xi64>
// CHECK: %[[PIECE_SHAPE:.*]] = tensor.from_elements %[[EXTENT]], %{{.*}} : tensor<2xindex>
// CHECK: %[[PIECE:.*]] = disc.dynamic_broadcast_in_dim %[[VEC]], %[[PIECE_SHAPE]], dims = [0] : (tensor<?xi64>, tensor<2xindex>) -> tensor<?x1xi64>
// CHECK: %[[R:.*]] = disc.scatter %[[X]][%[[PIECE]]], %[[SRC]], kind = add, update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1 {disc.dims = ["1000", "256"]}
// CHECK: return %[[R]]
func.func @rows(%x: tensor<1000x256xf32>, %idx: tensor<?xi64>, %src: tensor<?x256xf32>) -> tensor<1000x256xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %n = tensor.dim %idx, %c0 : tensor<?xi64>
  %s1 = tensor.from_elements %n, %c1 : tensor<2xindex>
  %col = disc.dynamic_reshape %idx, %s1 : (tensor<?xi64>, tensor<2xindex>) -> tensor<?x1xi64>
  %s2 = tensor.from_elements %n, %c256 : tensor<2xindex>
  %rows = disc.dynamic_broadcast_in_dim %col, %s2, dims = [0, 1] {disc.dims = ["s0", "256"]} : (tensor<?x1xi64>, tensor<2xindex>) -> tensor<?x256xi64>
  %iota = disc.dynamic_iota %s2, dim = 1 {disc.dims = ["s0", "256"]} : (tensor<2xindex>) -> tensor<?x256xi64>
  %s3 = tensor.from_elements %n, %c256, %c1 : tensor<3xindex>
  %p0 = disc.dynamic_reshape %rows, %s3 {disc.dims = ["s0", "256", "1"]} : (tensor<?x256xi64>, tensor<3xindex>) -> tensor<?x256x1xi64>
  %p1 = disc.dynamic_reshape %iota, %s3 {disc.dims = ["s0", "256", "1"]} : (tensor<?x256xi64>, tensor<3xindex>) -> tensor<?x256x1xi64>
  %coords = disc.concatenate %p0, %p1 dim = 2 : (tensor<?x256x1xi64>, tensor<?x256x1xi64>) -> tensor<?x256x2xi64>
  %r = disc.scatter %x[%coords], %src, kind = add, update_window_dims = [], inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 2 {disc.dims = ["1000", "256"]} : (tensor<1000x256xf32>, tensor<?x256x2xi64>, tensor<?x256xf32>) -> tensor<1000x256xf32>
  return %r : tensor<1000x256xf32>
}

// -----

// Static shapes, rank 3 (GAT: [E, heads, channels]), the row index wrapped
// for negative values by elementwise ops: dims 1 and 2 become window dims;
// the component is not a broadcast, so it is sliced at window position 0.
// CHECK-LABEL: func.func @static_rank3
// CHECK: %[[SLICE:.*]] = disc.slice %{{.*}}, start = [0, 0, 0], limit = [6, 1, 1], strides = [1, 1, 1] : (tensor<6x4x8xi64>) -> tensor<6x1x1xi64>
// CHECK: %[[PIECE:.*]] = disc.reshape %[[SLICE]] : (tensor<6x1x1xi64>) -> tensor<6x1xi64>
// CHECK: disc.scatter %{{.*}}[%[[PIECE]]], %{{.*}}, kind = max, update_window_dims = [1, 2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1
// CHECK-SAME: (tensor<10x4x8xf32>, tensor<6x1xi64>, tensor<6x4x8xf32>) -> tensor<10x4x8xf32>
func.func @static_rank3(%x: tensor<10x4x8xf32>, %idx: tensor<6x1x1xi64>, %src: tensor<6x4x8xf32>) -> tensor<10x4x8xf32> {
  %b = disc.broadcast_in_dim %idx, dims = [0, 1, 2] : (tensor<6x1x1xi64>) -> tensor<6x4x8xi64>
  %zero = disc.constant dense<0> : tensor<6x4x8xi64>
  %ten = disc.constant dense<10> : tensor<6x4x8xi64>
  %neg = disc.compare LT, %b, %zero : (tensor<6x4x8xi64>, tensor<6x4x8xi64>) -> tensor<6x4x8xi1>
  %up = disc.add %b, %ten : tensor<6x4x8xi64>
  %rows = disc.select %neg, %up, %b : tensor<6x4x8xi1>, tensor<6x4x8xi64>
  %i1 = disc.iota dim = 1 : tensor<6x4x8xi64>
  %i2 = disc.iota dim = 2 : tensor<6x4x8xi64>
  %p0 = disc.reshape %rows : (tensor<6x4x8xi64>) -> tensor<6x4x8x1xi64>
  %p1 = disc.reshape %i1 : (tensor<6x4x8xi64>) -> tensor<6x4x8x1xi64>
  %p2 = disc.reshape %i2 : (tensor<6x4x8xi64>) -> tensor<6x4x8x1xi64>
  %coords = disc.concatenate %p0, %p1, %p2 dim = 3 : (tensor<6x4x8x1xi64>, tensor<6x4x8x1xi64>, tensor<6x4x8x1xi64>) -> tensor<6x4x8x3xi64>
  %r = disc.scatter %x[%coords], %src, kind = max, update_window_dims = [], inserted_window_dims = [0, 1, 2], scatter_dims_to_operand_dims = [0, 1, 2], index_vector_dim = 3 : (tensor<10x4x8xf32>, tensor<6x4x8x3xi64>, tensor<6x4x8xf32>) -> tensor<10x4x8xf32>
  return %r : tensor<10x4x8xf32>
}

// -----

// scatter along dim 1 (torch.scatter(x, 1, index, src)): the row component
// is the iota, the column index stays. Dim 0 becomes the window dim.
// CHECK-LABEL: func.func @along_dim1
// CHECK-SAME: (%{{.*}}: tensor<4x9xf32>, %[[IDX:.*]]: tensor<1x3xi64>
// CHECK: %[[VEC:.*]] = disc.reshape %[[IDX]] : (tensor<1x3xi64>) -> tensor<3xi64>
// CHECK: disc.broadcast_in_dim %[[VEC]], dims = [0] : (tensor<3xi64>) -> tensor<3x1xi64>
// CHECK: disc.scatter %{{.*}}[%{{.*}}], %{{.*}}, kind = replace, update_window_dims = [0], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1], index_vector_dim = 1
// CHECK-SAME: (tensor<4x9xf32>, tensor<3x1xi64>, tensor<4x3xf32>)
func.func @along_dim1(%x: tensor<4x9xf32>, %idx: tensor<1x3xi64>, %src: tensor<4x3xf32>) -> tensor<4x9xf32> {
  %cols = disc.broadcast_in_dim %idx, dims = [0, 1] : (tensor<1x3xi64>) -> tensor<4x3xi64>
  %i0 = disc.iota dim = 0 : tensor<4x3xi64>
  %p0 = disc.reshape %i0 : (tensor<4x3xi64>) -> tensor<4x3x1xi64>
  %p1 = disc.reshape %cols : (tensor<4x3xi64>) -> tensor<4x3x1xi64>
  %coords = disc.concatenate %p0, %p1 dim = 2 : (tensor<4x3x1xi64>, tensor<4x3x1xi64>) -> tensor<4x3x2xi64>
  %r = disc.scatter %x[%coords], %src, kind = replace, update_window_dims = [], inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 2 : (tensor<4x9xf32>, tensor<4x3x2xi64>, tensor<4x3xf32>) -> tensor<4x9xf32>
  return %r : tensor<4x9xf32>
}

// -----

// Must NOT rewrite: a general index (torch.scatter with an index that
// varies along every dim): the row component is not constant along dim 1.
// CHECK-LABEL: func.func @general_index
// CHECK: disc.scatter %{{.*}}[%{{.*}}], %{{.*}}, kind = add, update_window_dims = [], inserted_window_dims = [0, 1]
// CHECK-SAME: tensor<5x3x2xi64>
func.func @general_index(%x: tensor<7x3xf32>, %idx: tensor<5x3xi64>, %src: tensor<5x3xf32>) -> tensor<7x3xf32> {
  %i1 = disc.iota dim = 1 : tensor<5x3xi64>
  %p0 = disc.reshape %idx : (tensor<5x3xi64>) -> tensor<5x3x1xi64>
  %p1 = disc.reshape %i1 : (tensor<5x3xi64>) -> tensor<5x3x1xi64>
  %coords = disc.concatenate %p0, %p1 dim = 2 : (tensor<5x3x1xi64>, tensor<5x3x1xi64>) -> tensor<5x3x2xi64>
  %r = disc.scatter %x[%coords], %src, kind = add, update_window_dims = [], inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 2 : (tensor<7x3xf32>, tensor<5x3x2xi64>, tensor<5x3xf32>) -> tensor<7x3xf32>
  return %r : tensor<7x3xf32>
}

// -----

// Must NOT rewrite: indices that are not a concatenate of components, and
// a component whose reshape reorders the batch shape ([3, 2] -> [2, 3, 1]).
// CHECK-LABEL: func.func @opaque_indices
// CHECK: update_window_dims = [], inserted_window_dims = [0, 1]
// CHECK: update_window_dims = [], inserted_window_dims = [0, 1]
func.func @opaque_indices(%x: tensor<7x3xf32>, %coords: tensor<2x3x2xi64>, %idx: tensor<3x2xi64>, %src: tensor<2x3xf32>) -> (tensor<7x3xf32>, tensor<7x3xf32>) {
  %r = disc.scatter %x[%coords], %src, kind = add, update_window_dims = [], inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 2 : (tensor<7x3xf32>, tensor<2x3x2xi64>, tensor<2x3xf32>) -> tensor<7x3xf32>
  %b = disc.broadcast_in_dim %idx, dims = [0, 1] : (tensor<3x2xi64>) -> tensor<3x2xi64>
  %i1 = disc.iota dim = 1 : tensor<2x3xi64>
  %p0 = disc.reshape %b : (tensor<3x2xi64>) -> tensor<2x3x1xi64>
  %p1 = disc.reshape %i1 : (tensor<2x3xi64>) -> tensor<2x3x1xi64>
  %c = disc.concatenate %p0, %p1 dim = 2 : (tensor<2x3x1xi64>, tensor<2x3x1xi64>) -> tensor<2x3x2xi64>
  %s = disc.scatter %x[%c], %src, kind = add, update_window_dims = [], inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 2 : (tensor<7x3xf32>, tensor<2x3x2xi64>, tensor<2x3xf32>) -> tensor<7x3xf32>
  return %r, %s : tensor<7x3xf32>, tensor<7x3xf32>
}

// -----

// Must NOT rewrite: dynamic sizes the shape analysis cannot prove equal
// (no disc.dims): the reshape could regroup the batch shape.
// CHECK-LABEL: func.func @unproven_reshape
// CHECK: update_window_dims = [], inserted_window_dims = [0, 1]
func.func @unproven_reshape(%x: tensor<9x4xf32>, %rows: tensor<?x4xi64>, %s: tensor<3xindex>, %src: tensor<?x4xf32>) -> tensor<9x4xf32> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %n = tensor.dim %rows, %c0 : tensor<?x4xi64>
  %s2 = tensor.from_elements %n, %c4 : tensor<2xindex>
  %iota = disc.dynamic_iota %s2, dim = 1 : (tensor<2xindex>) -> tensor<?x4xi64>
  %p0 = disc.dynamic_reshape %rows, %s : (tensor<?x4xi64>, tensor<3xindex>) -> tensor<?x4x1xi64>
  %p1 = disc.dynamic_reshape %iota, %s : (tensor<?x4xi64>, tensor<3xindex>) -> tensor<?x4x1xi64>
  %c = disc.concatenate %p0, %p1 dim = 2 : (tensor<?x4x1xi64>, tensor<?x4x1xi64>) -> tensor<?x4x2xi64>
  %r = disc.scatter %x[%c], %src, kind = add, update_window_dims = [], inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 2 : (tensor<9x4xf32>, tensor<?x4x2xi64>, tensor<?x4xf32>) -> tensor<9x4xf32>
  return %r : tensor<9x4xf32>
}
