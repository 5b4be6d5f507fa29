func.func @static_rank3(%x: tensor<10x4x8xf32>, %idx: tensor<6x?x1xi64>, %src: tensor<6x4x8xf32>) -> tensor<10x4x8xf32> {
  %b = disc.broadcast_in_dim %idx, dims = [0, 1, 2] : (tensor<6x?x1xi64>) -> tensor<6x4x8xi64>
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