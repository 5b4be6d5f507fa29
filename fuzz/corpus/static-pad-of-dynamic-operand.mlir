// The mutation fuzzer's finding (seed 20783): a pad with static attributes
// of a `?` operand typed with a static result (9) that no operand size
// gives wrote past its 9-element buffer (heap corruption); now an
// InvocationError naming disc.pad.
func.func @pad_result(%a: tensor<?xf32>, %z: tensor<f32>) -> tensor<9xf32> {
  %0 = disc.pad %a, %z, low = [13], high = [2], interior = [1] : (tensor<?xf32>, tensor<f32>) -> tensor<9xf32>
  return %0 : tensor<9xf32>
}
