// RUN: disc-opt %s -split-input-file -allow-unregistered-dialect -pass-pipeline='builtin.module(func.func(disc-fuse-library-epilogues{cublaslt=1}))' | FileCheck %s
// RUN: disc-opt %s -split-input-file -allow-unregistered-dialect -pass-pipeline='builtin.module(func.func(disc-fuse-library-epilogues{cublaslt=1 log=1}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG

// The cuda target's mode: a dot_general takes one bias add (cuBLASLt's
// BIAS epilogue), always; the chain stops right after it.

// Linear layer with a dynamic batch: the bias joins the call, the exact
// GELU and the residual after it do NOT.
// CHECK-LABEL: func.func @linear_bias_gelu_residual
// CHECK: %[[D:.*]] = disc.dot_general {{.*}} epilogue [#disc.post_op<add>](%{{.*}}) {disc.dims = ["s0", "16"]}
// CHECK: disc.erf
// CHECK: disc.add {{.*}}%[[R:arg3]]
// LOG: [disc] fusion: dot_general epilogue: add (stops: cuBLASLt's epilogue ends with the bias add)
func.func @linear_bias_gelu_residual(%x: tensor<?x8xf32> {disc.dims = ["s0", "8"]}, %w: tensor<16x8xf32>, %b: tensor<16xf32>, %r: tensor<?x16xf32> {disc.dims = ["s0", "16"]}, %shape: tensor<2xindex>) -> tensor<?x16xf32> {
  %0 = disc.dot_general %x, %w, batching_dims = [] x [], contracting_dims = [1] x [1] {disc.dims = ["s0", "16"]} : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %1 = disc.dynamic_broadcast_in_dim %b, %shape, dims = [1] {disc.dims = ["s0", "16"]} : (tensor<16xf32>, tensor<2xindex>) -> tensor<?x16xf32>
  %2 = disc.add %0, %1 {disc.dims = ["s0", "16"]} : tensor<?x16xf32>
  %half = disc.constant dense<0.5> : tensor<f32>
  %h = disc.dynamic_broadcast_in_dim %half, %shape, dims = [] {disc.dims = ["s0", "16"]} : (tensor<f32>, tensor<2xindex>) -> tensor<?x16xf32>
  %rs = disc.constant dense<0.70710678118654752> : tensor<f32>
  %r2 = disc.dynamic_broadcast_in_dim %rs, %shape, dims = [] {disc.dims = ["s0", "16"]} : (tensor<f32>, tensor<2xindex>) -> tensor<?x16xf32>
  %one = disc.constant dense<1.0> : tensor<f32>
  %o = disc.dynamic_broadcast_in_dim %one, %shape, dims = [] {disc.dims = ["s0", "16"]} : (tensor<f32>, tensor<2xindex>) -> tensor<?x16xf32>
  %3 = disc.multiply %2, %h {disc.dims = ["s0", "16"]} : tensor<?x16xf32>
  %4 = disc.multiply %2, %r2 {disc.dims = ["s0", "16"]} : tensor<?x16xf32>
  %5 = disc.erf %4 {disc.dims = ["s0", "16"]} : tensor<?x16xf32>
  %6 = disc.add %5, %o {disc.dims = ["s0", "16"]} : tensor<?x16xf32>
  %7 = disc.multiply %3, %6 {disc.dims = ["s0", "16"]} : tensor<?x16xf32>
  %8 = disc.add %7, %r {disc.dims = ["s0", "16"]} : tensor<?x16xf32>
  return %8 : tensor<?x16xf32>
}

// -----

// A batched product (attention's scores plus a bias per key): the bias is
// broadcast over the batch and the rows, on the left of the add.
// CHECK-LABEL: func.func @batched_bias_on_the_left
// CHECK: %[[E:.*]] = disc.reshape %{{.*}} : (tensor<5xf32>) -> tensor<1x1x5xf32>
// CHECK: disc.dot_general {{.*}} epilogue [#disc.post_op<add>](%[[E]])
// CHECK-NOT: disc.add
// LOG: dot_general epilogue: add (stops: cuBLASLt's epilogue ends with the bias add)
func.func @batched_bias_on_the_left(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %bias: tensor<5xf32>) {
  %0 = disc.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %1 = disc.broadcast_in_dim %bias, dims = [2] : (tensor<5xf32>) -> tensor<2x3x5xf32>
  %2 = disc.add %1, %0 : tensor<2x3x5xf32>
  "test.sink"(%2) : (tensor<2x3x5xf32>) -> ()
  return
}

// -----

// NOT fused: a full-size operand (a residual), a per-row operand, a
// scalar, a multiply, a ReLU, a bias that is a slice (its buffer may be a
// strided view), a result with two users, a convolution, f64.
// CHECK-LABEL: func.func @not_a_packed_column_bias
// CHECK-NOT: epilogue
// CHECK: return
// LOG: dot_general epilogue: none (stops: at disc.add: the operand varies along the batch or rows, not a per-column bias)
// LOG: dot_general epilogue: none (stops: at disc.add: the operand varies along the batch or rows, not a per-column bias)
// LOG: dot_general epilogue: none (stops: at disc.add: the operand is broadcast along the output columns, not a per-column bias)
// LOG: dot_general epilogue: none (stops: the user is disc.multiply; cuBLASLt's epilogue takes a bias add)
// LOG: dot_general epilogue: none (stops: the user is disc.maximum; cuBLASLt's epilogue takes a bias add)
// LOG: dot_general epilogue: none (stops: at disc.add: the bias is a slice, which may be a strided view)
// LOG: dot_general epilogue: none (stops: the value has several users)
// LOG: convolution epilogue: none (the cuda target's cuDNN calls take none)
// LOG: dot_general epilogue: none (element type f64, only f32, f16 and bf16)
func.func @not_a_packed_column_bias(%x: tensor<3x4xf32>, %w: tensor<4x5xf32>, %full: tensor<3x5xf32>, %row: tensor<3xf32>, %s: tensor<f32>, %col: tensor<5xf32>, %wide: tensor<10xf32>, %img: tensor<1x2x4x4xf32>, %k: tensor<2x2x1x1xf32>, %cb: tensor<2xf32>, %h: tensor<3x4xf64>, %hw: tensor<4x5xf64>, %hb: tensor<5xf64>) {
  %d0 = disc.dot_general %x, %w, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %r0 = disc.add %d0, %full : tensor<3x5xf32>
  %d1 = disc.dot_general %x, %w, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %rb = disc.broadcast_in_dim %row, dims = [0] : (tensor<3xf32>) -> tensor<3x5xf32>
  %r1 = disc.add %d1, %rb : tensor<3x5xf32>
  %d2 = disc.dot_general %x, %w, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %sb = disc.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
  %r2 = disc.add %d2, %sb : tensor<3x5xf32>
  %d3 = disc.dot_general %x, %w, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %cb3 = disc.broadcast_in_dim %col, dims = [1] : (tensor<5xf32>) -> tensor<3x5xf32>
  %r3 = disc.multiply %d3, %cb3 : tensor<3x5xf32>
  %d4 = disc.dot_general %x, %w, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %zero = disc.constant dense<0.0> : tensor<f32>
  %zb = disc.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
  %r4 = disc.maximum %d4, %zb : tensor<3x5xf32>
  %d5 = disc.dot_general %x, %w, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %sl = disc.slice %wide, start = [0], limit = [10], strides = [2] : (tensor<10xf32>) -> tensor<5xf32>
  %slb = disc.broadcast_in_dim %sl, dims = [1] : (tensor<5xf32>) -> tensor<3x5xf32>
  %r5 = disc.add %d5, %slb : tensor<3x5xf32>
  %d6 = disc.dot_general %x, %w, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %r6 = disc.add %d6, %cb3 : tensor<3x5xf32>
  %c = disc.convolution %img, %k, strides = [1, 1], pad_low = [0, 0], pad_high = [0, 0], dilation = [1, 1] : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %ccb = disc.broadcast_in_dim %cb, dims = [1] : (tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %r7 = disc.add %c, %ccb : tensor<1x2x4x4xf32>
  %d8 = disc.dot_general %h, %hw, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<3x4xf64>, tensor<4x5xf64>) -> tensor<3x5xf64>
  %hbb = disc.broadcast_in_dim %hb, dims = [1] : (tensor<5xf64>) -> tensor<3x5xf64>
  %r8 = disc.add %d8, %hbb : tensor<3x5xf64>
  "test.sink"(%r0, %r1, %r2, %r3, %r4, %r5, %d6, %r6, %r7, %r8) : (tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<1x2x4x4xf32>, tensor<3x5xf64>) -> ()
  return
}

// -----

// f16 and bf16 too: cuBLASLt adds the bias in f32 before it rounds the
// product once.
// CHECK-LABEL: func.func @half_bias
// CHECK: disc.dot_general {{.*}} epilogue [#disc.post_op<add>](%{{.*}}) {{.*}} -> tensor<3x5xbf16>
// CHECK: disc.dot_general {{.*}} epilogue [#disc.post_op<add>](%{{.*}}) {{.*}} -> tensor<3x5xf16>
// CHECK-NOT: disc.add
// LOG: dot_general epilogue: add (stops: cuBLASLt's epilogue ends with the bias add)
// LOG: dot_general epilogue: add (stops: cuBLASLt's epilogue ends with the bias add)
func.func @half_bias(%x: tensor<3x4xbf16>, %w: tensor<4x5xbf16>, %b: tensor<5xbf16>, %h: tensor<3x4xf16>, %hw: tensor<4x5xf16>, %hb: tensor<5xf16>) -> (tensor<3x5xbf16>, tensor<3x5xf16>) {
  %0 = disc.dot_general %x, %w, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<3x4xbf16>, tensor<4x5xbf16>) -> tensor<3x5xbf16>
  %1 = disc.broadcast_in_dim %b, dims = [1] : (tensor<5xbf16>) -> tensor<3x5xbf16>
  %2 = disc.add %0, %1 : tensor<3x5xbf16>
  %3 = disc.dot_general %h, %hw, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<3x4xf16>, tensor<4x5xf16>) -> tensor<3x5xf16>
  %4 = disc.broadcast_in_dim %hb, dims = [1] : (tensor<5xf16>) -> tensor<3x5xf16>
  %5 = disc.add %3, %4 : tensor<3x5xf16>
  return %2, %5 : tensor<3x5xbf16>, tensor<3x5xf16>
}
