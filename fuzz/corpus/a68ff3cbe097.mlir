func.func @reverse_dims(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = disc.reverse %a, dims = [1] : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}