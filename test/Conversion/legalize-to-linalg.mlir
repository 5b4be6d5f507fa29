// RUN: disc-opt %s -disc-legalize-to-linalg -split-input-file | FileCheck %s

// Elementwise ops become one linalg.generic each, over the dynamic shape,
// with a run-time check that the operands agree.
// CHECK-LABEL: func @add_tanh
// CHECK: cf.assert {{.*}} "disc.add at {{.*}}legalize-to-linalg.mlir:{{[0-9]+}}:{{[0-9]+}}: operand 1 dim 0 does not match
// CHECK: tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x?xf32>
// CHECK: linalg.generic
// CHECK:   arith.addf
// CHECK: linalg.generic
// CHECK:   math.tanh
// CHECK-NOT: disc.
func.func @add_tanh(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = disc.add %a, %b : tensor<?x?xf32>
  %1 = disc.tanh %0 : tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}

// -----

// No check is emitted when the dims are statically equal.
// CHECK-LABEL: func @static_add
// CHECK-NOT: cf.assert
// CHECK: arith.addi
func.func @static_add(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = disc.add %a, %b : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Boolean add is logical or (StableHLO); integer division is guarded.
// CHECK-LABEL: func @bool_and_int
// CHECK: arith.ori
// CHECK: arith.select
// CHECK: arith.divsi
func.func @bool_and_int(%p: tensor<4xi1>, %i: tensor<4xi32>) -> (tensor<4xi1>, tensor<4xi32>) {
  %0 = disc.add %p, %p : tensor<4xi1>
  %1 = disc.divide %i, %i : tensor<4xi32>
  return %0, %1 : tensor<4xi1>, tensor<4xi32>
}

// -----

// CHECK-LABEL: func @compare_select_convert
// CHECK: arith.cmpf olt
// CHECK: arith.select
// CHECK: arith.fptosi
func.func @compare_select_convert(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xi32> {
  %p = disc.compare LT, %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xi1>
  %s = disc.select %p, %a, %b : tensor<?xi1>, tensor<?xf32>
  %c = disc.convert %s : (tensor<?xf32>) -> tensor<?xi32>
  return %c : tensor<?xi32>
}

// -----

// A static broadcast uses an indexing map; a dynamic operand dim that may be
// 1 is resolved at run time in the body.
// CHECK-DAG: #[[BCAST:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @broadcasts
// CHECK: linalg.generic {indexing_maps = [#[[BCAST]], {{.*}}]
// CHECK: cf.assert {{.*}} "disc.dynamic_broadcast_in_dim at {{.*}}: operand dim 0 is neither 1 nor the size of result dim 0"
// CHECK: linalg.generic
// CHECK:   linalg.index 0
// CHECK:   arith.select
// CHECK:   tensor.extract
func.func @broadcasts(%v: tensor<4xf32>, %d: tensor<?x?xf32>, %s: tensor<2xindex>) -> (tensor<3x4xf32>, tensor<?x?xf32>) {
  %0 = disc.broadcast_in_dim %v, dims = [1] : (tensor<4xf32>) -> tensor<3x4xf32>
  %1 = disc.dynamic_broadcast_in_dim %d, %s, dims = [0, 1] : (tensor<?x?xf32>, tensor<2xindex>) -> tensor<?x?xf32>
  return %0, %1 : tensor<3x4xf32>, tensor<?x?xf32>
}

// -----

// Dims declared non-expanding are indexed directly (one run-time equality
// check, no per-element select); the others still decide per call.
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func @broadcast_known_nonexpanding
// CHECK: cf.assert {{.*}} "disc.dynamic_broadcast_in_dim at {{.*}}: operand dim 0 is declared non-expanding but differs from result dim 0"
// CHECK: cf.assert {{.*}} "disc.dynamic_broadcast_in_dim at {{.*}}: operand dim 1 is declared non-expanding but differs from result dim 1"
// CHECK: linalg.generic {indexing_maps = [#[[ROW]], #[[ROW]]]
// CHECK-NOT: arith.select
// CHECK: return
func.func @broadcast_known_nonexpanding(%d: tensor<?x?xf32>, %s: tensor<2xindex>) -> tensor<?x?xf32> {
  %0 = disc.dynamic_broadcast_in_dim %d, %s, dims = [0, 1] nonexpanding = [0, 1] : (tensor<?x?xf32>, tensor<2xindex>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func @reduce_max
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: linalg.fill
// CHECK: linalg.reduce
// CHECK:   arith.maximumf
func.func @reduce_max(%a: tensor<?x?xf32>) -> tensor<?xf32> {
  %0 = disc.reduce %a, dims = [1], kind = max : (tensor<?x?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// An f32 column sum (innermost dim kept) over a long or dynamic extent
// accumulates in f64 and rounds once: its additions are sequential per
// output, so f32 accumulation lost ~50x eager's accuracy over 32768 rows.
// CHECK-LABEL: func @column_sum_accumulates_in_f64
// CHECK: linalg.fill ins(%{{.*}} : f64) outs(%{{.*}} : tensor<?xf64>)
// CHECK: linalg.reduce
// CHECK:   arith.extf %{{.*}} : f32 to f64
// CHECK:   arith.addf %{{.*}} : f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
func.func @column_sum_accumulates_in_f64(%a: tensor<?x?xf32>) -> tensor<?xf32> {
  %0 = disc.reduce %a, dims = [0], kind = sum : (tensor<?x?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// So does a sum over the innermost dim and others (a norm-weight or bias
// gradient over batch and space, a whole-tensor sum): each vector lane adds
// a long run of the outer dims.
// CHECK-LABEL: func @multi_dim_sum_accumulates_in_f64
// CHECK: linalg.reduce
// CHECK:   arith.addf %{{.*}} : f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
func.func @multi_dim_sum_accumulates_in_f64(%a: tensor<2x?x?xf32>) -> tensor<2xf32> {
  %0 = disc.reduce %a, dims = [1, 2], kind = sum : (tensor<2x?x?xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Not: a row sum (vectorised into many partial sums), a short static
// column, a column max (exact in any precision), a short static sum over
// two dims.
// CHECK-LABEL: func @sums_that_stay_f32
// CHECK-NOT: f64
// CHECK: return
func.func @sums_that_stay_f32(%a: tensor<?x?xf32>, %b: tensor<16x8xf32>, %c: tensor<4x8x8xf32>) -> (tensor<?xf32>, tensor<8xf32>, tensor<?xf32>, tensor<4xf32>) {
  %0 = disc.reduce %a, dims = [1], kind = sum : (tensor<?x?xf32>) -> tensor<?xf32>
  %1 = disc.reduce %b, dims = [0], kind = sum : (tensor<16x8xf32>) -> tensor<8xf32>
  %2 = disc.reduce %a, dims = [0], kind = max : (tensor<?x?xf32>) -> tensor<?xf32>
  %3 = disc.reduce %c, dims = [1, 2], kind = sum : (tensor<4x8x8xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3 : tensor<?xf32>, tensor<8xf32>, tensor<?xf32>, tensor<4xf32>
}

// -----

// A reshape the shape analysis cannot prove (no symbolic dims): row-major
// flatten, then unflatten to the new shape (views that fusion sees through,
// never tensor.reshape).
// CHECK-LABEL: func @reshape_transpose
// CHECK: cf.assert {{.*}} "disc.dynamic_reshape at {{.*}}: the new shape does not have the operand's number of elements"
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
// CHECK: tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape
// CHECK-NOT: tensor.reshape
// CHECK: linalg.transpose
func.func @reshape_transpose(%a: tensor<?x?xf32>, %s: tensor<2xindex>) -> tensor<?x?xf32> {
  %0 = disc.dynamic_reshape %a, %s : (tensor<?x?xf32>, tensor<2xindex>) -> tensor<?x?xf32>
  %1 = disc.transpose %0, dims = [1, 0] : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}

// -----

// A tensor with a static 0 dim has no elements: reshaped, it is an empty
// tensor of the new shape once the sizes are checked. Not a collapse_shape
// of [?, 0, ?] into [?]: bufferization would infer memref<0xf32> for it,
// which memref.collapse_shape's verifier rejects.
// CHECK-LABEL: func @reshape_of_empty
// CHECK: cf.assert {{.*}} "disc.dynamic_reshape at {{.*}}: the new shape does not have the operand's number of elements"
// CHECK-NOT: tensor.collapse_shape
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x?xf32>
// CHECK-NOT: tensor.collapse_shape
// CHECK: return %[[E]]
func.func @reshape_of_empty(%a: tensor<?x0x?xf32>, %s: tensor<2xindex>) -> tensor<?x?xf32> {
  %0 = disc.dynamic_reshape %a, %s : (tensor<?x0x?xf32>, tensor<2xindex>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func @concat_pad_slice
// CHECK: tensor.insert_slice
// CHECK: tensor.insert_slice
// CHECK: linalg.fill
// CHECK: tensor.insert_slice %arg0 into %{{.*}}[%c1] [%{{.*}}] [%{{.*}}]
// CHECK: tensor.extract_slice {{.*}}[1] [2] [2]
func.func @concat_pad_slice(%a: tensor<?xf32>, %b: tensor<?xf32>, %z: tensor<f32>, %c: tensor<5xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<2xf32>) {
  %0 = disc.concatenate %a, %b dim = 0 : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %1 = disc.pad %a, %z, low = [1], high = [0], interior = [1] : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
  %2 = disc.slice %c, start = [1], limit = [4], strides = [2] : (tensor<5xf32>) -> tensor<2xf32>
  return %0, %1, %2 : tensor<?xf32>, tensor<?xf32>, tensor<2xf32>
}

// -----

// A concatenate whose inputs' sizes are only checked at run time gets a
// buffer that holds every input's slice whatever the checks find (the
// larger size): empty-tensor elimination may make an input's producer
// write its slice in place before the checks run. The static 16 of input 1
// against the dynamic dim of input 0: a dynamic buffer of the larger,
// cast back to the result type.
// CHECK-LABEL: func @concat_checked_sizes
// CHECK-SAME: (%[[A:.*]]: tensor<2x?xf32>, %[[B:.*]]: tensor<3x16xf32>)
// CHECK: %[[BIG:.*]] = arith.maxsi %{{.*}}, %c16
// CHECK: %[[BUF:.*]] = tensor.empty(%[[BIG]]) : tensor<5x?xf32>
// CHECK: tensor.insert_slice %[[A]] into %[[BUF]]
// CHECK: cf.assert {{.*}}input 1 dim 1 does not match input 0
// CHECK: %[[ALL:.*]] = tensor.insert_slice %[[B]]
// CHECK: tensor.cast %[[ALL]] : tensor<5x?xf32> to tensor<5x16xf32>
func.func @concat_checked_sizes(%a: tensor<2x?xf32>, %b: tensor<3x16xf32>) -> tensor<5x16xf32> {
  %0 = disc.concatenate %a, %b dim = 0 : (tensor<2x?xf32>, tensor<3x16xf32>) -> tensor<5x16xf32>
  return %0 : tensor<5x16xf32>
}

// Along the axis: a static result of inputs whose sum is dynamic.
// CHECK-LABEL: func @concat_checked_axis
// CHECK: %[[BIG:.*]] = arith.maxsi
// CHECK: tensor.empty(%[[BIG]]) : tensor<?x4xf32>
// CHECK: tensor.cast %{{.*}} : tensor<?x4xf32> to tensor<5x4xf32>
func.func @concat_checked_axis(%a: tensor<?x4xf32>, %b: tensor<3x4xf32>) -> tensor<5x4xf32> {
  %0 = disc.concatenate %a, %b dim = 0 : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}

// -----

// Must NOT grow the buffer where the sizes are known equal (the same
// value, here the symbolic dim of one tensor twice, or equal constants):
// no check, no max.
// CHECK-LABEL: func @concat_known_sizes
// CHECK-NOT: arith.maxsi
// CHECK-NOT: cf.assert
// CHECK: tensor.empty(%{{.*}}) : tensor<?x4xf32>
// CHECK-NOT: tensor.cast
// CHECK: return
func.func @concat_known_sizes(%a: tensor<?x4xf32>, %b: tensor<3x4xf32>) -> tensor<?x4xf32> {
  %0 = disc.concatenate %a, %b, %a dim = 0 : (tensor<?x4xf32>, tensor<3x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Gather reads the index tensor and the operand in the body (embedding).
// CHECK-LABEL: func @embedding
// CHECK: linalg.generic
// CHECK:   tensor.extract %{{.*}}[%{{.*}}] : tensor<?xi64>
// CHECK:   arith.index_cast
// CHECK:   arith.maxsi
// CHECK:   arith.minsi
// CHECK:   tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<?x?xf32>
func.func @embedding(%table: tensor<?x?xf32>, %ids: tensor<?xi64>, %sizes: tensor<2xindex>) -> tensor<?x?xf32> {
  %0 = disc.dynamic_gather %table[%ids], %sizes, offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1 : (tensor<?x?xf32>, tensor<?xi64>, tensor<2xindex>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// aten.index with broadcast index vectors (bilinear upsampling's rows [H, 1]
// and columns [W]): the gather reads each coordinate from the small vector
// it is broadcast from, never from the [H, W, 2] concatenated coordinates.
// CHECK-LABEL: func @index_broadcast_components
// CHECK-SAME: (%[[X:.*]]: tensor<3x5x7xf32>, %[[ROWS:.*]]: tensor<4x1xi64>, %[[COLS:.*]]: tensor<6xi64>)
// CHECK: linalg.generic
// CHECK:   %[[I:.*]] = linalg.index 1
// CHECK:   %[[J:.*]] = linalg.index 2
// CHECK:   tensor.extract %[[ROWS]][%[[I]], %c0{{.*}}] : tensor<4x1xi64>
// CHECK:   tensor.extract %[[COLS]][%[[J]]] : tensor<6xi64>
// CHECK:   tensor.extract %[[X]]
// CHECK-NOT: tensor<4x6x2xi64>
// CHECK: return
func.func @index_broadcast_components(%x: tensor<3x5x7xf32>, %rows: tensor<4x1xi64>, %cols: tensor<6xi64>) -> tensor<3x4x6xf32> {
  %r = disc.broadcast_in_dim %rows, dims = [0, 1] : (tensor<4x1xi64>) -> tensor<4x6xi64>
  %c = disc.broadcast_in_dim %cols, dims = [1] : (tensor<6xi64>) -> tensor<4x6xi64>
  %r1 = disc.reshape %r : (tensor<4x6xi64>) -> tensor<4x6x1xi64>
  %c1 = disc.reshape %c : (tensor<4x6xi64>) -> tensor<4x6x1xi64>
  %coords = disc.concatenate %r1, %c1 dim = 2 : (tensor<4x6x1xi64>, tensor<4x6x1xi64>) -> tensor<4x6x2xi64>
  %0 = disc.gather %x[%coords] slice_sizes = [3, 1, 1], offset_dims = [0], collapsed_slice_dims = [1, 2], start_index_map = [1, 2], index_vector_dim = 2 : (tensor<3x5x7xf32>, tensor<4x6x2xi64>) -> tensor<3x4x6xf32>
  return %0 : tensor<3x4x6xf32>
}

// -----

// Must NOT look through: coordinates that are not a concatenate of
// reshaped components (here an argument) are read from the tensor itself.
// CHECK-LABEL: func @index_opaque_coordinates
// CHECK: tensor.extract %arg1[%{{.*}}, %{{.*}}, %c0{{.*}}] : tensor<4x6x2xi64>
// CHECK: tensor.extract %arg1[%{{.*}}, %{{.*}}, %c1{{.*}}] : tensor<4x6x2xi64>
func.func @index_opaque_coordinates(%x: tensor<3x5x7xf32>, %coords: tensor<4x6x2xi64>) -> tensor<3x4x6xf32> {
  %0 = disc.gather %x[%coords] slice_sizes = [3, 1, 1], offset_dims = [0], collapsed_slice_dims = [1, 2], start_index_map = [1, 2], index_vector_dim = 2 : (tensor<3x5x7xf32>, tensor<4x6x2xi64>) -> tensor<3x4x6xf32>
  return %0 : tensor<3x4x6xf32>
}

// -----

// Scatter is a sequential loop nest over the update batch dims; the start
// of each window is read once and the whole window checked (start >= 0,
// start + window size <= dim: an out-of-bounds window is skipped whole),
// then a loop over the window dims combines it without further checks.
// CHECK-LABEL: func @scatter_add
// CHECK-SAME: (%[[A:.*]]: tensor<?x?xf32>, %[[I:.*]]: tensor<?x1xi64>, %[[U:.*]]: tensor<?x?xf32>)
// CHECK: %[[ROWS:.*]] = tensor.dim %[[A]], %c0
// CHECK: %[[COLS:.*]] = tensor.dim %[[A]], %c1
// CHECK: scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[A]])
// CHECK:   %[[IDX:.*]] = tensor.extract %[[I]][%[[N]], %{{.*}}] : tensor<?x1xi64>
// CHECK:   %[[ROW:.*]] = arith.index_cast %[[IDX]] : i64 to index
// CHECK:   arith.cmpi sge, %[[ROW]]
// CHECK:   arith.cmpi sle, %{{.*}}, %[[ROWS]]
// CHECK:   arith.cmpi sle, %{{.*}}, %[[COLS]]
// CHECK:   scf.if
// CHECK-NEXT: arith.constant 1
// CHECK-NEXT: arith.constant 0
// CHECK-NEXT: scf.for %[[W:.*]] = {{.*}} iter_args(%[[WACC:.*]] = %[[ACC]])
// CHECK-NOT:  arith.cmpi
// CHECK:        tensor.extract %[[U]][%[[N]], %[[W]]]
// CHECK:        arith.addf
// CHECK:        tensor.insert %{{.*}} into %[[WACC]][%[[ROW]], %{{.*}}]
// CHECK:   } else {
// CHECK:     scf.yield %[[ACC]]
func.func @scatter_add(%a: tensor<?x?xf32>, %i: tensor<?x1xi64>, %u: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = disc.scatter %a[%i], %u, kind = add, update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1 : (tensor<?x?xf32>, tensor<?x1xi64>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func @iota
// CHECK: linalg.index 1
// CHECK: arith.sitofp
func.func @iota(%s: tensor<2xindex>) -> tensor<?x?xf32> {
  %0 = disc.dynamic_iota %s, dim = 1 : (tensor<2xindex>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func @reverse
// CHECK: linalg.generic
// CHECK:   %[[I:.*]] = linalg.index 1
// CHECK:   arith.subi %{{.*}}, %[[I]]
// CHECK:   tensor.extract
func.func @reverse(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = disc.reverse %a, dims = [1] : tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Static and dynamic dims mixed: slice and insert ops keep the static
// sizes as attributes, so their types verify (the pad's operand is first
// cropped by amounts that may be negative, so its sizes are dynamic).
// CHECK-LABEL: func @mixed_static_dynamic
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%{{.*}}, %{{.*}}] [%{{.*}}, %{{.*}}]
// CHECK: tensor.extract_slice %{{.*}}[%{{.*}}, %{{.*}}] [1, %{{.*}}]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%{{.*}}, 0] [1, %{{.*}}]
func.func @mixed_static_dynamic(%x: tensor<1x?xf32>, %v: tensor<f32>, %lo: tensor<2xindex>, %hi: tensor<2xindex>, %in: tensor<2xindex>, %st: tensor<2xindex>, %li: tensor<2xindex>, %str: tensor<2xindex>) -> (tensor<1x?xf32>, tensor<1x?xf32>, tensor<2x?xf32>) {
  %0 = disc.dynamic_pad %x, %v, %lo, %hi, %in : (tensor<1x?xf32>, tensor<f32>, tensor<2xindex>, tensor<2xindex>, tensor<2xindex>) -> tensor<1x?xf32>
  %1 = disc.real_dynamic_slice %x, %st, %li, %str : (tensor<1x?xf32>, tensor<2xindex>, tensor<2xindex>, tensor<2xindex>) -> tensor<1x?xf32>
  %2 = disc.concatenate %x, %x dim = 0 : (tensor<1x?xf32>, tensor<1x?xf32>) -> tensor<2x?xf32>
  return %0, %1, %2 : tensor<1x?xf32>, tensor<1x?xf32>, tensor<2x?xf32>
}

// -----

// A scan is a loop nest: parallel dims outside, the scan dim sequential
// inside with the accumulator carried (in f32 for bf16 sums).
// CHECK-LABEL: func @scan
// CHECK: scf.for
// CHECK:   scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %{{.*}} = %{{.*}}) -> (f32, tensor<?x?xbf16>)
// CHECK:     tensor.extract
// CHECK:     arith.extf
// CHECK:     arith.addf %[[ACC]]
// CHECK:     arith.truncf
// CHECK:     tensor.insert
func.func @scan(%a: tensor<?x?xbf16>) -> tensor<?x?xbf16> {
  %0 = disc.scan %a, dim = 1, kind = sum : tensor<?x?xbf16>
  return %0 : tensor<?x?xbf16>
}

// -----

// Library ops are left for disc-lower-library-calls (which runs after this
// pass, right before bufferization); the ops around them are converted.
// CHECK-LABEL: func.func @library_ops_stay
// CHECK: linalg.generic
// CHECK: disc.dot_general
// CHECK: disc.convolution
// CHECK-NOT: linalg.matmul
func.func @library_ops_stay(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %x: tensor<1x2x5x5xf32>, %w: tensor<3x2x1x1xf32>) -> (tensor<?x?xf32>, tensor<1x3x5x5xf32>) {
  %t = disc.tanh %a : tensor<?x?xf32>
  %0 = disc.dot_general %t, %b, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %1 = disc.convolution %x, %w, strides = [1, 1], pad_low = [0, 0], pad_high = [0, 0], dilation = [1, 1] : (tensor<1x2x5x5xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x5x5xf32>
  return %0, %1 : tensor<?x?xf32>, tensor<1x3x5x5xf32>
}

// -----

// Reshapes whose dim groups the symbolic dims prove: a kept reduction dim
// (unit dim inserted), a flatten of two symbols into their product and its
// inverse. Each group's size is checked at run time.
// CHECK-LABEL: func @proven_reshapes
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [%{{.*}}, 1] : tensor<?xf32> into tensor<?x1xf32>
// CHECK: cf.assert {{.*}}"disc.dynamic_reshape at
// CHECK: tensor.collapse_shape %arg1 {{\[}}[0, 1], [2]] : tensor<?x?x64xf32> into tensor<?x64xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape
// CHECK-NOT: tensor.reshape
func.func @proven_reshapes(%a: tensor<?xf32> {disc.dims = ["s0"]}, %b: tensor<?x?x64xf32> {disc.dims = ["s0", "s1", "64"]}, %s1: tensor<2xindex>, %s2: tensor<2xindex>, %s3: tensor<3xindex>) -> (tensor<?x1xf32>, tensor<?x?x64xf32>) {
  %0 = disc.dynamic_reshape %a, %s1 {disc.dims = ["s0", "1"]} : (tensor<?xf32>, tensor<2xindex>) -> tensor<?x1xf32>
  %1 = disc.dynamic_reshape %b, %s2 {disc.dims = ["s0*s1", "64"]} : (tensor<?x?x64xf32>, tensor<2xindex>) -> tensor<?x64xf32>
  %2 = disc.dynamic_reshape %1, %s3 {disc.dims = ["s0", "s1", "64"]} : (tensor<?x64xf32>, tensor<3xindex>) -> tensor<?x?x64xf32>
  return %0, %2 : tensor<?x1xf32>, tensor<?x?x64xf32>
}

// -----

// A reshape whose sides disagree on which sizes are static (a dim marked
// dynamic meeting a size the graph pins): the collapse/expand gets the type
// its groups imply and a tensor.cast moves to the declared type, proven
// (symbols) or not. The group checks stay.
// CHECK-LABEL: func @reshape_static_meets_dynamic
// CHECK: cf.assert {{.*}}"disc.reshape at
// CHECK: %[[C:.*]] = tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<1x?x3x64xf32> into tensor<1x?x192xf32>
// CHECK: tensor.cast %[[C]] : tensor<1x?x192xf32> to tensor<1x197x192xf32>
// CHECK: %[[B:.*]] = tensor.cast %arg1 : tensor<?x192xf32> to tensor<197x192xf32>
// CHECK: tensor.expand_shape %[[B]] {{\[}}[0], [1, 2]] output_shape [197, 3, 64] : tensor<197x192xf32> into tensor<197x3x64xf32>
// CHECK: %[[F:.*]] = tensor.cast %arg2 : tensor<?xf32> to tensor<24xf32>
// CHECK: tensor.expand_shape %[[F]] {{\[}}[0, 1]] output_shape [4, 6] : tensor<24xf32> into tensor<4x6xf32>
// CHECK-NOT: tensor.reshape
func.func @reshape_static_meets_dynamic(%a: tensor<1x?x3x64xf32> {disc.dims = ["1", "s0", "3", "64"]}, %b: tensor<?x192xf32> {disc.dims = ["s0", "192"]}, %c: tensor<?xf32>) -> (tensor<1x197x192xf32>, tensor<197x3x64xf32>, tensor<4x6xf32>) {
  %0 = disc.reshape %a {disc.dims = ["1", "s0", "192"]} : (tensor<1x?x3x64xf32>) -> tensor<1x197x192xf32>
  %1 = disc.reshape %b {disc.dims = ["s0", "3", "64"]} : (tensor<?x192xf32>) -> tensor<197x3x64xf32>
  %2 = disc.reshape %c : (tensor<?xf32>) -> tensor<4x6xf32>
  return %0, %1, %2 : tensor<1x197x192xf32>, tensor<197x3x64xf32>, tensor<4x6xf32>
}

// -----

// A pad (static attributes) of a dynamic operand typed with a static
// result dim: the size the operand gives is asserted; a pad of a static
// operand is not checked.
// CHECK-LABEL: func.func @static_pad_of_dynamic_operand
// CHECK: cf.assert %{{.*}}, "disc.pad: result dim 0 is 9 in its type, but its operands give another size"
// CHECK-NOT: cf.assert {{.*}}result dim
// CHECK: return
func.func @static_pad_of_dynamic_operand(%a: tensor<?xf32>, %b: tensor<3xf32>, %z: tensor<f32>) -> (tensor<9xf32>, tensor<9xf32>) {
  %0 = disc.pad %a, %z, low = [13], high = [2], interior = [1] : (tensor<?xf32>, tensor<f32>) -> tensor<9xf32>
  %1 = disc.pad %b, %z, low = [2], high = [2], interior = [1] : (tensor<3xf32>, tensor<f32>) -> tensor<9xf32>
  return %0, %1 : tensor<9xf32>, tensor<9xf32>
}

// -----

// Any disc op with an operand of dynamic shape and a static result dim gets
// the check, as a gather whose `?` start indices give its batch dim (typed 4;
// with 0 rows of indices the lowering read through a null buffer, found by
// the mutation fuzzer, seed 20785). Must NOT check
// the static dims that come from static sizes (the gather's offset dim 0,
// the slice size 3; its batch dim 2, the indices' static 6).
// CHECK-LABEL: func.func @static_result_dims_of_dynamic_operands
// CHECK: cf.assert %{{.*}}, "disc.gather: result dim 1 is 4 in its type, but its operands give another size"
// CHECK-NOT: cf.assert {{.*}}disc.gather: result dim {{[02]}}
// CHECK: return
func.func @static_result_dims_of_dynamic_operands(%x: tensor<3x5x7xf32>, %coords: tensor<?x6x2xi64>) -> tensor<3x4x6xf32> {
  %0 = disc.gather %x[%coords] slice_sizes = [3, 1, 1], offset_dims = [0], collapsed_slice_dims = [1, 2], start_index_map = [1, 2], index_vector_dim = 2 : (tensor<3x5x7xf32>, tensor<?x6x2xi64>) -> tensor<3x4x6xf32>
  return %0 : tensor<3x4x6xf32>
}

// -----

// A reduce and a transpose typed with a static result dim from a `?` operand
// dim: after the check, the operand is cast to the refined type, so the
// linalg ops verify (they failed compilation with upstream's "init
// dimensions [5] doesn't match input dimensions after reduction"). Must NOT
// cast where the operand dim is static already or the result dim is `?`.
// CHECK-LABEL: func.func @static_result_dim_of_a_dynamic_operand_dim
// CHECK: cf.assert %{{.*}}, "disc.reduce: result dim 0 is 5 in its type, but its operands give another size"
// CHECK: %[[R:.*]] = tensor.cast %{{.*}} : tensor<?x?xf32> to tensor<5x?xf32>
// CHECK: linalg.reduce {{.*}}ins(%[[R]] : tensor<5x?xf32>)
// CHECK: cf.assert %{{.*}}, "disc.transpose: result dim 0 is 3 in its type, but its operands give another size"
// CHECK: %[[T:.*]] = tensor.cast %{{.*}} : tensor<?x?xf32> to tensor<?x3xf32>
// CHECK: linalg.transpose ins(%[[T]] : tensor<?x3xf32>)
// CHECK-NOT: tensor.cast
// CHECK: return
func.func @static_result_dim_of_a_dynamic_operand_dim(%x: tensor<?x?xf32>, %y: tensor<5x?xf32>) -> (tensor<5xf32>, tensor<3x?xf32>, tensor<5xf32>, tensor<?x5xf32>) {
  %0 = disc.reduce %x, dims = [1], kind = sum : (tensor<?x?xf32>) -> tensor<5xf32>
  %1 = disc.transpose %x, dims = [1, 0] : (tensor<?x?xf32>) -> tensor<3x?xf32>
  %2 = disc.reduce %y, dims = [1], kind = max : (tensor<5x?xf32>) -> tensor<5xf32>
  %3 = disc.transpose %y, dims = [1, 0] : (tensor<5x?xf32>) -> tensor<?x5xf32>
  return %0, %1, %2, %3 : tensor<5xf32>, tensor<3x?xf32>, tensor<5xf32>, tensor<?x5xf32>
}

// -----

// A dynamic op whose type declares a static dim: the size its shape operand
// gives is asserted equal before the op (the allocation follows the type).
// CHECK-LABEL: func.func @dynamic_iota_static_dim
// CHECK: %[[N:.*]] = tensor.dim
// CHECK: %[[EQ:.*]] = arith.cmpi eq, %[[N]], %c7
// CHECK: cf.assert %[[EQ]], "disc.dynamic_iota: result dim 0 is 7 in its type, but its operands give another size"
// CHECK-NOT: cf.assert {{.*}}result dim 1
func.func @dynamic_iota_static_dim(%x: tensor<?xi64>) -> tensor<7x256xi64> {
  %c0 = arith.constant 0 : index
  %c256 = arith.constant 256 : index
  %n = tensor.dim %x, %c0 : tensor<?xi64>
  %s = tensor.from_elements %n, %c256 : tensor<2xindex>
  %0 = disc.dynamic_iota %s, dim = 1 : (tensor<2xindex>) -> tensor<7x256xi64>
  return %0 : tensor<7x256xi64>
}

// -----

// Symbolic padding amounts may be negative (a crop): the operand is sliced
// by the negative parts, after run-time checks, then padded by the
// positive parts.
// CHECK-LABEL: func @dynamic_pad_may_crop
// CHECK: arith.maxsi
// CHECK: cf.assert {{.*}} "disc.dynamic_pad{{.*}}negative padding of dim 0 removes more than the dim's size"
// CHECK: tensor.extract_slice %{{.*}}[%{{.*}}] [%{{.*}}] [1]
// CHECK: linalg.fill
// CHECK: tensor.insert_slice
func.func @dynamic_pad_may_crop(%x: tensor<?xf32>, %v: tensor<f32>, %lo: tensor<1xindex>, %hi: tensor<1xindex>, %in: tensor<1xindex>) -> tensor<?xf32> {
  %0 = disc.dynamic_pad %x, %v, %lo, %hi, %in : (tensor<?xf32>, tensor<f32>, tensor<1xindex>, tensor<1xindex>, tensor<1xindex>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// Amounts known non-negative need no slice.
// CHECK-LABEL: func @dynamic_pad_no_crop
// CHECK-NOT: tensor.extract_slice
// CHECK-NOT: removes more than
// CHECK: tensor.insert_slice
func.func @dynamic_pad_no_crop(%x: tensor<?xf32>, %v: tensor<f32>) -> tensor<?xf32> {
  %c2 = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  %c = tensor.from_elements %c2 : tensor<1xindex>
  %z = tensor.from_elements %c0 : tensor<1xindex>
  %0 = disc.dynamic_pad %x, %v, %c, %c, %z : (tensor<?xf32>, tensor<f32>, tensor<1xindex>, tensor<1xindex>, tensor<1xindex>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
