func.func @add_tanh(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = disc.add %a, %b : tensor<?x?xf32>
  %1 = disc.tanh %0 : tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}