//===- DiscOps.td - disc dialect ops -----------------------*- tablegen -*-===//
//
// Semantics follow the StableHLO specification unless the op's description
// says otherwise. Every op reifies its result shape from its operands
// (InferShapedTypeOpInterface::reifyReturnTypeShapes), so result shapes can be
// computed at run time.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_DIALECT_DISC_OPS_TD
#define DISC_DIALECT_DISC_OPS_TD

include "disc/Dialect/Disc/DiscBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

// Shape reification hook; each op defines it in DiscOps.cpp unless a class
// below provides it.
defvar Disc_Reify =
    DeclareOpInterfaceMethods<InferShapedTypeOpInterface,
                              ["reifyReturnTypeShapes"]>;

// Result has the shape of operand 0: shared reification.
class Disc_ShapeOfFirstOperand {
  code reifyDefinition = [{
    ::llvm::LogicalResult $cppClass::reifyReturnTypeShapes(
        ::mlir::OpBuilder &builder, ::mlir::ValueRange operands,
        ::llvm::SmallVectorImpl<::mlir::Value> &shapes) {
      return ::disc::reifyShapeOf(builder, getLoc(), operands.front(), shapes);
    }
  }];
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Disc_UnaryOp<string mnemonic, Type TensorType, list<Trait> traits = []>
    : Disc_Op<mnemonic, traits # [Pure, Elementwise, SameOperandsAndResultType,
                                  Disc_Reify]>, Disc_ShapeOfFirstOperand {
  let summary = "elementwise " # mnemonic;
  let arguments = (ins TensorType:$operand);
  let results = (outs TensorType:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
  let extraClassDefinition = reifyDefinition;
}

def Disc_AbsOp : Disc_UnaryOp<"abs", Disc_NumericTensor>;
def Disc_NegOp : Disc_UnaryOp<"negate", Disc_NumericTensor>;
def Disc_SignOp : Disc_UnaryOp<"sign", Disc_NumericTensor>;
def Disc_ExpOp : Disc_UnaryOp<"exponential", Disc_FloatTensor>;
def Disc_Expm1Op : Disc_UnaryOp<"exponential_minus_one", Disc_FloatTensor>;
def Disc_LogOp : Disc_UnaryOp<"log", Disc_FloatTensor>;
def Disc_Log1pOp : Disc_UnaryOp<"log_plus_one", Disc_FloatTensor>;
def Disc_Log2Op : Disc_UnaryOp<"log2", Disc_FloatTensor>;
def Disc_Log10Op : Disc_UnaryOp<"log10", Disc_FloatTensor>;
def Disc_Exp2Op : Disc_UnaryOp<"exponential2", Disc_FloatTensor>;
def Disc_TanhOp : Disc_UnaryOp<"tanh", Disc_FloatTensor>;
def Disc_LogisticOp : Disc_UnaryOp<"logistic", Disc_FloatTensor>;
def Disc_SqrtOp : Disc_UnaryOp<"sqrt", Disc_FloatTensor>;
def Disc_RsqrtOp : Disc_UnaryOp<"rsqrt", Disc_FloatTensor>;
def Disc_CbrtOp : Disc_UnaryOp<"cbrt", Disc_FloatTensor>;
def Disc_SineOp : Disc_UnaryOp<"sine", Disc_FloatTensor>;
def Disc_CosineOp : Disc_UnaryOp<"cosine", Disc_FloatTensor>;
def Disc_TanOp : Disc_UnaryOp<"tan", Disc_FloatTensor>;
def Disc_ErfOp : Disc_UnaryOp<"erf", Disc_FloatTensor> {
  let description = "Gauss error function (CHLO's `erf` in StableHLO terms).";
}
def Disc_FloorOp : Disc_UnaryOp<"floor", Disc_FloatTensor>;
def Disc_CeilOp : Disc_UnaryOp<"ceil", Disc_FloatTensor>;
def Disc_RoundNearestEvenOp : Disc_UnaryOp<"round_nearest_even", Disc_FloatTensor>;
def Disc_RoundNearestAfzOp : Disc_UnaryOp<"round_nearest_afz", Disc_FloatTensor>;
def Disc_NotOp : Disc_UnaryOp<"not", Disc_IntOrPredTensor>;

def Disc_IsFiniteOp : Disc_Op<"is_finite", [Pure, Elementwise,
    SameOperandsAndResultShape, Disc_Reify]>, Disc_ShapeOfFirstOperand {
  let summary = "elementwise is_finite";
  let arguments = (ins Disc_FloatTensor:$operand);
  let results = (outs Disc_PredTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` functional-type(operands, results)";
  let extraClassDefinition = reifyDefinition;
}

class Disc_BinaryOp<string mnemonic, Type TensorType, list<Trait> traits = []>
    : Disc_Op<mnemonic, traits # [Pure, Elementwise, SameOperandsAndResultType,
                                  Disc_Reify]>, Disc_ShapeOfFirstOperand {
  let summary = "elementwise " # mnemonic;
  let arguments = (ins TensorType:$lhs, TensorType:$rhs);
  let results = (outs TensorType:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
  let extraClassDefinition = reifyDefinition;
}

def Disc_AddOp : Disc_BinaryOp<"add", Disc_Tensor, [Commutative]> {
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}
def Disc_SubtractOp : Disc_BinaryOp<"subtract", Disc_NumericTensor>;
def Disc_MulOp : Disc_BinaryOp<"multiply", Disc_Tensor, [Commutative]> {
  let hasFolder = 1;
}
def Disc_DivOp : Disc_BinaryOp<"divide", Disc_NumericTensor>;
def Disc_RemOp : Disc_BinaryOp<"remainder", Disc_NumericTensor>;
def Disc_MaxOp : Disc_BinaryOp<"maximum", Disc_Tensor, [Commutative]>;
def Disc_MinOp : Disc_BinaryOp<"minimum", Disc_Tensor, [Commutative]>;
def Disc_PowOp : Disc_BinaryOp<"power", Disc_NumericTensor>;
def Disc_Atan2Op : Disc_BinaryOp<"atan2", Disc_FloatTensor>;
def Disc_CopySignOp : Disc_BinaryOp<"copysign", Disc_FloatTensor> {
  let description = "The magnitude of `lhs` with the sign bit of `rhs` (-0.0 and NaN signs included).";
}
def Disc_AndOp : Disc_BinaryOp<"and", Disc_IntOrPredTensor, [Commutative]>;
def Disc_OrOp : Disc_BinaryOp<"or", Disc_IntOrPredTensor, [Commutative]>;
def Disc_XorOp : Disc_BinaryOp<"xor", Disc_IntOrPredTensor, [Commutative]>;
def Disc_ShiftLeftOp : Disc_BinaryOp<"shift_left", Disc_IntTensor>;
def Disc_ShiftRightArithmeticOp
    : Disc_BinaryOp<"shift_right_arithmetic", Disc_IntTensor>;
def Disc_ShiftRightLogicalOp
    : Disc_BinaryOp<"shift_right_logical", Disc_IntTensor>;

def Disc_CompareOp : Disc_Op<"compare", [Pure, Elementwise, SameTypeOperands,
    SameOperandsAndResultShape, Disc_Reify]>, Disc_ShapeOfFirstOperand {
  let summary = "elementwise comparison";
  let arguments = (ins Disc_ComparisonDirectionAttr:$comparison_direction,
                       Disc_Tensor:$lhs, Disc_Tensor:$rhs);
  let results = (outs Disc_PredTensor:$result);
  let assemblyFormat = [{
    $comparison_direction `,` $lhs `,` $rhs attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDefinition = reifyDefinition;
}

def Disc_SelectOp : Disc_Op<"select", [Pure,
    AllTypesMatch<["on_true", "on_false", "result"]>, Disc_Reify]> {
  let summary = "elementwise select: pred ? on_true : on_false";
  let description = [{
    `pred` has the operands' shape, or is rank 0 and selects whole tensors
    (StableHLO semantics).
  }];
  let arguments = (ins Disc_PredTensor:$pred, Disc_Tensor:$on_true,
                       Disc_Tensor:$on_false);
  let results = (outs Disc_Tensor:$result);
  let assemblyFormat = [{
    $pred `,` $on_true `,` $on_false attr-dict `:` type($pred) `,` type($result)
  }];
  let hasVerifier = 1;
}

def Disc_ClampOp : Disc_Op<"clamp", [Pure, AllTypesMatch<["operand", "result"]>,
    AllElementTypesMatch<["min", "operand", "max"]>, Disc_Reify]> {
  let summary = "clamp(min, operand, max); min/max are rank 0 or operand-shaped";
  let arguments = (ins Disc_NumericTensor:$min, Disc_NumericTensor:$operand,
                       Disc_NumericTensor:$max);
  let results = (outs Disc_NumericTensor:$result);
  let assemblyFormat = [{
    $min `,` $operand `,` $max attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Disc_ConvertOp : Disc_Op<"convert", [Pure, Elementwise,
    SameOperandsAndResultShape, Disc_Reify]>, Disc_ShapeOfFirstOperand {
  let summary = "elementwise element-type conversion";
  let description = [{
    Float to integer truncates toward zero; to i1 compares with zero;
    StableHLO semantics otherwise.
  }];
  let arguments = (ins Disc_Tensor:$operand);
  let results = (outs Disc_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
  let extraClassDefinition = reifyDefinition;
}

//===----------------------------------------------------------------------===//
// Constants and iota
//===----------------------------------------------------------------------===//

def Disc_ConstantOp : Disc_Op<"constant", [ConstantLike, Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "a constant tensor";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Disc_Tensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Disc_IotaOp : Disc_Op<"iota", [Pure, Disc_Reify]> {
  let summary = "iota with a static result shape";
  let arguments = (ins I64Attr:$iota_dimension);
  let results = (outs Disc_NumericTensor:$output);
  let assemblyFormat = "`dim` `=` $iota_dimension attr-dict `:` type($output)";
  let hasVerifier = 1;
}

def Disc_DynamicIotaOp : Disc_Op<"dynamic_iota", [Pure, Disc_Reify]> {
  let summary = "iota whose result shape is an operand";
  let arguments = (ins Disc_ShapeTensor:$output_shape, I64Attr:$iota_dimension);
  let results = (outs Disc_NumericTensor:$output);
  let assemblyFormat = [{
    $output_shape `,` `dim` `=` $iota_dimension attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Disc_BroadcastInDimOp : Disc_Op<"broadcast_in_dim", [Pure, Disc_Reify,
    AllElementTypesMatch<["operand", "result"]>]> {
  let summary = "broadcast to a static result shape";
  let arguments = (ins Disc_Tensor:$operand,
                       DenseI64ArrayAttr:$broadcast_dimensions);
  let results = (outs Disc_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `dims` `=` $broadcast_dimensions attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Disc_DynamicBroadcastInDimOp : Disc_Op<"dynamic_broadcast_in_dim", [Pure,
    Disc_Reify, AllElementTypesMatch<["operand", "result"]>]> {
  let summary = "broadcast to a shape given as an operand";
  let description = [{
    An operand dim of size 1 is expanded when the output dim differs from it;
    otherwise operand and output dims must be equal (checked at run time when
    either is dynamic).

    `known_nonexpanding_dimensions` (StableHLO) lists operand dims the
    producer knows to equal their output dim (never expanded): they are
    indexed directly instead of deciding per call whether to expand.
  }];
  let arguments = (ins Disc_Tensor:$operand, Disc_ShapeTensor:$output_dimensions,
                       DenseI64ArrayAttr:$broadcast_dimensions,
                       OptionalAttr<DenseI64ArrayAttr>:$known_nonexpanding_dimensions);
  let results = (outs Disc_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` $output_dimensions `,` `dims` `=` $broadcast_dimensions
    (`nonexpanding` `=` $known_nonexpanding_dimensions^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Disc_ReshapeOp : Disc_Op<"reshape", [Pure, Disc_Reify,
    AllElementTypesMatch<["operand", "result"]>]> {
  let summary = "reshape to a static result shape";
  let arguments = (ins Disc_Tensor:$operand);
  let results = (outs Disc_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Disc_DynamicReshapeOp : Disc_Op<"dynamic_reshape", [Pure, Disc_Reify,
    AllElementTypesMatch<["operand", "result"]>]> {
  let summary = "reshape to a shape given as an operand (row-major order)";
  let arguments = (ins Disc_Tensor:$operand, Disc_ShapeTensor:$output_shape);
  let results = (outs Disc_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` $output_shape attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Disc_TransposeOp : Disc_Op<"transpose", [Pure, Disc_Reify,
    AllElementTypesMatch<["operand", "result"]>]> {
  let summary = "permute dimensions: result dim i is operand dim permutation[i]";
  let arguments = (ins Disc_Tensor:$operand, DenseI64ArrayAttr:$permutation);
  let results = (outs Disc_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `dims` `=` $permutation attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Disc_ReverseOp : Disc_Op<"reverse", [Pure, Disc_Reify,
    SameOperandsAndResultType]>, Disc_ShapeOfFirstOperand {
  let summary = "reverse the order of elements along the given dimensions";
  let arguments = (ins Disc_Tensor:$operand, DenseI64ArrayAttr:$dimensions);
  let results = (outs Disc_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `dims` `=` $dimensions attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDefinition = reifyDefinition;
}

def Disc_SliceOp : Disc_Op<"slice", [Pure, Disc_Reify,
    AllElementTypesMatch<["operand", "result"]>]> {
  let summary = "strided slice with static bounds";
  let arguments = (ins Disc_Tensor:$operand, DenseI64ArrayAttr:$start_indices,
                       DenseI64ArrayAttr:$limit_indices,
                       DenseI64ArrayAttr:$strides);
  let results = (outs Disc_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `start` `=` $start_indices `,` `limit` `=` $limit_indices `,`
    `strides` `=` $strides attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Disc_RealDynamicSliceOp : Disc_Op<"real_dynamic_slice", [Pure, Disc_Reify,
    AllElementTypesMatch<["operand", "result"]>,
    AllTypesMatch<["start_indices", "limit_indices", "strides"]>]> {
  let summary = "strided slice whose bounds are operands";
  let arguments = (ins Disc_Tensor:$operand, Disc_ShapeTensor:$start_indices,
                       Disc_ShapeTensor:$limit_indices,
                       Disc_ShapeTensor:$strides);
  let results = (outs Disc_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` $start_indices `,` $limit_indices `,` $strides attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Disc_ConcatenateOp : Disc_Op<"concatenate", [Pure, Disc_Reify,
    SameOperandsAndResultElementType]> {
  let summary = "concatenate along a dimension";
  let arguments = (ins Variadic<Disc_Tensor>:$inputs, I64Attr:$dimension);
  let results = (outs Disc_Tensor:$result);
  let assemblyFormat = [{
    $inputs `dim` `=` $dimension attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Disc_PadOp : Disc_Op<"pad", [Pure, Disc_Reify,
    AllElementTypesMatch<["operand", "padding_value", "result"]>]> {
  let summary = "pad with static edge and interior padding (negative edges crop)";
  let arguments = (ins Disc_Tensor:$operand, Disc_Tensor:$padding_value,
                       DenseI64ArrayAttr:$edge_padding_low,
                       DenseI64ArrayAttr:$edge_padding_high,
                       DenseI64ArrayAttr:$interior_padding);
  let results = (outs Disc_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` $padding_value `,` `low` `=` $edge_padding_low `,` `high` `=`
    $edge_padding_high `,` `interior` `=` $interior_padding attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Disc_DynamicPadOp : Disc_Op<"dynamic_pad", [Pure, Disc_Reify,
    AllElementTypesMatch<["operand", "padding_value", "result"]>,
    AllTypesMatch<["edge_padding_low", "edge_padding_high", "interior_padding"]>]> {
  let summary = "pad whose amounts are operands";
  let arguments = (ins Disc_Tensor:$operand, Disc_Tensor:$padding_value,
                       Disc_ShapeTensor:$edge_padding_low,
                       Disc_ShapeTensor:$edge_padding_high,
                       Disc_ShapeTensor:$interior_padding);
  let results = (outs Disc_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` $padding_value `,` $edge_padding_low `,` $edge_padding_high `,`
    $interior_padding attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

def Disc_ReduceOp : Disc_Op<"reduce", [Pure, Disc_Reify,
    SameOperandsAndResultElementType]> {
  let summary = "reduce over dimensions with a kind (sum, prod, max, min, and, or)";
  let description = [{
    StableHLO's reduce with the body fixed by `kind` and the init value its
    identity (0, 1, -inf/min, +inf/max, true, false). The reduced dims are
    removed from the result.
  }];
  let arguments = (ins Disc_Tensor:$operand, DenseI64ArrayAttr:$dimensions,
                       Disc_ReduceKindAttr:$kind);
  let results = (outs Disc_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `dims` `=` $dimensions `,` `kind` `=` $kind attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Disc_ScanOp : Disc_Op<"scan", [Pure, Disc_Reify,
    SameOperandsAndResultType]>, Disc_ShapeOfFirstOperand {
  let summary = "inclusive prefix reduction along one dimension";
  let description = [{
    Element i along `dimension` is the `kind` reduction of elements 0..i
    (cumsum, cumprod, cummax, cummin). Not a StableHLO op (StableHLO
    expresses it as a reduce_window); DISC lowers it to one sequential pass.
    f16/bf16 sums and products accumulate in f32.
  }];
  let arguments = (ins Disc_Tensor:$operand, I64Attr:$dimension,
                       Disc_ReduceKindAttr:$kind);
  let results = (outs Disc_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `dim` `=` $dimension `,` `kind` `=` $kind attr-dict `:`
    type($result)
  }];
  let hasVerifier = 1;
  let extraClassDefinition = reifyDefinition;
}

def Disc_SortOp : Disc_Op<"sort", [Pure, Disc_Reify,
    AllTypesMatch<["operand", "values"]>,
    AllShapesMatch<["operand", "values", "indices"]>]> {
  let summary = "stable sort along one dimension, with the permutation";
  let description = [{
    `values` holds each line of `operand` along `dimension` sorted
    (ascending, or descending with `descending`), `indices` the position in
    the line each value came from. Equal values keep their order (a stable
    sort). NaN compares greater than every number, as in PyTorch: last
    ascending, first descending. Not a StableHLO op (StableHLO's sort takes
    a comparator region); runs as a runtime library call.
  }];
  let arguments = (ins Disc_Tensor:$operand, I64Attr:$dimension,
                       DefaultValuedAttr<BoolAttr, "false">:$descending);
  let results = (outs Disc_Tensor:$values, RankedTensorOf<[I64]>:$indices);
  let assemblyFormat = [{
    $operand `,` `dim` `=` $dimension attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::reifyReturnTypeShapes(
        ::mlir::OpBuilder &builder, ::mlir::ValueRange operands,
        ::llvm::SmallVectorImpl<::mlir::Value> &shapes) {
      // Both results have the operand's shape.
      if (::mlir::failed(::disc::reifyShapeOf(builder, getLoc(),
                                              operands.front(), shapes)))
        return ::mlir::failure();
      shapes.push_back(shapes.back());
      return ::mlir::success();
    }
  }];
}

//===----------------------------------------------------------------------===//
// Gather / scatter
//===----------------------------------------------------------------------===//

class Disc_GatherBase<string mnemonic, dag extraArgs, string extraFormat>
    : Disc_Op<mnemonic, [Pure, Disc_Reify,
                         AllElementTypesMatch<["operand", "result"]>]> {
  let arguments = !con((ins Disc_Tensor:$operand,
                            Disc_IndexTensor:$start_indices),
                       extraArgs,
                       (ins DenseI64ArrayAttr:$offset_dims,
                            DenseI64ArrayAttr:$collapsed_slice_dims,
                            DenseI64ArrayAttr:$start_index_map,
                            I64Attr:$index_vector_dim,
                            DefaultValuedAttr<BoolAttr, "false">:$indices_are_sorted));
  let results = (outs Disc_Tensor:$result);
  let assemblyFormat = "$operand `[` $start_indices `]` " # extraFormat # [{
    `offset_dims` `=` $offset_dims `,`
    `collapsed_slice_dims` `=` $collapsed_slice_dims `,`
    `start_index_map` `=` $start_index_map `,`
    `index_vector_dim` `=` $index_vector_dim
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Disc_GatherOp : Disc_GatherBase<"gather",
    (ins DenseI64ArrayAttr:$slice_sizes),
    "`slice_sizes` `=` $slice_sizes `,`"> {
  let summary = "StableHLO gather (batching dims not supported)";
}

def Disc_DynamicGatherOp : Disc_GatherBase<"dynamic_gather",
    (ins Disc_ShapeTensor:$slice_sizes), "`,` $slice_sizes `,`"> {
  let summary = "gather whose slice sizes are an operand";
}

def Disc_ScatterOp : Disc_Op<"scatter", [Pure, Disc_Reify,
    AllTypesMatch<["operand", "result"]>,
    AllElementTypesMatch<["operand", "updates"]>]> {
  let summary = "StableHLO scatter with the update computation fixed by `kind`";
  let description = [{
    `replace` stores the update (the last one wins when indices collide);
    `add`, `mul`, `max`, `min` combine the current value with each update.
    Indices out of bounds skip the whole update window, as in StableHLO.

    Canonicalization folds a disc.transpose of the updates into
    `update_window_dims` when the transpose keeps the window dims in order
    and the batch dims in order (the pairing of updates with indices and
    operand positions is then unchanged): the gradient of a gather from an
    NCHW tensor (upsample_bilinear2d's backward, `[N, C, H', W']` moved to
    `[H', W', N, C]`) reads the gradient where it lies instead of a copy.
  }];
  let arguments = (ins Disc_Tensor:$operand, Disc_IndexTensor:$scatter_indices,
                       Disc_Tensor:$updates,
                       DenseI64ArrayAttr:$update_window_dims,
                       DenseI64ArrayAttr:$inserted_window_dims,
                       DenseI64ArrayAttr:$scatter_dims_to_operand_dims,
                       I64Attr:$index_vector_dim,
                       Disc_ScatterKindAttr:$kind);
  let results = (outs Disc_Tensor:$result);
  let assemblyFormat = [{
    $operand `[` $scatter_indices `]` `,` $updates `,` `kind` `=` $kind `,`
    `update_window_dims` `=` $update_window_dims `,`
    `inserted_window_dims` `=` $inserted_window_dims `,`
    `scatter_dims_to_operand_dims` `=` $scatter_dims_to_operand_dims `,`
    `index_vector_dim` `=` $index_vector_dim
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Compute-intensive
//===----------------------------------------------------------------------===//

def Disc_DotGeneralOp : Disc_Op<"dot_general", [Pure, Disc_Reify,
    SameOperandsElementType]> {
  let summary = "generalized matrix product (batching + contracting dims)";
  let description = [{
    Result dims: batch dims (in the order of lhs_batching_dimensions), lhs
    free dims, rhs free dims. Runs as a library call (oneDNN on CPU) for
    float types; integer types (no library) become a linalg.generic
    (disc-lower-integer-contractions) and take no epilogue.

    Canonicalization folds a disc.transpose operand into the dimension
    numbers when the transpose keeps the operand's free dims in order (so
    the result is unchanged): `w.t()` feeding a matmul becomes a transposed
    read of `w` in the library call instead of a copy on every call.

    `epilogue` (optional): elementwise steps applied to the product inside
    the library call (oneDNN post-ops), in order; each binary step reads the
    next of `epilogue_operands`, a tensor of the result's rank whose dims are
    1 (broadcast) or the result's. Written by disc-fuse-library-epilogues.
  }];
  let arguments = (ins Disc_NumericTensor:$lhs, Disc_NumericTensor:$rhs,
                       Variadic<Disc_FloatTensor>:$epilogue_operands,
                       DenseI64ArrayAttr:$lhs_batching_dimensions,
                       DenseI64ArrayAttr:$rhs_batching_dimensions,
                       DenseI64ArrayAttr:$lhs_contracting_dimensions,
                       DenseI64ArrayAttr:$rhs_contracting_dimensions,
                       DefaultValuedAttr<Disc_EpilogueAttr, "{}">:$epilogue);
  let results = (outs Disc_NumericTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` `batching_dims` `=` $lhs_batching_dimensions `x`
    $rhs_batching_dimensions `,` `contracting_dims` `=`
    $lhs_contracting_dimensions `x` $rhs_contracting_dimensions
    (`epilogue` $epilogue^ `(` $epilogue_operands `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Disc_ConvolutionOp : Disc_Op<"convolution", [Pure, Disc_Reify,
    AttrSizedOperandSegments]> {
  let summary = "N-d convolution (stride, padding, dilation, groups)";
  let description = [{
    StableHLO convolution with the dimension numbers fixed to PyTorch's
    layout: input [N, C, spatial...], kernel [O, I, spatial...], output
    [N, O, spatial...]. `padding_low`/`padding_high` are per spatial dim.
    `lhs_dilation` (optional, per spatial dim, 1 = none) spreads the input
    with `d - 1` zeros between elements before the padding, as StableHLO
    does: a transposed convolution is a convolution of the input dilated
    by its stride with the flipped kernel. With lhs dilation the window
    strides must be 1, and the padding at most `rhs_dilation * (k - 1)`
    per side; the CPU library then runs oneDNN's deconvolution on the
    undilated input (no multiplications by the inserted zeros).
    `batch_group_count` other than 1 is not supported yet. Runs as a
    library call (oneDNN on CPU) for float types; integer types become a
    linalg.generic (disc-lower-integer-contractions), without input
    dilation or dynamic padding, and take no epilogue.

    A padding entry may be dynamic (`pad_low = [%lo]`: an `index` operand,
    the attribute holding `ShapedType::kDynamic`), as in `tensor.pad`: a
    transposed convolution's padding is `rhs_dilation * (k - 1) - p`, which
    is dynamic when the kernel size is. A negative value is an error at run
    time.

    `epilogue` (optional): elementwise steps applied to the result inside
    the library call, as for dot_general (bias, a folded batch norm's scale
    and shift, the activation).
  }];
  let arguments = (ins Disc_NumericTensor:$lhs, Disc_NumericTensor:$rhs,
                       Variadic<Disc_FloatTensor>:$epilogue_operands,
                       Variadic<Index>:$dynamic_padding_low,
                       Variadic<Index>:$dynamic_padding_high,
                       DenseI64ArrayAttr:$window_strides,
                       DenseI64ArrayAttr:$padding_low,
                       DenseI64ArrayAttr:$padding_high,
                       DenseI64ArrayAttr:$rhs_dilation,
                       DefaultValuedAttr<I64Attr, "1">:$feature_group_count,
                       DefaultValuedAttr<Disc_EpilogueAttr, "{}">:$epilogue,
                       OptionalAttr<DenseI64ArrayAttr>:$lhs_dilation);
  let results = (outs Disc_NumericTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` `strides` `=` $window_strides `,` `pad_low` `=`
    custom<DynamicIndexList>($dynamic_padding_low, $padding_low) `,`
    `pad_high` `=`
    custom<DynamicIndexList>($dynamic_padding_high, $padding_high) `,`
    `dilation` `=` $rhs_dilation (`lhs_dilation` `=` $lhs_dilation^)?
    (`epilogue` $epilogue^ `(` $epilogue_operands `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The input dilation along spatial dim `s` (1 without the attribute).
    int64_t getLhsDilationAt(int64_t s) {
      std::optional<llvm::ArrayRef<int64_t>> d = getLhsDilation();
      return d ? (*d)[s] : 1;
    }
    /// Whether some spatial dim dilates the input (a transposed convolution).
    bool hasLhsDilation() {
      std::optional<llvm::ArrayRef<int64_t>> d = getLhsDilation();
      return d && llvm::any_of(*d, [](int64_t v) { return v != 1; });
    }
    /// Per spatial dim, built at `b` from `operands` (the op's operands or
    /// their replacements): the padded, dilated input's size minus the
    /// dilated window's. The result size is span / stride + 1; a negative
    /// span (the window does not fit) has no result (PyTorch's error).
    llvm::SmallVector<mlir::Value> buildWindowSpans(mlir::OpBuilder &b,
                                                    mlir::ValueRange operands);
  }];
  let hasVerifier = 1;
}

def Disc_ConvolutionBackwardWeightsOp
    : Disc_Op<"convolution_backward_weights", [Pure, Disc_Reify]> {
  let summary = "the kernel gradient of an N-d convolution";
  let description = [{
    The gradient with respect to the kernel of `disc.convolution` (PyTorch's
    layout, no input dilation): `input` is the convolution's input
    [N, C, spatial...], `output_gradient` the gradient of its output
    [N, O, out spatial...], the result the kernel's gradient
    [O, C / feature_group_count, k...]:
    `result[o, c, k...] = sum over n, out positions p of
    output_gradient[n, o, p] * input[n, g * C/G + c, p * stride + k * dilation
    - padding_low]` (g the group of o; reads outside the input are zeros).
    The attributes are the forward convolution's. The kernel's spatial
    sizes are not determined by the operands' sizes (a stride leaves
    trailing input elements unread): they are the result type's, or where
    one is dynamic (a kernel whose sizes are symbolic, as a GraphNet
    sample's weight inputs under `dynamic=True`), the optional
    `kernel_size` operand's, one entry per spatial dim. Each output
    spatial size must be
    `(in + padding_low + padding_high - dilation * (k - 1) - 1) / stride + 1`
    (checked here when static, by the library at run time otherwise).
    Runs as a library call (oneDNN's backward-weights convolution on CPU);
    float types only.
  }];
  let arguments = (ins Disc_FloatTensor:$input,
                       Disc_FloatTensor:$output_gradient,
                       Optional<Disc_ShapeTensor>:$kernel_size,
                       DenseI64ArrayAttr:$window_strides,
                       DenseI64ArrayAttr:$padding_low,
                       DenseI64ArrayAttr:$padding_high,
                       DenseI64ArrayAttr:$rhs_dilation,
                       DefaultValuedAttr<I64Attr, "1">:$feature_group_count);
  let results = (outs Disc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $output_gradient
    (`kernel_size` `(` $kernel_size^ `)`)? `,` `strides` `=` $window_strides
    `,` `pad_low` `=` $padding_low `,` `pad_high` `=` $padding_high `,`
    `dilation` `=` $rhs_dilation attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Disc_AttentionOp : Disc_Op<"attention", [Pure, Disc_Reify,
    AllElementTypesMatch<["query", "key", "value", "result"]>]> {
  let summary = "scaled dot-product attention: softmax(q k^T * scale + mask) v";
  let description = [{
    query [B, H, L, E], key [B, Hk, S, E], value [B, Hk, S, Ev] ->
    result [B, H, L, Ev]; per (b, h):
    `softmax(scale * query x key^T + mask [, causal]) x value`, the softmax
    over S. `mask` (optional) is added to the scores; it has rank 4, each
    dim 1 (broadcast) or the scores' [B, H, L, S]. `causal` keeps only
    key positions j <= i for query row i (PyTorch's `is_causal`, aligned
    top-left). Without `scale` the scale is 1 / sqrt(E), computed at run
    time when E is dynamic. A row with every score -inf (a mask hiding
    every key) is 0, as PyTorch's CPU attention gives; a NaN score makes its
    row NaN. Key and value may have fewer heads than the query
    (grouped-query attention): query head h reads key/value head
    h / (H / Hk). On the CPU it runs as a library call that never
    materializes the [L, S] scores (blocked "flash" attention with an
    online softmax); the cuda targets decompose it into two batched
    products around a softmax (disc-decompose-attention).
  }];
  let arguments = (ins Disc_FloatTensor:$query, Disc_FloatTensor:$key,
                       Disc_FloatTensor:$value,
                       Optional<Disc_FloatTensor>:$mask,
                       OptionalAttr<F64Attr>:$scale, UnitAttr:$causal);
  let results = (outs Disc_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` `(` $mask^ `)`)? (`scale` `=` $scale^)?
    (`causal` $causal^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Runtime (buffer level)
//===----------------------------------------------------------------------===//

def Disc_ThreadScratchOp : Disc_Op<"thread_scratch"> {
  let summary = "a per-thread scratch buffer of the runtime";
  let description = [{
    `bytes` bytes (64-byte aligned) of the calling thread's scratch buffer
    number `slot`, from the runtime (`disc_ral_thread_scratch`): a loop
    body's temporary of a dynamic size, one per row of a stitch kernel, say.
    Every request of one thread for one slot returns the same memory
    (grown as needed), so the buffer lives until the next request of that
    slot on that thread: two temporaries alive at once need two slots.
    Safe on any thread, and it never fails the call; the memory is the
    runtime's and is never freed by compiled code. Created by
    disc-thread-scratch-temporaries, lowered by
    disc-ral-lower-thread-scratch.
  }];
  let arguments = (ins Index:$bytes, I64Attr:$slot);
  let results = (outs Res<MemRefRankOf<[I8], [1]>, "",
                          [MemAlloc<DefaultResource>]>:$buffer);
  let assemblyFormat = "$bytes `slot` `=` $slot attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

#endif // DISC_DIALECT_DISC_OPS_TD
