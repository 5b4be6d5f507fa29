func.func @library_ops_stay(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %x: tensor<1x2x5x5xf32>, %w: tensor<3x2x1x1xf32>) -> (tensor<?x?xf32>, tensor<1x3x5x5xf32>) {
  %t = disc.tanh %a : tensor<?x?xf32>
  %0 = disc.dot_general %t, %b, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %1 = disc.convolution %x, %w, strides = [1, 1], pad_low = [0, 0], pad_high = [0, 0], dilation = [1, 65537] : (tensor<1x2x5x5xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x5x5xf32>
  return %0, %1 : tensor<?x?xf32>, tensor<1x3x5x5xf32>
}