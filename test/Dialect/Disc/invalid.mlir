// RUN: disc-opt %s -split-input-file -verify-diagnostics

func.func @add_type_mismatch(%a: tensor<3x4xf32>, %b: tensor<5x4xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{all non-scalar operands/results must have the same shape}}
  %0 = "disc.add"(%a, %b) : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @exp_of_int(%a: tensor<?xi32>) -> tensor<?xi32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of}}
  %0 = disc.exponential %a : tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

func.func @not_of_float(%a: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of}}
  %0 = disc.not %a : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @compare_bad_result(%a: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{result #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = disc.compare LT, %a, %a : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @select_pred_shape(%p: tensor<3xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{pred shape 'tensor<3xi1>' must be rank 0 or match the operand shape 'tensor<4xf32>'}}
  %0 = disc.select %p, %a, %a : tensor<3xi1>, tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @clamp_bad_bound(%lo: tensor<2xf32>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{min must be rank 0 or have the operand's shape}}
  %0 = disc.clamp %lo, %a, %lo : (tensor<2xf32>, tensor<4xf32>, tensor<2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @convert_shape(%a: tensor<4xf32>) -> tensor<5xi32> {
  // expected-error @+1 {{all non-scalar operands/results must have the same shape}}
  %0 = disc.convert %a : (tensor<4xf32>) -> tensor<5xi32>
  return %0 : tensor<5xi32>
}

// -----

func.func @constant_type() {
  // expected-error @+2 {{inferred type(s) 'tensor<2xf32>' are incompatible with return type(s)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = "disc.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<3xf32>
  return
}

// -----

func.func @iota_dim() -> tensor<2x3xi32> {
  // expected-error @+1 {{iota_dimension 2 is out of range for rank 2}}
  %0 = disc.iota dim = 2 : tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

func.func @iota_dynamic() -> tensor<?xi32> {
  // expected-error @+1 {{result must be statically shaped; use disc.dynamic_iota}}
  %0 = disc.iota dim = 0 : tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

func.func @dynamic_iota_shape_len(%s: tensor<3xindex>) -> tensor<?x?xf32> {
  // expected-error @+1 {{output_shape has 3 elements, expected 2}}
  %0 = disc.dynamic_iota %s, dim = 0 : (tensor<3xindex>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @broadcast_dims(%a: tensor<4xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{broadcast_dimensions has 2 entries, expected the operand rank 1}}
  %0 = disc.broadcast_in_dim %a, dims = [0, 1] : (tensor<4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @broadcast_size(%a: tensor<4xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{operand dim 0 (4) cannot broadcast to result dim 1 (5)}}
  %0 = disc.broadcast_in_dim %a, dims = [1] : (tensor<4xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @dynamic_broadcast_dims(%a: tensor<4xf32>, %s: tensor<2xindex>) -> tensor<?x?xf32> {
  // expected-error @+1 {{broadcast_dimensions dim 2 is out of range for rank 2}}
  %0 = disc.dynamic_broadcast_in_dim %a, %s, dims = [2] : (tensor<4xf32>, tensor<2xindex>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @reshape_count(%a: tensor<4xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{operand has 4 elements but the result has 6}}
  %0 = disc.reshape %a : (tensor<4xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @dynamic_reshape_len(%a: tensor<?xf32>, %s: tensor<3xindex>) -> tensor<?x?xf32> {
  // expected-error @+1 {{output_shape has 3 elements, expected 2}}
  %0 = disc.dynamic_reshape %a, %s : (tensor<?xf32>, tensor<3xindex>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @transpose_perm(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{permutation dim 0 appears twice}}
  %0 = disc.transpose %a, dims = [0, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @transpose_result(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{result dim 0 (2) does not match operand dim 1 (3)}}
  %0 = disc.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @slice_limit(%a: tensor<4xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{dim 0: limit 5 exceeds the operand size 4}}
  %0 = disc.slice %a, start = [0], limit = [5], strides = [1] : (tensor<4xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @slice_stride(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{stride 0 must be positive}}
  %0 = disc.slice %a, start = [0], limit = [4], strides = [0] : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @real_dynamic_slice_len(%a: tensor<?x?xf32>, %s: tensor<3xindex>) -> tensor<?x?xf32> {
  // expected-error @+1 {{start_indices has 3 elements, expected 2}}
  %0 = disc.real_dynamic_slice %a, %s, %s, %s : (tensor<?x?xf32>, tensor<3xindex>, tensor<3xindex>, tensor<3xindex>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @concat_dim(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{input 1 dim 1 (4) does not match the result (3)}}
  %0 = disc.concatenate %a, %b dim = 0 : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @pad_result(%a: tensor<4xf32>, %z: tensor<f32>) -> tensor<9xf32> {
  // expected-error @+1 {{result dim 0 must be 10}}
  %0 = disc.pad %a, %z, low = [1], high = [2], interior = [1] : (tensor<4xf32>, tensor<f32>) -> tensor<9xf32>
  return %0 : tensor<9xf32>
}

// -----

func.func @dynamic_pad_value(%a: tensor<?xf32>, %z: tensor<1xf32>, %s: tensor<1xindex>) -> tensor<?xf32> {
  // expected-error @+1 {{padding_value must be rank 0}}
  %0 = disc.dynamic_pad %a, %z, %s, %s, %s : (tensor<?xf32>, tensor<1xf32>, tensor<1xindex>, tensor<1xindex>, tensor<1xindex>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @reduce_rank(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{result rank 2 must be the operand rank minus the number of reduced dims}}
  %0 = disc.reduce %a, dims = [1], kind = sum : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @reduce_and_float(%a: tensor<?xf32>) -> tensor<f32> {
  // expected-error @+1 {{and/or reductions need an integer or i1 operand}}
  %0 = disc.reduce %a, dims = [0], kind = and : (tensor<?xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @gather_collapsed(%a: tensor<?x8xf32>, %i: tensor<?xi64>) -> tensor<?x8xf32> {
  // expected-error @+1 {{collapsed slice dim 0 must have slice size 1}}
  %0 = disc.gather %a[%i] slice_sizes = [2, 8], offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1 : (tensor<?x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// Static result sizes that disagree with the operands: the compiled code
// would read the start indices past their end (found by fuzz/disc_fuzz.py
// --differential).
func.func @gather_batch_size(%x: tensor<3x5x7xf32>, %c: tensor<3x6x2xi64>) -> tensor<3x4x6xf32> {
  // expected-error @+1 {{result dim 1 is 4 but is a batch dim of size 3 (start indices dim 0)}}
  %0 = disc.gather %x[%c] slice_sizes = [3, 1, 1], offset_dims = [0], collapsed_slice_dims = [1, 2], start_index_map = [1, 2], index_vector_dim = 2 : (tensor<3x5x7xf32>, tensor<3x6x2xi64>) -> tensor<3x4x6xf32>
  return %0 : tensor<3x4x6xf32>
}

// -----

func.func @gather_offset_size(%x: tensor<3x5x7xf32>, %c: tensor<4x6x2xi64>) -> tensor<2x4x6xf32> {
  // expected-error @+1 {{result dim 0 is 2 but is an offset dim of slice size 3 (operand dim 0)}}
  %0 = disc.gather %x[%c] slice_sizes = [3, 1, 1], offset_dims = [0], collapsed_slice_dims = [1, 2], start_index_map = [1, 2], index_vector_dim = 2 : (tensor<3x5x7xf32>, tensor<4x6x2xi64>) -> tensor<2x4x6xf32>
  return %0 : tensor<2x4x6xf32>
}

// -----

func.func @gather_slice_beyond_operand(%x: tensor<3x5x7xf32>, %c: tensor<4x6x2xi64>) -> tensor<?x4x6xf32> {
  // expected-error @+1 {{slice size 4 of dim 0 must be in [0, 3]}}
  %0 = disc.gather %x[%c] slice_sizes = [4, 1, 1], offset_dims = [0], collapsed_slice_dims = [1, 2], start_index_map = [1, 2], index_vector_dim = 2 : (tensor<3x5x7xf32>, tensor<4x6x2xi64>) -> tensor<?x4x6xf32>
  return %0 : tensor<?x4x6xf32>
}

// -----

func.func @scatter_batch_size(%a: tensor<?x8xf32>, %i: tensor<5x1xi64>, %u: tensor<4x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{updates dim 0 is 4 but is a batch dim of size 5 (scatter indices dim 0)}}
  %0 = disc.scatter %a[%i], %u, kind = add, update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1 : (tensor<?x8xf32>, tensor<5x1xi64>, tensor<4x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @scatter_window_beyond_operand(%a: tensor<?x8xf32>, %i: tensor<5x1xi64>, %u: tensor<5x9xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{updates dim 1 is 9, a window dim larger than operand dim 1 (8)}}
  %0 = disc.scatter %a[%i], %u, kind = add, update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1 : (tensor<?x8xf32>, tensor<5x1xi64>, tensor<5x9xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @dynamic_gather_rank(%a: tensor<?x?xf32>, %i: tensor<?xi64>, %s: tensor<2xindex>) -> tensor<?xf32> {
  // expected-error @+1 {{result rank 1 must be 2}}
  %0 = disc.dynamic_gather %a[%i], %s, offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1 : (tensor<?x?xf32>, tensor<?xi64>, tensor<2xindex>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @scatter_dims(%a: tensor<?x?xf32>, %i: tensor<?x1xi64>, %u: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{update_window_dims + inserted_window_dims must cover the operand rank}}
  %0 = disc.scatter %a[%i], %u, kind = add, update_window_dims = [1], inserted_window_dims = [], scatter_dims_to_operand_dims = [0], index_vector_dim = 1 : (tensor<?x?xf32>, tensor<?x1xi64>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @dot_contracting(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{lhs dim 1 (3) and rhs dim 0 (4) must be equal}}
  %0 = disc.dot_general %a, %b, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @dot_bool(%a: tensor<2x3xi1>, %b: tensor<3x5xi1>) -> tensor<2x5xi1> {
  // expected-error @+1 {{operand #0 must be ranked tensor of}}
  %0 = disc.dot_general %a, %b, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<2x3xi1>, tensor<3x5xi1>) -> tensor<2x5xi1>
  return %0 : tensor<2x5xi1>
}

// -----

func.func @conv_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error @+1 {{input features (4) must equal kernel input features (2) x feature_group_count (3)}}
  %0 = disc.convolution %x, %w, strides = [1, 1], pad_low = [0, 0], pad_high = [0, 0], dilation = [1, 1] {feature_group_count = 3 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @conv_attr_len(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error @+1 {{window_strides needs 2 entries}}
  %0 = disc.convolution %x, %w, strides = [1], pad_low = [0, 0], pad_high = [0, 0], dilation = [1, 1] : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @conv_lhs_dilation_len(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x16x16xf32> {
  // expected-error @+1 {{lhs_dilation needs 2 entries}}
  %0 = disc.convolution %x, %w, strides = [1, 1], pad_low = [2, 2], pad_high = [2, 2], dilation = [1, 1] lhs_dilation = [2] : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x16x16xf32>
  return %0 : tensor<1x6x16x16xf32>
}

// -----

func.func @conv_dynamic_padding_count(%x: tensor<1x4x8xf32>, %w: tensor<6x4x3xf32>, %lo: index) -> tensor<1x6x16xf32> {
  // expected-error @+1 {{'disc.convolution' op padding_high has 0 dynamic entries but 1 operands}}
  %0 = "disc.convolution"(%x, %w, %lo) <{window_strides = array<i64: 1>, padding_low = array<i64: 2>, padding_high = array<i64: 2>, rhs_dilation = array<i64: 1>, operandSegmentSizes = array<i32: 1, 1, 0, 0, 1>}> : (tensor<1x4x8xf32>, tensor<6x4x3xf32>, index) -> tensor<1x6x16xf32>
  return %0 : tensor<1x6x16xf32>
}

// -----

func.func @conv_element_types(%x: tensor<1x4x8xf32>, %w: tensor<6x4x3xbf16>) -> tensor<1x6x6xf32> {
  // expected-error @+1 {{input, kernel and result must have one element type}}
  %0 = disc.convolution %x, %w, strides = [1], pad_low = [0], pad_high = [0], dilation = [1] : (tensor<1x4x8xf32>, tensor<6x4x3xbf16>) -> tensor<1x6x6xf32>
  return %0 : tensor<1x6x6xf32>
}

// -----

func.func @conv_lhs_dilation_positive(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x16x16xf32> {
  // expected-error @+1 {{lhs_dilation must be positive}}
  %0 = disc.convolution %x, %w, strides = [1, 1], pad_low = [2, 2], pad_high = [2, 2], dilation = [1, 1] lhs_dilation = [2, 0] : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x16x16xf32>
  return %0 : tensor<1x6x16x16xf32>
}

// -----

// Static spatial sizes are checked: the result's must be the window's
// count, and the window must fit (a wrong static result made the cuda
// depthwise loop nest read past the input as padding).
func.func @conv_static_result_size(%x: tensor<1x8x9x9xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x8x8xf32> {
  // expected-error @+1 {{result spatial dim 0 is 8, expected 7}}
  %0 = disc.convolution %x, %w, strides = [1, 1], pad_low = [0, 0], pad_high = [0, 0], dilation = [1, 1] {feature_group_count = 8 : i64} : (tensor<1x8x9x9xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x8x8xf32>
  return %0 : tensor<1x8x8x8xf32>
}

// -----

func.func @conv_static_window_too_large(%x: tensor<2x4x1xf32>, %w: tensor<4x1x5xf32>) -> tensor<2x4x?xf32> {
  // expected-error @+1 {{along spatial dim 0 the kernel (dilated) is larger than the padded input (9 > 8)}}
  %0 = disc.convolution %x, %w, strides = [64], pad_low = [4], pad_high = [3], dilation = [2] {feature_group_count = 4 : i64} : (tensor<2x4x1xf32>, tensor<4x1x5xf32>) -> tensor<2x4x?xf32>
  return %0 : tensor<2x4x?xf32>
}

// -----

// Window attributes beyond 32 bits: the libraries would refuse them only
// when called (oneDNN), DISC's loop nests would take them.
func.func @conv_stride_beyond_32_bits(%x: tensor<2x4x?xf32>, %w: tensor<4x1x5xf32>) -> tensor<2x4x?xf32> {
  // expected-error @+1 {{window_strides 4294967296 does not fit in 32 bits (the convolution libraries' limit)}}
  %0 = disc.convolution %x, %w, strides = [4294967296], pad_low = [0], pad_high = [0], dilation = [1] {feature_group_count = 4 : i64} : (tensor<2x4x?xf32>, tensor<4x1x5xf32>) -> tensor<2x4x?xf32>
  return %0 : tensor<2x4x?xf32>
}

// -----

func.func @conv_padding_beyond_32_bits(%x: tensor<2x4x?xf32>, %w: tensor<4x1x5xf32>) -> tensor<2x4x?xf32> {
  // expected-error @+1 {{padding_low -2147483649 does not fit in 32 bits}}
  %0 = disc.convolution %x, %w, strides = [1], pad_low = [-2147483649], pad_high = [0], dilation = [1] {feature_group_count = 4 : i64} : (tensor<2x4x?xf32>, tensor<4x1x5xf32>) -> tensor<2x4x?xf32>
  return %0 : tensor<2x4x?xf32>
}

// -----

func.func @conv_lhs_dilation_beyond_32_bits(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x?x?xf32> {
  // expected-error @+1 {{lhs_dilation 2147483648 does not fit in 32 bits}}
  %0 = disc.convolution %x, %w, strides = [1, 1], pad_low = [2, 2], pad_high = [2, 2], dilation = [1, 1] lhs_dilation = [2, 2147483648] : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x?x?xf32>
  return %0 : tensor<1x6x?x?xf32>
}

// -----

func.func @dims_rank(%a: tensor<?x?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'disc.dims' has 2 entries for a rank-1 tensor}}
  %0 = disc.reduce %a, dims = [1], kind = sum {disc.dims = ["s0", "s1"]} : (tensor<?x?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// expected-error @+1 {{'disc.dims' says dim 1 is 5 but the type says 4}}
func.func @dims_static(%a: tensor<?x4xf32> {disc.dims = ["s0", "5"]}) -> tensor<?x4xf32> {
  return %a : tensor<?x4xf32>
}

// -----

func.func @dims_not_strings(%a: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'disc.dims' must be an array of strings}}
  %0 = disc.negate %a {disc.dims = [1]} : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @nonexpanding_static_mismatch(%a: tensor<3xf32>, %s: tensor<1xindex>) -> tensor<4xf32> {
  // expected-error @+1 {{operand dim 0 (3) cannot broadcast to result dim 0 (4)}}
  %0 = disc.dynamic_broadcast_in_dim %a, %s, dims = [0] nonexpanding = [0] : (tensor<3xf32>, tensor<1xindex>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @nonexpanding_range(%a: tensor<?xf32>, %s: tensor<1xindex>) -> tensor<?xf32> {
  // expected-error @+1 {{known_nonexpanding_dimensions dim 1 is out of range for rank 1}}
  %0 = disc.dynamic_broadcast_in_dim %a, %s, dims = [0] nonexpanding = [1] : (tensor<?xf32>, tensor<1xindex>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @reverse_dims(%a: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{dimensions dim 1 is out of range for rank 1}}
  %0 = disc.reverse %a, dims = [1] : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @scan_dim(%a: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{dimension 1 is out of range for rank 1}}
  %0 = disc.scan %a, dim = 1, kind = sum : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @scan_kind(%a: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{and/or scans need an integer or i1 operand}}
  %0 = disc.scan %a, dim = 0, kind = and : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @epilogue_operand_count(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>, %e: tensor<1x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{epilogue has 2 binary steps but 1 epilogue operands}}
  %0 = disc.dot_general %a, %b, batching_dims = [] x [], contracting_dims = [1] x [0] epilogue [#disc.post_op<add>, #disc.post_op<relu>, #disc.post_op<multiply>](%e) : (tensor<2x3xf32>, tensor<3x5xf32>, tensor<1x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @epilogue_operand_dims(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %e: tensor<1x3x1x1xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{epilogue operand 0 dim 1 must be 1 or the result's (4)}}
  %0 = disc.convolution %x, %w, strides = [1, 1], pad_low = [0, 0], pad_high = [0, 0], dilation = [1, 1] epilogue [#disc.post_op<add>](%e) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<1x3x1x1xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @epilogue_unknown_kind(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{unknown post-op kind 'softmax'}}
  %0 = disc.dot_general %a, %b, batching_dims = [] x [], contracting_dims = [1] x [0] epilogue [#disc.post_op<softmax>]() : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @attention_rank(%q: tensor<?x?x64xf32>, %k: tensor<?x?x64xf32>, %v: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{query must have rank 4}}
  %0 = disc.attention %q, %k, %v scale = 0.125 : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

func.func @attention_head_dims(%q: tensor<1x2x5x64xf32>, %k: tensor<1x2x7x32xf32>, %v: tensor<1x2x7x32xf32>) -> tensor<1x2x5x32xf32> {
  // expected-error @+1 {{query and key head dims differ (64 vs 32)}}
  %0 = disc.attention %q, %k, %v scale = 0.125 : (tensor<1x2x5x64xf32>, tensor<1x2x7x32xf32>, tensor<1x2x7x32xf32>) -> tensor<1x2x5x32xf32>
  return %0 : tensor<1x2x5x32xf32>
}

// -----

func.func @attention_key_lengths(%q: tensor<1x2x5x8xf32>, %k: tensor<1x2x7x8xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x2x5x8xf32> {
  // expected-error @+1 {{key and value sequence lengths differ (7 vs 6)}}
  %0 = disc.attention %q, %k, %v scale = 0.125 : (tensor<1x2x5x8xf32>, tensor<1x2x7x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x5x8xf32>
  return %0 : tensor<1x2x5x8xf32>
}

// -----

func.func @attention_result(%q: tensor<1x2x5x8xf32>, %k: tensor<1x2x7x8xf32>, %v: tensor<1x2x7x4xf32>) -> tensor<1x2x5x8xf32> {
  // expected-error @+1 {{result dim 3 must be 4 ([B, H, L, Ev])}}
  %0 = disc.attention %q, %k, %v scale = 0.125 : (tensor<1x2x5x8xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x4xf32>) -> tensor<1x2x5x8xf32>
  return %0 : tensor<1x2x5x8xf32>
}

// -----

func.func @attention_mask(%q: tensor<1x2x5x8xf32>, %k: tensor<1x2x7x8xf32>, %v: tensor<1x2x7x8xf32>, %m: tensor<1x1x5x6xf32>) -> tensor<1x2x5x8xf32> {
  // expected-error @+1 {{mask dim 3 (6) must be 1 or the scores' (7)}}
  %0 = disc.attention %q, %k, %v mask(%m) scale = 0.125 : (tensor<1x2x5x8xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x8xf32>, tensor<1x1x5x6xf32>) -> tensor<1x2x5x8xf32>
  return %0 : tensor<1x2x5x8xf32>
}

// -----

func.func @attention_mask_type(%q: tensor<1x2x5x8xf32>, %k: tensor<1x2x7x8xf32>, %v: tensor<1x2x7x8xf32>, %m: tensor<1x1x5x7xf16>) -> tensor<1x2x5x8xf32> {
  // expected-error @+1 {{mask must have the query's element type}}
  %0 = disc.attention %q, %k, %v mask(%m) scale = 0.125 : (tensor<1x2x5x8xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x8xf32>, tensor<1x1x5x7xf16>) -> tensor<1x2x5x8xf32>
  return %0 : tensor<1x2x5x8xf32>
}

// -----

func.func @thread_scratch_negative_slot(%bytes: index) {
  // expected-error @+1 {{slot must be >= 0, got -1}}
  %0 = disc.thread_scratch %bytes slot = -1 : memref<?xi8>
  return
}

// -----

func.func @thread_scratch_static(%bytes: index) {
  // expected-error @+1 {{result must be memref<?xi8>}}
  %0 = disc.thread_scratch %bytes slot = 0 : memref<16xi8>
  return
}

// -----

func.func @thread_scratch_not_bytes(%bytes: index) {
  // expected-error @+1 {{result #0 must be 1D memref of 8-bit signless integer}}
  %0 = disc.thread_scratch %bytes slot = 0 : memref<?xf32>
  return
}

// -----

func.func @attention_head_groups(%q: tensor<1x6x5x32xf32>, %k: tensor<1x4x7x32xf32>, %v: tensor<1x4x7x32xf32>) -> tensor<1x6x5x32xf32> {
  // expected-error @+1 {{query head count 6 is not a multiple of the key/value head count 4}}
  %0 = disc.attention %q, %k, %v scale = 0.125 : (tensor<1x6x5x32xf32>, tensor<1x4x7x32xf32>, tensor<1x4x7x32xf32>) -> tensor<1x6x5x32xf32>
  return %0 : tensor<1x6x5x32xf32>
}

// -----

func.func @attention_kv_heads(%q: tensor<1x8x5x32xf32>, %k: tensor<1x4x7x32xf32>, %v: tensor<1x2x7x32xf32>) -> tensor<1x8x5x32xf32> {
  // expected-error @+1 {{key and value head counts differ (4 vs 2)}}
  %0 = disc.attention %q, %k, %v scale = 0.125 : (tensor<1x8x5x32xf32>, tensor<1x4x7x32xf32>, tensor<1x2x7x32xf32>) -> tensor<1x8x5x32xf32>
  return %0 : tensor<1x8x5x32xf32>
}

// -----

func.func @real_dynamic_slice_stride_marker(%x: tensor<?xf32>, %s: tensor<1xindex>) -> tensor<?xf32> {
  %st = arith.constant dense<0> : tensor<1xindex>
  // expected-error @+1 {{strides element 0 is 0; it must be >= 1}}
  %0 = disc.real_dynamic_slice %x, %s, %s, %st : (tensor<?xf32>, tensor<1xindex>, tensor<1xindex>, tensor<1xindex>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @real_dynamic_slice_negative_start(%x: tensor<?xf32>, %s: tensor<1xindex>) -> tensor<?xf32> {
  %st = arith.constant dense<-3> : tensor<1xindex>
  // expected-error @+1 {{start_indices element 0 is -3; it must be >= 0}}
  %0 = disc.real_dynamic_slice %x, %st, %s, %s : (tensor<?xf32>, tensor<1xindex>, tensor<1xindex>, tensor<1xindex>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @dynamic_reshape_negative(%x: tensor<?xf32>) -> tensor<?x?xf32> {
  %s = arith.constant dense<[-2, -4]> : tensor<2xindex>
  // expected-error @+1 {{output_shape element 0 is -2; it must be >= 0}}
  %0 = disc.dynamic_reshape %x, %s : (tensor<?xf32>, tensor<2xindex>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Constant elements of a tensor.from_elements are checked as a constant's
// are (the fuzzer's dynamic_pad_no_crop with an interior of INT64_MAX
// crashed a folder: interior + 1 wrapped to the dynamic-size marker).
func.func @dynamic_pad_too_large(%x: tensor<?xf32>, %v: tensor<f32>) -> tensor<?xf32> {
  %c2 = arith.constant 2 : index
  %max = arith.constant 9223372036854775807 : index
  %c = tensor.from_elements %c2 : tensor<1xindex>
  %z = tensor.from_elements %max : tensor<1xindex>
  // expected-error @+1 {{'disc.dynamic_pad' op padding of dim 0 is 9223372036854775807; DISC pads by at most 2147483647}}
  %0 = disc.dynamic_pad %x, %v, %c, %c, %z : (tensor<?xf32>, tensor<f32>, tensor<1xindex>, tensor<1xindex>, tensor<1xindex>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @dynamic_pad_constant_too_small(%x: tensor<?x?xf32>, %v: tensor<f32>, %n: index) -> tensor<?x?xf32> {
  %c = arith.constant dense<[0, -2147483648]> : tensor<2xindex>
  %z = arith.constant dense<0> : tensor<2xindex>
  // expected-error @+1 {{padding of dim 1 is -2147483648; DISC pads by at most 2147483647}}
  %0 = disc.dynamic_pad %x, %v, %c, %z, %z : (tensor<?x?xf32>, tensor<f32>, tensor<2xindex>, tensor<2xindex>, tensor<2xindex>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @real_dynamic_slice_from_elements_stride(%x: tensor<?xf32>, %s: tensor<1xindex>, %n: index) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %st = tensor.from_elements %c0 : tensor<1xindex>
  // expected-error @+1 {{strides element 0 is 0; it must be >= 1}}
  %0 = disc.real_dynamic_slice %x, %s, %s, %st : (tensor<?xf32>, tensor<1xindex>, tensor<1xindex>, tensor<1xindex>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// A from_elements with a value not known at compile time: its constant
// elements are checked, the others left to the run-time checks.
func.func @dynamic_pad_partly_constant(%x: tensor<?x?xf32>, %v: tensor<f32>, %n: index) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %big = arith.constant 4294967296 : index
  %lo = tensor.from_elements %n, %big : tensor<2xindex>
  %z = tensor.from_elements %c0, %c0 : tensor<2xindex>
  // expected-error @+1 {{padding of dim 1 is 4294967296; DISC pads by at most 2147483647}}
  %0 = disc.dynamic_pad %x, %v, %lo, %z, %z : (tensor<?x?xf32>, tensor<f32>, tensor<2xindex>, tensor<2xindex>, tensor<2xindex>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @pad_too_large(%a: tensor<?xf32>, %z: tensor<f32>) -> tensor<?xf32> {
  // expected-error @+1 {{padding of dim 0 is 9223372036854775807; DISC pads by at most 2147483647}}
  %0 = disc.pad %a, %z, low = [9223372036854775807], high = [9223372036854775807], interior = [0] : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @pad_overflow(%a: tensor<4611686018427387904xf32>, %z: tensor<f32>) -> tensor<?xf32> {
  // expected-error @+1 {{padding of dim 0 overflows a 64-bit size}}
  %0 = disc.pad %a, %z, low = [0], high = [0], interior = [2] : (tensor<4611686018427387904xf32>, tensor<f32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @integer_dot_with_epilogue(%a: tensor<2x3xi64>, %b: tensor<3x5xi64>) -> tensor<2x5xi64> {
  // expected-error @+1 {{an integer op takes no epilogue}}
  %0 = disc.dot_general %a, %b, batching_dims = [] x [], contracting_dims = [1] x [0] epilogue [#disc.post_op<relu>]() : (tensor<2x3xi64>, tensor<3x5xi64>) -> tensor<2x5xi64>
  return %0 : tensor<2x5xi64>
}

// -----

func.func @conv_element_types_differ(%x: tensor<1x3x8x8xi32>, %w: tensor<4x3x3x3xi64>) -> tensor<1x4x6x6xi64> {
  // expected-error @+1 {{input, kernel and result must have one element type}}
  %0 = disc.convolution %x, %w, strides = [1, 1], pad_low = [0, 0], pad_high = [0, 0], dilation = [1, 1] : (tensor<1x3x8x8xi32>, tensor<4x3x3x3xi64>) -> tensor<1x4x6x6xi64>
  return %0 : tensor<1x4x6x6xi64>
}

// -----

func.func @sort_dim_out_of_range(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xi64>) {
  // expected-error @+1 {{dimension 2 is out of range for rank 2}}
  %0:2 = disc.sort %x, dim = 2 : (tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xi64>)
  return %0#0, %0#1 : tensor<?x4xf32>, tensor<?x4xi64>
}

// -----

func.func @sort_indices_shape(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x5xi64>) {
  // expected-error @+1 {{all of {operand, values, indices} have same shape}}
  %0:2 = disc.sort %x, dim = 0 : (tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x5xi64>)
  return %0#0, %0#1 : tensor<?x4xf32>, tensor<?x5xi64>
}

// -----

func.func @conv_backward_weights_groups(%x: tensor<1x4x8x8xf32>, %dy: tensor<1x6x6x6xf32>) -> tensor<6x4x3x3xf32> {
  // expected-error @+1 {{input features (4) must equal result dim 1 (4) x feature_group_count (2)}}
  %0 = disc.convolution_backward_weights %x, %dy, strides = [1, 1], pad_low = [0, 0], pad_high = [0, 0], dilation = [1, 1] {feature_group_count = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<1x6x6x6xf32>) -> tensor<6x4x3x3xf32>
  return %0 : tensor<6x4x3x3xf32>
}

// -----

func.func @conv_backward_weights_dynamic_kernel(%x: tensor<1x4x8x8xf32>, %dy: tensor<1x6x6x6xf32>) -> tensor<6x4x?x3xf32> {
  // expected-error @+1 {{needs a static kernel size or a kernel_size operand; spatial dim 0 is dynamic}}
  %0 = disc.convolution_backward_weights %x, %dy, strides = [1, 1], pad_low = [0, 0], pad_high = [0, 0], dilation = [1, 1] : (tensor<1x4x8x8xf32>, tensor<1x6x6x6xf32>) -> tensor<6x4x?x3xf32>
  return %0 : tensor<6x4x?x3xf32>
}

// -----

func.func @conv_backward_weights_kernel_size_length(%x: tensor<1x4x8x8xf32>, %dy: tensor<1x6x6x6xf32>, %k: tensor<3xindex>) -> tensor<6x4x?x?xf32> {
  // expected-error @+1 {{kernel_size must have one entry per spatial dim (2), got type 'tensor<3xindex>'}}
  %0 = disc.convolution_backward_weights %x, %dy kernel_size(%k), strides = [1, 1], pad_low = [0, 0], pad_high = [0, 0], dilation = [1, 1] : (tensor<1x4x8x8xf32>, tensor<1x6x6x6xf32>, tensor<3xindex>) -> tensor<6x4x?x?xf32>
  return %0 : tensor<6x4x?x?xf32>
}

// -----

func.func @conv_backward_weights_output_size(%x: tensor<1x4x8x8xf32>, %dy: tensor<1x6x7x6xf32>) -> tensor<6x4x3x3xf32> {
  // expected-error @+1 {{output gradient spatial dim 0 is 7; the convolution's output has 6}}
  %0 = disc.convolution_backward_weights %x, %dy, strides = [1, 1], pad_low = [0, 0], pad_high = [0, 0], dilation = [1, 1] : (tensor<1x4x8x8xf32>, tensor<1x6x7x6xf32>) -> tensor<6x4x3x3xf32>
  return %0 : tensor<6x4x3x3xf32>
}

// -----

func.func @conv_backward_weights_features(%x: tensor<1x4x8x8xf32>, %dy: tensor<1x5x6x6xf32>) -> tensor<6x4x3x3xf32> {
  // expected-error @+1 {{result dim 0 must be the output gradient's features}}
  %0 = disc.convolution_backward_weights %x, %dy, strides = [1, 1], pad_low = [0, 0], pad_high = [0, 0], dilation = [1, 1] : (tensor<1x4x8x8xf32>, tensor<1x5x6x6xf32>) -> tensor<6x4x3x3xf32>
  return %0 : tensor<6x4x3x3xf32>
}

// -----

func.func @conv_backward_weights_padding(%x: tensor<1x4x8x8xf32>, %dy: tensor<1x6x5x6xf32>) -> tensor<6x4x3x3xf32> {
  // expected-error @+1 {{padding must be non-negative}}
  %0 = disc.convolution_backward_weights %x, %dy, strides = [1, 1], pad_low = [-1, 0], pad_high = [0, 0], dilation = [1, 1] : (tensor<1x4x8x8xf32>, tensor<1x6x5x6xf32>) -> tensor<6x4x3x3xf32>
  return %0 : tensor<6x4x3x3xf32>
}
