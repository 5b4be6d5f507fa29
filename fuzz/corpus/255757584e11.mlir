func.func @index_opaque_coordinates(%x: tensor<3x5x7xf32>, %coords: tensor<?x6x2xi64>) -> tensor<3x4x6xf32> {
  %0 = disc.gather %x[%coords] slice_sizes = [3, 1, 1], offset_dims = [0], collapsed_slice_dims = [1, 2], start_index_map = [1, 2], index_vector_dim = 2 : (tensor<3x5x7xf32>, tensor<?x6x2xi64>) -> tensor<3x4x6xf32>
  return %0 : tensor<3x4x6xf32>
}