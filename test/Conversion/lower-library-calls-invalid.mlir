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
