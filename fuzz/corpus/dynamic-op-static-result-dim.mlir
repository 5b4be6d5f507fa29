// The mutation fuzzer's finding (seed 1795660811): dynamic_broadcast_in_dim
// and dynamic_iota with a static result dim (7) their shape operand
// contradicts at run time corrupted the heap; now an InvocationError.
func.func @rows(%x: tensor<1000x256xf32>, %idx: tensor<?xi64>, %src: tensor<?x256xf32>) -> tensor<1000x256xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %n = tensor.dim %idx, %c0 : tensor<?xi64>
  %s1 = tensor.from_elements %n, %c1 : tensor<2xindex>
  %col = disc.dynamic_reshape %idx, %s1 : (tensor<?xi64>, tensor<2xindex>) -> tensor<?x1xi64>
  %s2 = tensor.from_elements %n, %c256 : tensor<2xindex>
  %rows = disc.dynamic_broadcast_in_dim %col, %s2, dims = [0, 1] {disc.dims = ["s0", "256"]} : (tensor<?x1xi64>, tensor<2xindex>) -> tensor<7x256xi64>
  %iota = disc.dynamic_iota %s2, dim = 1 {disc.dims = ["s0", "256"]} : (tensor<2xindex>) -> tensor<7x256xi64>
  %s3 = tensor.from_elements %n, %c256, %c1 : tensor<3xindex>
  %p0 = disc.dynamic_reshape %rows, %s3 {disc.dims = ["s0", "256", "1"]} : (tensor<7x256xi64>, tensor<3xindex>) -> tensor<?x256x1xi64>
  %p1 = disc.dynamic_reshape %iota, %s3 {disc.dims = ["s0", "256", "1"]} : (tensor<7x256xi64>, tensor<3xindex>) -> tensor<?x256x1xi64>
  %coords = disc.concatenate %p0, %p1 dim = 2 : (tensor<?x256x1xi64>, tensor<?x256x1xi64>) -> tensor<?x256x2xi64>
  %r = disc.scatter %x[%coords], %src, kind = add, update_window_dims = [], inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 2 {disc.dims = ["1000", "256"]} : (tensor<1000x256xf32>, tensor<?x256x2xi64>, tensor<?x256xf32>) -> tensor<1000x256xf32>
  return %r : tensor<1000x256xf32>
}