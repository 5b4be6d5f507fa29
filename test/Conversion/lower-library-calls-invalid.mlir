// RUN: disc-opt %s -disc-lower-library-calls -split-input-file -verify-diagnostics

// Without the RAL context argument there is nothing to call the library with.
func.func @no_context(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{needs the RAL context}}
  %0 = disc.dot_general %a, %b, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @f64(%ctx: !llvm.ptr {disc.ral_context}, %a: tensor<?x?xf64>, %b: tensor<?x?xf64>) -> tensor<?x?xf64> {
  // expected-error @+1 {{the CPU library (oneDNN) supports f32, f16 and bf16}}
  %0 = disc.dot_general %a, %b, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64>
  return %0 : tensor<?x?xf64>
}

// -----

func.func @attention_bf16(%ctx: !llvm.ptr {disc.ral_context}, %q: tensor<1x2x5x8xbf16>, %k: tensor<1x2x7x8xbf16>, %v: tensor<1x2x7x8xbf16>) -> tensor<1x2x5x8xbf16> {
  // expected-error @+1 {{the CPU attention kernel supports f32}}
  %0 = disc.attention %q, %k, %v scale = 0.125 : (tensor<1x2x5x8xbf16>, tensor<1x2x7x8xbf16>, tensor<1x2x7x8xbf16>) -> tensor<1x2x5x8xbf16>
  return %0 : tensor<1x2x5x8xbf16>
}

// -----

// A transposed convolution runs as a deconvolution: no window strides, and
// no more padding than the kernel reaches (it would be negative).
func.func @conv_transpose_strided(%ctx: !llvm.ptr {disc.ral_context}, %x: tensor<1x4x8xf32>, %w: tensor<2x4x3xf32>) -> tensor<1x2x7xf32> {
  // expected-error @+1 {{with lhs_dilation, window_strides must be 1 (a transposed convolution)}}
  %0 = disc.convolution %x, %w, strides = [2], pad_low = [0], pad_high = [0], dilation = [1] lhs_dilation = [2] : (tensor<1x4x8xf32>, tensor<2x4x3xf32>) -> tensor<1x2x7xf32>
  return %0 : tensor<1x2x7xf32>
}

// -----

func.func @conv_transpose_padding(%ctx: !llvm.ptr {disc.ral_context}, %x: tensor<1x4x8xf32>, %w: tensor<2x4x3xf32>) -> tensor<1x2x17xf32> {
  // expected-error @+1 {{with lhs_dilation, padding must be at most rhs_dilation * (kernel size - 1) = 2 in spatial dim 0}}
  %0 = disc.convolution %x, %w, strides = [1], pad_low = [1], pad_high = [3], dilation = [1] lhs_dilation = [2] : (tensor<1x4x8xf32>, tensor<2x4x3xf32>) -> tensor<1x2x17xf32>
  return %0 : tensor<1x2x17xf32>
}

// -----

// The CPU runtime's post-ops are f32 only: an epilogue on bf16 is an error
// (with half-epilogues, the cuda target's, it is not:
// lower-library-calls-half-epilogues.mlir).
func.func @bf16_epilogue(%ctx: !llvm.ptr {disc.ral_context}, %a: tensor<4x8xbf16>, %b: tensor<8x16xbf16>, %bias: tensor<1x16xbf16>) -> tensor<4x16xbf16> {
  // expected-error @+1 {{has an epilogue on bf16; library epilogues are f32 only}}
  %0 = disc.dot_general %a, %b, batching_dims = [] x [], contracting_dims = [1] x [0] epilogue [#disc.post_op<add>](%bias) : (tensor<4x8xbf16>, tensor<8x16xbf16>, tensor<1x16xbf16>) -> tensor<4x16xbf16>
  return %0 : tensor<4x16xbf16>
}
