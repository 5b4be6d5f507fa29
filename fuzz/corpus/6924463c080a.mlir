func.func @helper(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = disc.negate %x : tensor<?xf32>
  return %0 : tensor<?xf32>
}
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = func.call @helper(%x) : (tensor<?xf32>) -> tensor<?xf32>
  %1 = disc.exponential %0 : tensor<?xf32>
  return %1 : tensor<?xf32>
}