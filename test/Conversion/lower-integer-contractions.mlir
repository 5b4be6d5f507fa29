// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(disc-lower-integer-contractions))' | FileCheck %s

// An int64 batched matmul: one generic over (batch, m, n, k), multiply-add
// from a zero fill; the paired dynamic dims are asserted equal.
// CHECK-DAG: #[[LHS:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[RHS:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @bmm_i64
// CHECK: cf.assert {{.*}}"disc.dot_general: lhs dim 0 and rhs dim 0 differ"
// CHECK: cf.assert {{.*}}"disc.dot_general: lhs dim 2 and rhs dim 1 differ"
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK: %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : i64)
// CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: outs(%[[FILL]] : tensor<?x?x?xi64>)
// CHECK: arith.muli
// CHECK: arith.addi
// CHECK-NOT: disc.dot_general
func.func @bmm_i64(%a: tensor<?x?x?xi64>, %b: tensor<?x?x?xi64>) -> tensor<?x?x?xi64> {
  %0 = disc.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<?x?x?xi64>, tensor<?x?x?xi64>) -> tensor<?x?x?xi64>
  return %0 : tensor<?x?x?xi64>
}

// -----

// Must not: a float dot_general stays a library op (oneDNN).
// CHECK-LABEL: func.func @mm_f32
// CHECK: disc.dot_general
// CHECK-NOT: linalg.generic
func.func @mm_f32(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = disc.dot_general %a, %b, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// A grouped, strided, dilated int32 convolution: groups are split off the
// channel dims, the grouped input is zero-padded, one generic over
// (n, g, o, oh, ow, c, kh, kw) reads input[n, g, c, oh*2 + kh*2, ow*2 + kw*2].
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 * 2 + d6 * 2, d4 * 2 + d7 * 2)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
// The window must fit in the padded input along each dynamic spatial dim.
// CHECK-LABEL: func.func @grouped_conv_i32
// CHECK: cf.assert {{.*}}"disc.convolution: along spatial dim 0 the kernel (dilated) is larger than the padded input"
// CHECK: cf.assert {{.*}}"disc.convolution: along spatial dim 1 the kernel (dilated) is larger than the padded input"
// CHECK: tensor.expand_shape {{.*}} {{\[\[}}0], [1, 2], [3], [4]] {{.*}} : tensor<?x4x?x?xi32> into tensor<?x2x2x?x?xi32>
// CHECK: tensor.expand_shape {{.*}} {{\[\[}}0, 1], [2], [3], [4]] {{.*}} : tensor<6x2x3x3xi32> into tensor<2x3x2x3x3xi32>
// CHECK: tensor.pad %{{.*}} low[0, 0, 0, 1, 1] high[0, 0, 0, 1, 1]
// The padded input cut to the extent the windows read ((out-1)*2 + 2*2 + 1).
// CHECK: arith.maxsi
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0, 0] [%{{.*}}, 2, 2, %{{.*}}, %{{.*}}] [1, 1, 1, 1, 1] : tensor<?x2x2x?x?xi32> to tensor<?x2x2x?x?xi32>
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[W]], #[[O]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK: tensor.collapse_shape {{.*}} {{\[\[}}0], [1, 2], [3], [4]] : tensor<?x2x3x?x?xi32> into tensor<?x6x?x?xi32>
func.func @grouped_conv_i32(%x: tensor<?x4x?x?xi32>, %w: tensor<6x2x3x3xi32>) -> tensor<?x6x?x?xi32> {
  %0 = disc.convolution %x, %w, strides = [2, 2], pad_low = [1, 1], pad_high = [1, 1], dilation = [2, 2] {feature_group_count = 2 : i64} : (tensor<?x4x?x?xi32>, tensor<6x2x3x3xi32>) -> tensor<?x6x?x?xi32>
  return %0 : tensor<?x6x?x?xi32>
}

// -----

// Must not: a float convolution stays a library op.
// CHECK-LABEL: func.func @conv_f32
// CHECK: disc.convolution
// CHECK-NOT: linalg.generic
func.func @conv_f32(%x: tensor<?x3x?x?xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32> {
  %0 = disc.convolution %x, %w, strides = [1, 1], pad_low = [0, 0], pad_high = [0, 0], dilation = [1, 1] : (tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32>
  return %0 : tensor<?x8x?x?xf32>
}


// -----

// A static convolution whose output width is 1: the input is cut to the
// 4 columns the window reads (of 5 padded), so that folding the unit loop
// leaves a generic whose sizes agree.
// CHECK-LABEL: func.func @output_width_one
// CHECK-NOT: cf.assert {{.*}}larger than the padded input
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0, 0] [1, 1, 2, 5, 4] [1, 1, 1, 1, 1] : tensor<1x1x2x6x5xi64> to tensor<1x1x2x5x4xi64>
func.func @output_width_one(%x: tensor<1x2x4x3xi64>, %w: tensor<4x2x3x4xi64>) -> tensor<1x4x2x1xi64> {
  %0 = disc.convolution %x, %w, strides = [2, 2], pad_low = [1, 1], pad_high = [1, 1], dilation = [1, 1] : (tensor<1x2x4x3xi64>, tensor<4x2x3x4xi64>) -> tensor<1x4x2x1xi64>
  return %0 : tensor<1x4x2x1xi64>
}
