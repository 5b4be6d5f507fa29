// RUN: disc-opt %s | FileCheck %s
// RUN: disc-opt %s | disc-opt | FileCheck %s
// RUN: disc-opt %s --mlir-print-op-generic | disc-opt | FileCheck %s

// CHECK-LABEL: func @unary
func.func @unary(%f: tensor<?x4xf32>, %i: tensor<?xi32>, %p: tensor<?xi1>) {
  // CHECK: disc.abs %{{.*}} : tensor<?x4xf32>
  %0 = disc.abs %f : tensor<?x4xf32>
  // CHECK: disc.abs %{{.*}} : tensor<?xi32>
  %1 = disc.abs %i : tensor<?xi32>
  // CHECK: disc.negate
  %2 = disc.negate %f : tensor<?x4xf32>
  // CHECK: disc.sign
  %3 = disc.sign %i : tensor<?xi32>
  // CHECK: disc.exponential
  %4 = disc.exponential %f : tensor<?x4xf32>
  // CHECK: disc.exponential_minus_one
  %5 = disc.exponential_minus_one %f : tensor<?x4xf32>
  // CHECK: disc.log
  %6 = disc.log %f : tensor<?x4xf32>
  // CHECK: disc.log_plus_one
  %7 = disc.log_plus_one %f : tensor<?x4xf32>
  // CHECK: disc.tanh
  %8 = disc.tanh %f : tensor<?x4xf32>
  // CHECK: disc.logistic
  %9 = disc.logistic %f : tensor<?x4xf32>
  // CHECK: disc.sqrt
  %10 = disc.sqrt %f : tensor<?x4xf32>
  // CHECK: disc.rsqrt
  %11 = disc.rsqrt %f : tensor<?x4xf32>
  // CHECK: disc.cbrt
  %12 = disc.cbrt %f : tensor<?x4xf32>
  // CHECK: disc.sine
  %13 = disc.sine %f : tensor<?x4xf32>
  // CHECK: disc.cosine
  %14 = disc.cosine %f : tensor<?x4xf32>
  // CHECK: disc.tan
  %15 = disc.tan %f : tensor<?x4xf32>
  // CHECK: disc.erf
  %16 = disc.erf %f : tensor<?x4xf32>
  // CHECK: disc.floor
  %17 = disc.floor %f : tensor<?x4xf32>
  // CHECK: disc.ceil
  %18 = disc.ceil %f : tensor<?x4xf32>
  // CHECK: disc.round_nearest_even
  %19 = disc.round_nearest_even %f : tensor<?x4xf32>
  // CHECK: disc.round_nearest_afz
  %20 = disc.round_nearest_afz %f : tensor<?x4xf32>
  // CHECK: disc.not %{{.*}} : tensor<?xi1>
  %21 = disc.not %p : tensor<?xi1>
  // CHECK: disc.is_finite %{{.*}} : (tensor<?x4xf32>) -> tensor<?x4xi1>
  %22 = disc.is_finite %f : (tensor<?x4xf32>) -> tensor<?x4xi1>
  return
}

// CHECK-LABEL: func @binary
func.func @binary(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %i: tensor<?xi64>, %j: tensor<?xi64>, %p: tensor<?xi1>) {
  // CHECK: disc.add %{{.*}}, %{{.*}} : tensor<?x?xf32>
  %0 = disc.add %a, %b : tensor<?x?xf32>
  // CHECK: disc.subtract
  %1 = disc.subtract %a, %b : tensor<?x?xf32>
  // CHECK: disc.multiply
  %2 = disc.multiply %a, %b : tensor<?x?xf32>
  // CHECK: disc.divide
  %3 = disc.divide %i, %j : tensor<?xi64>
  // CHECK: disc.remainder
  %4 = disc.remainder %a, %b : tensor<?x?xf32>
  // CHECK: disc.maximum
  %5 = disc.maximum %a, %b : tensor<?x?xf32>
  // CHECK: disc.minimum
  %6 = disc.minimum %i, %j : tensor<?xi64>
  // CHECK: disc.power
  %7 = disc.power %a, %b : tensor<?x?xf32>
  // CHECK: disc.atan2
  %8 = disc.atan2 %a, %b : tensor<?x?xf32>
  // CHECK: disc.and
  %9 = disc.and %p, %p : tensor<?xi1>
  // CHECK: disc.or
  %10 = disc.or %i, %j : tensor<?xi64>
  // CHECK: disc.xor
  %11 = disc.xor %i, %j : tensor<?xi64>
  // CHECK: disc.shift_left
  %12 = disc.shift_left %i, %j : tensor<?xi64>
  // CHECK: disc.shift_right_arithmetic
  %13 = disc.shift_right_arithmetic %i, %j : tensor<?xi64>
  // CHECK: disc.shift_right_logical
  %14 = disc.shift_right_logical %i, %j : tensor<?xi64>
  // CHECK: disc.compare GE, %{{.*}}, %{{.*}} : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xi1>
  %15 = disc.compare GE, %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xi1>
  // CHECK: disc.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x?xi1>, tensor<?x?xf32>
  %16 = disc.select %15, %a, %b : tensor<?x?xi1>, tensor<?x?xf32>
  // CHECK: disc.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<i1>, tensor<?x?xf32>
  %p0 = tensor.extract_slice %15[0, 0] [1, 1] [1, 1] : tensor<?x?xi1> to tensor<i1>
  %s0 = disc.select %p0, %a, %b : tensor<i1>, tensor<?x?xf32>
  %lo = disc.constant dense<0.0> : tensor<f32>
  // CHECK: disc.clamp %{{.*}}, %{{.*}}, %{{.*}} : (tensor<f32>, tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %17 = disc.clamp %lo, %a, %lo : (tensor<f32>, tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  // CHECK: disc.convert %{{.*}} : (tensor<?x?xf32>) -> tensor<?x?xbf16>
  %18 = disc.convert %a : (tensor<?x?xf32>) -> tensor<?x?xbf16>
  return
}

// CHECK-LABEL: func @data_movement
func.func @data_movement(%a: tensor<?x4xf32>, %s: tensor<2xindex>, %v: tensor<4xf32>) {
  // CHECK: disc.constant dense<1.000000e+00> : tensor<2x3xf16>
  %c = disc.constant dense<1.0> : tensor<2x3xf16>
  // CHECK: disc.iota dim = 1 : tensor<2x3xi64>
  %0 = disc.iota dim = 1 : tensor<2x3xi64>
  // CHECK: disc.dynamic_iota %{{.*}}, dim = 0 : (tensor<2xindex>) -> tensor<?x?xf32>
  %1 = disc.dynamic_iota %s, dim = 0 : (tensor<2xindex>) -> tensor<?x?xf32>
  // CHECK: disc.broadcast_in_dim %{{.*}}, dims = [1] : (tensor<4xf32>) -> tensor<3x4xf32>
  %2 = disc.broadcast_in_dim %v, dims = [1] : (tensor<4xf32>) -> tensor<3x4xf32>
  // CHECK: disc.dynamic_broadcast_in_dim %{{.*}}, %{{.*}}, dims = [1] : (tensor<4xf32>, tensor<2xindex>) -> tensor<?x4xf32>
  %3 = disc.dynamic_broadcast_in_dim %v, %s, dims = [1] : (tensor<4xf32>, tensor<2xindex>) -> tensor<?x4xf32>
  // CHECK: disc.reshape %{{.*}} : (tensor<4xf32>) -> tensor<2x2xf32>
  %4 = disc.reshape %v : (tensor<4xf32>) -> tensor<2x2xf32>
  // CHECK: disc.dynamic_reshape %{{.*}}, %{{.*}} : (tensor<?x4xf32>, tensor<2xindex>) -> tensor<?x?xf32>
  %5 = disc.dynamic_reshape %a, %s : (tensor<?x4xf32>, tensor<2xindex>) -> tensor<?x?xf32>
  // CHECK: disc.transpose %{{.*}}, dims = [1, 0] : (tensor<?x4xf32>) -> tensor<4x?xf32>
  %6 = disc.transpose %a, dims = [1, 0] : (tensor<?x4xf32>) -> tensor<4x?xf32>
  // CHECK: disc.slice %{{.*}}, start = [1], limit = [4], strides = [2] : (tensor<4xf32>) -> tensor<2xf32>
  %7 = disc.slice %v, start = [1], limit = [4], strides = [2] : (tensor<4xf32>) -> tensor<2xf32>
  // CHECK: disc.real_dynamic_slice %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x4xf32>, tensor<2xindex>, tensor<2xindex>, tensor<2xindex>) -> tensor<?x?xf32>
  %8 = disc.real_dynamic_slice %a, %s, %s, %s : (tensor<?x4xf32>, tensor<2xindex>, tensor<2xindex>, tensor<2xindex>) -> tensor<?x?xf32>
  // CHECK: disc.concatenate %{{.*}}, %{{.*}} dim = 0 : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %9 = disc.concatenate %a, %a dim = 0 : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %z = disc.constant dense<0.0> : tensor<f32>
  // CHECK: disc.pad %{{.*}}, %{{.*}}, low = [1], high = [2], interior = [1] : (tensor<4xf32>, tensor<f32>) -> tensor<10xf32>
  %10 = disc.pad %v, %z, low = [1], high = [2], interior = [1] : (tensor<4xf32>, tensor<f32>) -> tensor<10xf32>
  // CHECK: disc.dynamic_pad
  %11 = disc.dynamic_pad %a, %z, %s, %s, %s : (tensor<?x4xf32>, tensor<f32>, tensor<2xindex>, tensor<2xindex>, tensor<2xindex>) -> tensor<?x?xf32>
  return
}

// CHECK-LABEL: func @reduce_gather_scatter
func.func @reduce_gather_scatter(%a: tensor<?x?xf32>, %idx: tensor<?xi64>, %idx2: tensor<?x1xi64>, %u: tensor<?x?xf32>, %sizes: tensor<2xindex>) {
  // CHECK: disc.reduce %{{.*}}, dims = [1], kind = sum : (tensor<?x?xf32>) -> tensor<?xf32>
  %0 = disc.reduce %a, dims = [1], kind = sum : (tensor<?x?xf32>) -> tensor<?xf32>
  // CHECK: kind = max
  %1 = disc.reduce %a, dims = [0, 1], kind = max : (tensor<?x?xf32>) -> tensor<f32>
  // CHECK: disc.gather %{{.*}}[%{{.*}}] slice_sizes = [1, 8], offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1
  %2 = disc.gather %a[%idx] slice_sizes = [1, 8], offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1 : (tensor<?x?xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  // CHECK: disc.dynamic_gather
  %3 = disc.dynamic_gather %a[%idx], %sizes, offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1 : (tensor<?x?xf32>, tensor<?xi64>, tensor<2xindex>) -> tensor<?x?xf32>
  // CHECK: disc.scatter %{{.*}}[%{{.*}}], %{{.*}}, kind = add, update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1
  %4 = disc.scatter %a[%idx2], %u, kind = add, update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1 : (tensor<?x?xf32>, tensor<?x1xi64>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return
}

// CHECK-LABEL: func @compute
func.func @compute(%a: tensor<?x?x64xbf16>, %b: tensor<?x64x32xbf16>, %x: tensor<?x3x?x?xf32>, %w: tensor<8x3x3x3xf32>, %dw: tensor<6x1x3x3xf32>) {
  // CHECK: disc.dot_general %{{.*}}, %{{.*}}, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<?x?x64xbf16>, tensor<?x64x32xbf16>) -> tensor<?x?x32xbf16>
  %0 = disc.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<?x?x64xbf16>, tensor<?x64x32xbf16>) -> tensor<?x?x32xbf16>
  // CHECK: disc.convolution %{{.*}}, %{{.*}}, strides = [2, 2], pad_low = [1, 1], pad_high = [1, 1], dilation = [1, 1] : (tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32>
  %1 = disc.convolution %x, %w, strides = [2, 2], pad_low = [1, 1], pad_high = [1, 1], dilation = [1, 1] : (tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32>
  // CHECK: feature_group_count = 3
  %2 = disc.convolution %x, %dw, strides = [1, 1], pad_low = [0, 0], pad_high = [0, 0], dilation = [2, 2] {feature_group_count = 3 : i64} : (tensor<?x3x?x?xf32>, tensor<6x1x3x3xf32>) -> tensor<?x6x?x?xf32>
  // A transposed convolution: the input dilated by 2 (lhs_dilation).
  // CHECK: disc.convolution %{{.*}}, %{{.*}}, strides = [1, 1], pad_low = [1, 1], pad_high = [2, 2], dilation = [1, 1] lhs_dilation = [2, 2] : (tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32>
  %3 = disc.convolution %x, %w, strides = [1, 1], pad_low = [1, 1], pad_high = [2, 2], dilation = [1, 1] lhs_dilation = [2, 2] : (tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32>
  return
}

// A convolution's kernel gradient: input and output gradient in, the kernel
// [O, C/groups, k...] out, with the forward convolution's attributes.
// CHECK-LABEL: func @conv_backward_weights
func.func @conv_backward_weights(%x: tensor<?x4x?x?xf32>, %dy: tensor<?x6x?x?xf32>, %ks: tensor<2xindex>) -> (tensor<6x4x3x3xf32>, tensor<6x2x3x3xf32>) {
  // CHECK: disc.convolution_backward_weights %{{.*}}, %{{.*}}, strides = [2, 2], pad_low = [1, 1], pad_high = [1, 1], dilation = [1, 1] : (tensor<?x4x?x?xf32>, tensor<?x6x?x?xf32>) -> tensor<6x4x3x3xf32>
  %0 = disc.convolution_backward_weights %x, %dy, strides = [2, 2], pad_low = [1, 1], pad_high = [1, 1], dilation = [1, 1] : (tensor<?x4x?x?xf32>, tensor<?x6x?x?xf32>) -> tensor<6x4x3x3xf32>
  // CHECK: disc.convolution_backward_weights %{{.*}}, %{{.*}} kernel_size(%{{.*}}), strides = [1, 1], {{.*}} : (tensor<?x4x?x?xf32>, tensor<?x6x?x?xf32>, tensor<2xindex>) -> tensor<6x4x?x?xf32>
  %k = disc.convolution_backward_weights %x, %dy kernel_size(%ks), strides = [1, 1], pad_low = [0, 0], pad_high = [0, 0], dilation = [1, 1] : (tensor<?x4x?x?xf32>, tensor<?x6x?x?xf32>, tensor<2xindex>) -> tensor<6x4x?x?xf32>
  // CHECK: disc.convolution_backward_weights {{.*}} {feature_group_count = 2 : i64}
  %1 = disc.convolution_backward_weights %x, %dy, strides = [1, 1], pad_low = [0, 0], pad_high = [0, 0], dilation = [2, 2] {feature_group_count = 2 : i64} : (tensor<?x4x?x?xf32>, tensor<?x6x?x?xf32>) -> tensor<6x2x3x3xf32>
  return %0, %1 : tensor<6x4x3x3xf32>, tensor<6x2x3x3xf32>
}

// A padding entry may be an index operand (a transposed convolution whose
// kernel size is dynamic); the static entries stay in the attribute.
// CHECK-LABEL: func @conv_dynamic_padding
// CHECK-SAME: %[[LO:[a-z0-9]+]]: index, %[[HI:[a-z0-9]+]]: index
func.func @conv_dynamic_padding(%x: tensor<?x4x?xf32>, %w: tensor<2x4x?xf32>, %x2: tensor<?x4x?x8xf32>, %w2: tensor<2x4x?x3xf32>, %lo: index, %hi: index) -> (tensor<?x2x?xf32>, tensor<?x2x?x?xf32>) {
  // CHECK: disc.convolution %{{.*}}, %{{.*}}, strides = [1], pad_low = [%[[LO]]], pad_high = [%[[HI]]], dilation = [1] lhs_dilation = [8] : (tensor<?x4x?xf32>, tensor<2x4x?xf32>, index, index) -> tensor<?x2x?xf32>
  %0 = disc.convolution %x, %w, strides = [1], pad_low = [%lo], pad_high = [%hi], dilation = [1] lhs_dilation = [8] : (tensor<?x4x?xf32>, tensor<2x4x?xf32>, index, index) -> tensor<?x2x?xf32>
  // CHECK: pad_low = [%[[LO]], 0], pad_high = [1, %[[HI]]]
  %1 = disc.convolution %x2, %w2, strides = [1, 1], pad_low = [%lo, 0], pad_high = [1, %hi], dilation = [1, 1] : (tensor<?x4x?x8xf32>, tensor<2x4x?x3xf32>, index, index) -> tensor<?x2x?x?xf32>
  return %0, %1 : tensor<?x2x?xf32>, tensor<?x2x?x?xf32>
}

// CHECK-LABEL: func @symbolic_dims
// CHECK-SAME: {disc.dims = ["s0", "8"]}
// CHECK: disc.dynamic_broadcast_in_dim %{{.*}}, %{{.*}}, dims = [0, 1] nonexpanding = [0] {disc.dims = ["s0", "8"]}
func.func @symbolic_dims(%a: tensor<?x1xf32> {disc.dims = ["s0", "1"]}, %b: tensor<?x8xf32> {disc.dims = ["s0", "8"]}, %s: tensor<2xindex>) -> tensor<?x8xf32> {
  %0 = disc.dynamic_broadcast_in_dim %a, %s, dims = [0, 1] nonexpanding = [0] {disc.dims = ["s0", "8"]} : (tensor<?x1xf32>, tensor<2xindex>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// CHECK-LABEL: func @reverse
// CHECK: disc.reverse %{{.*}}, dims = [0, 2] : tensor<?x3x?xf32>
func.func @reverse(%a: tensor<?x3x?xf32>) -> tensor<?x3x?xf32> {
  %0 = disc.reverse %a, dims = [0, 2] : tensor<?x3x?xf32>
  return %0 : tensor<?x3x?xf32>
}

// CHECK-LABEL: func @scan
// CHECK: disc.scan %{{.*}}, dim = 1, kind = sum : tensor<?x?xf32>
// CHECK: disc.scan %{{.*}}, dim = 0, kind = max : tensor<?xi64>
func.func @scan(%a: tensor<?x?xf32>, %b: tensor<?xi64>) -> (tensor<?x?xf32>, tensor<?xi64>) {
  %0 = disc.scan %a, dim = 1, kind = sum : tensor<?x?xf32>
  %1 = disc.scan %b, dim = 0, kind = max : tensor<?xi64>
  return %0, %1 : tensor<?x?xf32>, tensor<?xi64>
}

// CHECK-LABEL: func @attention
func.func @attention(%q: tensor<?x4x?x64xf32>, %k: tensor<?x4x?x64xf32>, %v: tensor<?x4x?x32xf32>, %m: tensor<?x1x1x?xf32>) -> (tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>) {
  // CHECK: disc.attention %{{.*}}, %{{.*}}, %{{.*}} scale = 1.250000e-01 : (tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x32xf32>) -> tensor<?x4x?x32xf32>
  %0 = disc.attention %q, %k, %v scale = 0.125 : (tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x32xf32>) -> tensor<?x4x?x32xf32>
  // CHECK: disc.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}}) scale = 1.000000e+00 causal : (tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x32xf32>, tensor<?x1x1x?xf32>) -> tensor<?x4x?x32xf32>
  %1 = disc.attention %q, %k, %v mask(%m) scale = 1.0 causal : (tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x32xf32>, tensor<?x1x1x?xf32>) -> tensor<?x4x?x32xf32>
  // CHECK: disc.attention %{{.*}}, %{{.*}}, %{{.*}} : (
  %2 = disc.attention %q, %k, %v : (tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x32xf32>) -> tensor<?x4x?x32xf32>
  return %0, %1 : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>
}

// Grouped-query attention: 8 query heads read 2 key/value heads.
// CHECK-LABEL: func @attention_grouped_heads
// CHECK: disc.attention %{{.*}}, %{{.*}}, %{{.*}} scale = 1.250000e-01 : (tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>) -> tensor<?x8x?x64xf32>
func.func @attention_grouped_heads(%q: tensor<?x8x?x64xf32>, %k: tensor<?x2x?x64xf32>, %v: tensor<?x2x?x64xf32>) -> tensor<?x8x?x64xf32> {
  %0 = disc.attention %q, %k, %v scale = 0.125 : (tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>) -> tensor<?x8x?x64xf32>
  return %0 : tensor<?x8x?x64xf32>
}

// -----

// CHECK-LABEL: func.func @thread_scratch
// CHECK: disc.thread_scratch %{{.*}} slot = 3 : memref<?xi8>
func.func @thread_scratch(%bytes: index) -> memref<?xi8> {
  %0 = disc.thread_scratch %bytes slot = 3 : memref<?xi8>
  return %0 : memref<?xi8>
}

// CHECK-LABEL: func.func @math_and_sort
func.func @math_and_sort(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>, %i: tensor<?x3xi64>) -> (tensor<?x4xf32>, tensor<?x3xi64>, tensor<?x3xi64>) {
  // CHECK: disc.log2
  %0 = disc.log2 %a : tensor<?x4xf32>
  // CHECK: disc.log10
  %1 = disc.log10 %0 : tensor<?x4xf32>
  // CHECK: disc.exponential2
  %2 = disc.exponential2 %1 : tensor<?x4xf32>
  // CHECK: disc.copysign
  %3 = disc.copysign %2, %b : tensor<?x4xf32>
  // CHECK: disc.sort {{.*}}, dim = 1 {descending = true}
  %4:2 = disc.sort %i, dim = 1 {descending = true} : (tensor<?x3xi64>) -> (tensor<?x3xi64>, tensor<?x3xi64>)
  // CHECK: disc.dot_general {{.*}} : (tensor<?x3xi64>, tensor<3x3xi64>) -> tensor<?x3xi64>
  %w = disc.constant dense<1> : tensor<3x3xi64>
  %5 = disc.dot_general %4#0, %w, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<?x3xi64>, tensor<3x3xi64>) -> tensor<?x3xi64>
  return %3, %5, %4#1 : tensor<?x4xf32>, tensor<?x3xi64>, tensor<?x3xi64>
}
