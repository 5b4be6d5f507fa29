//===- DecomposeAttention.cpp - disc.attention as matmuls and a softmax ---===//
//
// disc.attention -> dot_general, masked softmax, dot_general, for targets
// without an attention library call (the cuda targets). See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "disc/Analysis/ShapeConstraints.h"
#include "disc/Dialect/Disc/DiscDialect.h"
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>

namespace disc {
#define GEN_PASS_DEF_DISCDECOMPOSEATTENTION
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

/// One dim of a shape: its static size (or kDynamic), its index value and
/// its name in the importer's `disc.dims` (a symbol such as "s3", or the
/// static size; null when the operand carries none).
struct Size {
  int64_t fixed;
  Value value;
  StringAttr symbol;
};

/// The `disc.dims` entry of `tensor`'s dim `d`; null when there is none.
StringAttr symbolOf(Value tensor, int64_t d) {
  ArrayAttr dims = disc::ShapeConstraints::dimNamesOf(tensor);
  if (!dims || d >= (int64_t)dims.size())
    return {};
  return dyn_cast<StringAttr>(dims[d]);
}

/// Builds the decomposition's tensors, each of a shape given as Sizes.
class AttentionBuilder {
public:
  AttentionBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  Size dim(Value tensor, int64_t d) {
    auto type = cast<RankedTensorType>(tensor.getType());
    if (!type.isDynamicDim(d))
      return {type.getDimSize(d), index(type.getDimSize(d)),
              b.getStringAttr(std::to_string(type.getDimSize(d)))};
    return {ShapedType::kDynamic, tensor::DimOp::create(b, loc, tensor, d),
            symbolOf(tensor, d)};
  }

  /// `value` (a new op's result) with `disc.dims` naming `shape`'s dims,
  /// so the shape analysis of later passes (fusion) sees which dims are
  /// equal; left without when a dim has no name.
  Value named(Value value, ArrayRef<Size> shape) {
    SmallVector<Attribute> symbols;
    for (const Size &s : shape) {
      if (!s.symbol)
        return value;
      symbols.push_back(s.symbol);
    }
    if (Operation *op = value.getDefiningOp())
      op->setAttr(disc::DiscDialect::kDimsAttrName, b.getArrayAttr(symbols));
    return value;
  }

  /// `value` named as `like` is (an elementwise result of `like`'s shape).
  Value namedLike(Value value, Value like) {
    Operation *op = value.getDefiningOp();
    auto type = cast<RankedTensorType>(like.getType());
    SmallVector<Attribute> symbols;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      StringAttr symbol =
          type.isDynamicDim(d)
              ? symbolOf(like, d)
              : b.getStringAttr(std::to_string(type.getDimSize(d)));
      if (!symbol)
        return value;
      symbols.push_back(symbol);
    }
    if (op)
      op->setAttr(disc::DiscDialect::kDimsAttrName, b.getArrayAttr(symbols));
    return value;
  }

  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }

  RankedTensorType typeOf(ArrayRef<Size> shape, Type elementType) {
    SmallVector<int64_t> sizes;
    for (const Size &s : shape)
      sizes.push_back(s.fixed);
    return RankedTensorType::get(sizes, elementType);
  }

  Value shapeTensor(ArrayRef<Size> shape) {
    SmallVector<Value> values;
    for (const Size &s : shape)
      values.push_back(s.value);
    return tensor::FromElementsOp::create(b, loc, values);
  }

  /// A 0-d constant of `elementType`.
  Value scalar(double value, Type elementType) {
    auto type = RankedTensorType::get({}, elementType);
    return disc::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, b.getFloatAttr(elementType,
                                                            value)));
  }

  /// `operand` broadcast into `shape`, its dim i becoming dim dims[i]. Its
  /// dims of size 1 may expand (a mask's broadcast dims), except those in
  /// `nonexpanding` (operand dims known to have their result dim's size:
  /// the broadcast then reads through an indexing map, which fusion sees,
  /// instead of an index computed per element).
  Value broadcast(Value operand, ArrayRef<int64_t> dims, ArrayRef<Size> shape,
                  ArrayRef<int64_t> nonexpanding = {}) {
    Type elementType =
        cast<RankedTensorType>(operand.getType()).getElementType();
    RankedTensorType type = typeOf(shape, elementType);
    if (type.hasStaticShape())
      return disc::BroadcastInDimOp::create(b, loc, type, operand, dims);
    return named(disc::DynamicBroadcastInDimOp::create(
                     b, loc, type, operand, shapeTensor(shape),
                     b.getDenseI64ArrayAttr(dims),
                     nonexpanding.empty()
                         ? DenseI64ArrayAttr()
                         : b.getDenseI64ArrayAttr(nonexpanding)),
                 shape);
  }

  Value reshape(Value operand, ArrayRef<Size> shape) {
    Type elementType =
        cast<RankedTensorType>(operand.getType()).getElementType();
    RankedTensorType type = typeOf(shape, elementType);
    if (type.hasStaticShape())
      return disc::ReshapeOp::create(b, loc, type, operand);
    return named(disc::DynamicReshapeOp::create(b, loc, type, operand,
                                                shapeTensor(shape)),
                 shape);
  }

  /// `value` as `elementType` (itself when it has it already).
  Value convert(Value value, Type elementType) {
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getElementType() == elementType)
      return value;
    return namedLike(
        disc::ConvertOp::create(b, loc, type.clone(elementType), value),
        value);
  }

  /// Reduces `operand` (of `shape`) over its last dim.
  Value reduceLast(Value operand, ArrayRef<Size> shape, disc::ReduceKind kind) {
    auto type = cast<RankedTensorType>(operand.getType());
    int64_t last = type.getRank() - 1;
    auto resultType = RankedTensorType::get(type.getShape().drop_back(),
                                            type.getElementType());
    return named(disc::ReduceOp::create(
                     b, loc, resultType, operand,
                     b.getDenseI64ArrayAttr({last}),
                     disc::ReduceKindAttr::get(b.getContext(), kind)),
                 shape.drop_back());
  }

  /// [B, H, M, K] x [B, H, N, K] (transposed) or [B, H, K, N] -> [B, H, M, N].
  Value batchedProduct(Value lhs, Value rhs, bool rhsTransposed,
                       ArrayRef<Size> resultShape) {
    Type elementType = cast<RankedTensorType>(lhs.getType()).getElementType();
    return named(
        disc::DotGeneralOp::create(
            b, loc, typeOf(resultShape, elementType), lhs, rhs, ValueRange(),
            b.getDenseI64ArrayAttr({0, 1}), b.getDenseI64ArrayAttr({0, 1}),
            b.getDenseI64ArrayAttr({3}),
            b.getDenseI64ArrayAttr({rhsTransposed ? 3 : 2}),
            b.getArrayAttr({})),
        resultShape);
  }

  template <typename OpTy> Value binary(Value lhs, Value rhs) {
    return namedLike(OpTy::create(b, loc, lhs.getType(), lhs, rhs), lhs);
  }

  Value compare(disc::ComparisonDirection direction, Value lhs, Value rhs) {
    auto type = cast<RankedTensorType>(lhs.getType());
    return namedLike(
        disc::CompareOp::create(
            b, loc, type.clone(b.getI1Type()),
            disc::ComparisonDirectionAttr::get(b.getContext(), direction), lhs,
            rhs),
        lhs);
  }

  Value select(Value pred, Value onTrue, Value onFalse) {
    return namedLike(disc::SelectOp::create(b, loc, onTrue.getType(), pred,
                                            onTrue, onFalse),
                     pred);
  }

  OpBuilder &b;
  Location loc;
};

/// Key or value [B, Hk, S, X] read by query heads [B, H, ...]: itself when
/// `sameHeads` (H and Hk proved equal); otherwise each key/value head
/// repeated for its group of H / Hk query heads (query head h reads head
/// h / group), [B, Hk, G, S, X] reshaped to [B, H, S, X].
Value repeatHeads(AttentionBuilder &ab, Value operand, bool sameHeads,
                  Size batch, Size queryHeads, Size group) {
  if (sameHeads)
    return operand;
  Size heads = ab.dim(operand, 1), seq = ab.dim(operand, 2),
       width = ab.dim(operand, 3);
  Value grouped = ab.broadcast(operand, {0, 1, 3, 4},
                               {batch, heads, group, seq, width},
                               /*nonexpanding=*/{0, 1, 2, 3});
  return ab.reshape(grouped, {batch, queryHeads, seq, width});
}

void decompose(disc::AttentionOp op, disc::ShapeConstraints &shapes) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  AttentionBuilder ab(b, loc);
  Value query = op.getQuery(), key = op.getKey(), value = op.getValue();
  Type elementType = cast<RankedTensorType>(query.getType()).getElementType();
  // The softmax runs in f32 whatever the operands' type (f16, bf16).
  Type f32 = b.getF32Type();
  Size batch = ab.dim(query, 0), heads = ab.dim(query, 1),
       queries = ab.dim(query, 2), headDim = ab.dim(query, 3),
       keyHeads = ab.dim(key, 1), keys = ab.dim(key, 2),
       valueDim = ab.dim(value, 3);

  // Grouped-query heads: the key/value heads must divide the query heads
  // (the verifier proves it for static sizes). Head counts that are one
  // symbol (the importer's disc.dims) or one static size need nothing.
  auto sameAsQueryHeads = [&](Value operand) {
    int64_t operandHeads =
        cast<RankedTensorType>(operand.getType()).getDimSize(1);
    return (heads.fixed != ShapedType::kDynamic &&
            heads.fixed == operandHeads) ||
           shapes.areEqual(query, 1, operand, 1);
  };
  const bool sameHeads = sameAsQueryHeads(key) && sameAsQueryHeads(value);
  Size group = {ShapedType::kDynamic, Value()};
  if (sameHeads) {
    group = {1, ab.index(1), b.getStringAttr("1")};
  } else if (heads.fixed != ShapedType::kDynamic &&
             keyHeads.fixed != ShapedType::kDynamic) {
    group.fixed = keyHeads.fixed == 0 ? 1 : heads.fixed / keyHeads.fixed;
    group.value = ab.index(group.fixed);
    group.symbol = b.getStringAttr(std::to_string(group.fixed));
  } else {
    Value zero = ab.index(0), one = ab.index(1);
    Value noKeyHeads = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             keyHeads.value, zero);
    Value divisor =
        arith::SelectOp::create(b, loc, noKeyHeads, one, keyHeads.value);
    Value remainder = arith::RemUIOp::create(b, loc, heads.value, divisor);
    Value divides = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          remainder, zero);
    Value noHeads = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          heads.value, zero);
    Value ok = arith::SelectOp::create(b, loc, noKeyHeads, noHeads, divides);
    cf::AssertOp::create(b, loc, ok,
                         "disc.attention: the query head count must be a "
                         "multiple of the key/value head count");
    group.value = arith::DivUIOp::create(b, loc, heads.value, divisor);
  }
  Value keyPerHead = repeatHeads(ab, key, sameHeads, batch, heads, group);
  Value valuePerHead = repeatHeads(ab, value, sameHeads, batch, heads, group);

  // scores = q k^T * scale (+ mask), [B, H, L, S], in f32.
  SmallVector<Size> scoresShape{batch, heads, queries, keys};
  Value scores = ab.convert(
      ab.batchedProduct(query, keyPerHead, /*rhsTransposed=*/true,
                        scoresShape),
      f32);
  Value scale;
  if (std::optional<APFloat> fixed = op.getScale()) {
    scale = ab.scalar(fixed->convertToDouble(), f32);
  } else if (headDim.fixed != ShapedType::kDynamic) {
    scale = ab.scalar(1.0 / std::sqrt((double)headDim.fixed), f32);
  } else {
    // 1 / sqrt(E) of the run-time head dim.
    Value asInt =
        arith::IndexCastOp::create(b, loc, b.getI64Type(), headDim.value);
    Value asFloat = arith::UIToFPOp::create(b, loc, f32, asInt);
    Value root = math::SqrtOp::create(b, loc, asFloat);
    Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f));
    Value reciprocal = arith::DivFOp::create(b, loc, one, root);
    scale = tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({}, f32), ValueRange{reciprocal});
  }
  scores = ab.binary<disc::MulOp>(scores, ab.broadcast(scale, {}, scoresShape));
  if (Value mask = op.getMask()) {
    // Mask dims of 1 broadcast; a dim of another static size or named as
    // the scores' dim does not expand.
    auto maskType = cast<RankedTensorType>(mask.getType());
    SmallVector<int64_t> nonexpanding;
    for (int64_t d = 0; d < 4; ++d) {
      StringAttr symbol = symbolOf(mask, d);
      if ((!maskType.isDynamicDim(d) && maskType.getDimSize(d) != 1) ||
          (maskType.isDynamicDim(d) && symbol &&
           symbol == scoresShape[d].symbol))
        nonexpanding.push_back(d);
    }
    scores = ab.binary<disc::AddOp>(
        scores, ab.broadcast(ab.convert(mask, f32), {0, 1, 2, 3}, scoresShape,
                             nonexpanding));
  }
  const double negInf = -std::numeric_limits<double>::infinity();
  if (op.getCausal()) {
    // Row i keeps keys j <= i (PyTorch's is_causal, aligned top-left).
    RankedTensorType positions = ab.typeOf(scoresShape, b.getI64Type());
    Value shape = ab.shapeTensor(scoresShape);
    Value row = ab.named(disc::DynamicIotaOp::create(b, loc, positions, shape,
                                                     b.getI64IntegerAttr(2)),
                         scoresShape);
    Value column =
        ab.named(disc::DynamicIotaOp::create(b, loc, positions, shape,
                                             b.getI64IntegerAttr(3)),
                 scoresShape);
    scores = ab.select(ab.compare(disc::ComparisonDirection::GT, column, row),
                       ab.broadcast(ab.scalar(negInf, f32), {}, scoresShape),
                       scores);
  }

  // The softmax through each row's log-sum-exp, as a stitch kernel
  // computes it in one loop over the row: m = max(s), lse = m + log(sum(
  // exp(s - m))), p = exp(s - lse). Each exponential is used once, so the
  // row kernel needs no row-sized temporary when p is converted (f16,
  // bf16). A row whose scores are all -inf (a mask hiding every key) has
  // m = -inf: it is shifted by 0 instead and its sum of 0 counts as 1
  // (lse = 0), so p is 0 and the row is 0, as the CPU target's attention
  // gives. A NaN score makes the row NaN.
  SmallVector<Size> rowsShape{batch, heads, queries};
  auto rowsOf = [&](double value) {
    return ab.broadcast(ab.scalar(value, f32), {}, rowsShape);
  };
  Value rowMax = ab.reduceLast(scores, scoresShape, disc::ReduceKind::Max);
  Value shift = ab.select(
      ab.compare(disc::ComparisonDirection::EQ, rowMax, rowsOf(negInf)),
      rowsOf(0.0), rowMax);
  Value shifted = ab.binary<disc::SubtractOp>(
      scores, ab.broadcast(shift, {0, 1, 2}, scoresShape, {0, 1, 2}));
  Value sums = ab.reduceLast(
      ab.namedLike(disc::ExpOp::create(b, loc, scores.getType(), shifted),
                   scores),
      scoresShape, disc::ReduceKind::Sum);
  Value sumsOrOne = ab.select(
      ab.compare(disc::ComparisonDirection::EQ, sums, rowsOf(0.0)),
      rowsOf(1.0), sums);
  Value logSumExp = ab.binary<disc::AddOp>(
      shift, ab.namedLike(disc::LogOp::create(b, loc, sums.getType(),
                                              sumsOrOne),
                          sums));
  Value probabilities = ab.namedLike(
      disc::ExpOp::create(
          b, loc, scores.getType(),
          ab.binary<disc::SubtractOp>(
              scores,
              ab.broadcast(logSumExp, {0, 1, 2}, scoresShape, {0, 1, 2}))),
      scores);
  SmallVector<Size> resultShape{batch, heads, queries, valueDim};
  Value result =
      ab.batchedProduct(ab.convert(probabilities, elementType), valuePerHead,
                        /*rhsTransposed=*/false, resultShape);
  if (result.getType() != op.getType())
    result = tensor::CastOp::create(b, loc, op.getType(), result);
  op.replaceAllUsesWith(result);
  op.erase();
}

struct DecomposeAttention
    : disc::impl::DiscDecomposeAttentionBase<DecomposeAttention> {
  void runOnOperation() override {
    SmallVector<disc::AttentionOp> ops;
    getOperation().walk([&](disc::AttentionOp op) { ops.push_back(op); });
    if (ops.empty())
      return;
    // Built before any rewrite: its classes name the function's values.
    disc::ShapeConstraints shapes(getOperation());
    for (disc::AttentionOp op : ops)
      decompose(op, shapes);
  }
};

} // namespace
