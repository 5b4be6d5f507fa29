// A small MLP block written in the `disc` dialect, used by `make demo`:
//
//   h   = gelu(x @ W1^T + b1)              x: [B, 64], W1: [256, 64]
//   r   = h @ W2^T + b2 + x                W2: [64, 256]
//   n   = layer_norm(r) * gamma + beta     over the 64 features, eps 1e-5
//   out = softmax(n @ W3^T + b3)           W3: [10, 64]
//
// The batch size B is dynamic (`?`): the program is compiled once and runs
// for any B. Parameters are arguments, as the PyTorch front end passes them.
func.func @main(%x: tensor<?x64xf32>,
                %w1: tensor<256x64xf32>, %b1: tensor<256xf32>,
                %w2: tensor<64x256xf32>, %b2: tensor<64xf32>,
                %gamma: tensor<64xf32>, %beta: tensor<64xf32>,
                %w3: tensor<10x64xf32>, %b3: tensor<10xf32>) -> tensor<?x10xf32> {
  %c0 = arith.constant 0 : index
  %c10 = arith.constant 10 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %batch = tensor.dim %x, %c0 : tensor<?x64xf32>
  %s256 = tensor.from_elements %batch, %c256 : tensor<2xindex>
  %s64 = tensor.from_elements %batch, %c64 : tensor<2xindex>
  %s10 = tensor.from_elements %batch, %c10 : tensor<2xindex>

  // Linear 1 + exact GELU: 0.5 * h * (1 + erf(h / sqrt(2)))
  %mm1 = disc.dot_general %x, %w1, batching_dims = [] x [], contracting_dims = [1] x [1] : (tensor<?x64xf32>, tensor<256x64xf32>) -> tensor<?x256xf32>
  %b1b = disc.dynamic_broadcast_in_dim %b1, %s256, dims = [1] : (tensor<256xf32>, tensor<2xindex>) -> tensor<?x256xf32>
  %h = disc.add %mm1, %b1b : tensor<?x256xf32>
  %half = disc.constant dense<0.5> : tensor<f32>
  %one = disc.constant dense<1.0> : tensor<f32>
  %rsqrt2 = disc.constant dense<0.707106769> : tensor<f32>
  %halfb = disc.dynamic_broadcast_in_dim %half, %s256, dims = [] : (tensor<f32>, tensor<2xindex>) -> tensor<?x256xf32>
  %oneb = disc.dynamic_broadcast_in_dim %one, %s256, dims = [] : (tensor<f32>, tensor<2xindex>) -> tensor<?x256xf32>
  %rsqrt2b = disc.dynamic_broadcast_in_dim %rsqrt2, %s256, dims = [] : (tensor<f32>, tensor<2xindex>) -> tensor<?x256xf32>
  %hs = disc.multiply %h, %rsqrt2b : tensor<?x256xf32>
  %erf = disc.erf %hs : tensor<?x256xf32>
  %erf1 = disc.add %erf, %oneb : tensor<?x256xf32>
  %hh = disc.multiply %h, %halfb : tensor<?x256xf32>
  %gelu = disc.multiply %hh, %erf1 : tensor<?x256xf32>

  // Linear 2 + residual
  %mm2 = disc.dot_general %gelu, %w2, batching_dims = [] x [], contracting_dims = [1] x [1] : (tensor<?x256xf32>, tensor<64x256xf32>) -> tensor<?x64xf32>
  %b2b = disc.dynamic_broadcast_in_dim %b2, %s64, dims = [1] : (tensor<64xf32>, tensor<2xindex>) -> tensor<?x64xf32>
  %r0 = disc.add %mm2, %b2b : tensor<?x64xf32>
  %r = disc.add %r0, %x : tensor<?x64xf32>

  // Layer norm over the 64 features
  %inv_n = disc.constant dense<0.015625> : tensor<f32>
  %eps = disc.constant dense<1.0e-05> : tensor<f32>
  %inv_nb = disc.dynamic_broadcast_in_dim %inv_n, %s64, dims = [] : (tensor<f32>, tensor<2xindex>) -> tensor<?x64xf32>
  %epsb = disc.dynamic_broadcast_in_dim %eps, %s64, dims = [] : (tensor<f32>, tensor<2xindex>) -> tensor<?x64xf32>
  %sum = disc.reduce %r, dims = [1], kind = sum : (tensor<?x64xf32>) -> tensor<?xf32>
  %sumb = disc.dynamic_broadcast_in_dim %sum, %s64, dims = [0] : (tensor<?xf32>, tensor<2xindex>) -> tensor<?x64xf32>
  %mean = disc.multiply %sumb, %inv_nb : tensor<?x64xf32>
  %xc = disc.subtract %r, %mean : tensor<?x64xf32>
  %sq = disc.multiply %xc, %xc : tensor<?x64xf32>
  %sqsum = disc.reduce %sq, dims = [1], kind = sum : (tensor<?x64xf32>) -> tensor<?xf32>
  %sqsumb = disc.dynamic_broadcast_in_dim %sqsum, %s64, dims = [0] : (tensor<?xf32>, tensor<2xindex>) -> tensor<?x64xf32>
  %var = disc.multiply %sqsumb, %inv_nb : tensor<?x64xf32>
  %vareps = disc.add %var, %epsb : tensor<?x64xf32>
  %rstd = disc.rsqrt %vareps : tensor<?x64xf32>
  %normed = disc.multiply %xc, %rstd : tensor<?x64xf32>
  %gammab = disc.dynamic_broadcast_in_dim %gamma, %s64, dims = [1] : (tensor<64xf32>, tensor<2xindex>) -> tensor<?x64xf32>
  %betab = disc.dynamic_broadcast_in_dim %beta, %s64, dims = [1] : (tensor<64xf32>, tensor<2xindex>) -> tensor<?x64xf32>
  %scaled = disc.multiply %normed, %gammab : tensor<?x64xf32>
  %n = disc.add %scaled, %betab : tensor<?x64xf32>

  // Classifier + softmax over the 10 classes
  %mm3 = disc.dot_general %n, %w3, batching_dims = [] x [], contracting_dims = [1] x [1] : (tensor<?x64xf32>, tensor<10x64xf32>) -> tensor<?x10xf32>
  %b3b = disc.dynamic_broadcast_in_dim %b3, %s10, dims = [1] : (tensor<10xf32>, tensor<2xindex>) -> tensor<?x10xf32>
  %logits = disc.add %mm3, %b3b : tensor<?x10xf32>
  %max = disc.reduce %logits, dims = [1], kind = max : (tensor<?x10xf32>) -> tensor<?xf32>
  %maxb = disc.dynamic_broadcast_in_dim %max, %s10, dims = [0] : (tensor<?xf32>, tensor<2xindex>) -> tensor<?x10xf32>
  %shifted = disc.subtract %logits, %maxb : tensor<?x10xf32>
  %e = disc.exponential %shifted : tensor<?x10xf32>
  %esum = disc.reduce %e, dims = [1], kind = sum : (tensor<?x10xf32>) -> tensor<?xf32>
  %esumb = disc.dynamic_broadcast_in_dim %esum, %s10, dims = [0] : (tensor<?xf32>, tensor<2xindex>) -> tensor<?x10xf32>
  %probs = disc.divide %e, %esumb : tensor<?x10xf32>
  return %probs : tensor<?x10xf32>
}
