func.func @helper(%a: tensor<?xf32>) -> tensor<?xf32> {
  return %a : tensor<?xf32>
}
func.func @main(%a: tensor<?xf32>) -> tensor<?xf32> {
  %0 = func.call @helper(%a) : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}