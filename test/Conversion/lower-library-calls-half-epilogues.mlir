// RUN: disc-opt %s -disc-lower-library-calls="half-epilogues=1" | FileCheck %s

// With half-epilogues (the cuda pipeline: cuBLASLt's bias epilogue), an
// f16 or bf16 matmul with an epilogue calls the `_post_<type>` entry point
// (disc-cuda-library-calls then makes it disc_ral_cuda_matmul_bias_<type>);
// f32 still calls `_post_f32`, and a matmul without one its plain entry.
// CHECK-DAG: func.func private @disc_ral_matmul_post_bf16(!llvm.ptr, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, i64, i64, memref<*xf64>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>)
// CHECK-DAG: func.func private @disc_ral_matmul_post_f16(
// CHECK-DAG: func.func private @disc_ral_matmul_post_f32(
// CHECK-DAG: func.func private @disc_ral_matmul_bf16(
// CHECK-LABEL: func.func @half_epilogues
// CHECK: call @disc_ral_matmul_post_bf16(
// CHECK: call @disc_ral_matmul_post_f16(
// CHECK: call @disc_ral_matmul_post_f32(
// CHECK: call @disc_ral_matmul_bf16(
func.func @half_epilogues(%ctx: !llvm.ptr {disc.ral_context}, %a: tensor<4x8xbf16>, %b: tensor<8x16xbf16>, %bias: tensor<1x16xbf16>, %h: tensor<4x8xf16>, %hb: tensor<8x16xf16>, %hbias: tensor<1x16xf16>, %f: tensor<4x8xf32>, %fb: tensor<8x16xf32>, %fbias: tensor<1x16xf32>) -> (tensor<4x16xbf16>, tensor<4x16xf16>, tensor<4x16xf32>, tensor<4x16xbf16>) {
  %0 = disc.dot_general %a, %b, batching_dims = [] x [], contracting_dims = [1] x [0] epilogue [#disc.post_op<add>](%bias) : (tensor<4x8xbf16>, tensor<8x16xbf16>, tensor<1x16xbf16>) -> tensor<4x16xbf16>
  %1 = disc.dot_general %h, %hb, batching_dims = [] x [], contracting_dims = [1] x [0] epilogue [#disc.post_op<add>](%hbias) : (tensor<4x8xf16>, tensor<8x16xf16>, tensor<1x16xf16>) -> tensor<4x16xf16>
  %2 = disc.dot_general %f, %fb, batching_dims = [] x [], contracting_dims = [1] x [0] epilogue [#disc.post_op<add>](%fbias) : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<1x16xf32>) -> tensor<4x16xf32>
  %3 = disc.dot_general %a, %b, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
  return %0, %1, %2, %3 : tensor<4x16xbf16>, tensor<4x16xf16>, tensor<4x16xf32>, tensor<4x16xbf16>
}
