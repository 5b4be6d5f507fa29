// RUN: disc-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(disc-lower-integer-contractions))' -o /dev/null

// An integer transposed convolution (input dilation) is an error naming
// the op, not a wrong loop nest.
func.func @transposed_conv_i64(%x: tensor<?x4x?xi64>, %w: tensor<2x4x16xi64>) -> tensor<?x2x?xi64> {
  // expected-error @+1 {{integer convolution with an input dilation (transposed) is not supported}}
  %0 = disc.convolution %x, %w, strides = [1], pad_low = [15], pad_high = [15], dilation = [1] lhs_dilation = [8] : (tensor<?x4x?xi64>, tensor<2x4x16xi64>) -> tensor<?x2x?xi64>
  return %0 : tensor<?x2x?xi64>
}

// -----

func.func @dynamic_padding_i64(%x: tensor<?x4x?xi64>, %w: tensor<2x4x3xi64>, %lo: index) -> tensor<?x2x?xi64> {
  // expected-error @+1 {{integer convolution with a dynamic padding is not supported}}
  %0 = disc.convolution %x, %w, strides = [1], pad_low = [%lo], pad_high = [1], dilation = [1] : (tensor<?x4x?xi64>, tensor<2x4x3xi64>, index) -> tensor<?x2x?xi64>
  return %0 : tensor<?x2x?xi64>
}
