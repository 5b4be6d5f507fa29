func.func @helper(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
  return %a : tensor<?x?xf32>
}
func.func @main(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = func.call @helper(%a) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}