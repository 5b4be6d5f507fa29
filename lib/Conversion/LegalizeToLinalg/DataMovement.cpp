//===- DataMovement.cpp - disc data movement ops to linalg/tensor --------===//
//
// Broadcasts become linalg.generic; reshapes tensor.expand_shape /
// collapse_shape where the shape analysis proved their dim groups, else
// tensor.reshape; transpose, reverse, slices, concatenate and pad become
// linalg or tensor ops.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

using namespace mlir;
using namespace disc;
using namespace disc::legalize;

namespace disc::legalize {
namespace {

//===----------------------------------------------------------------------===//
// Broadcast
//===----------------------------------------------------------------------===//

template <typename OpTy>
struct BroadcastToLinalg : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value operand = adaptor.getOperand();
    auto operandType = cast<RankedTensorType>(operand.getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    auto outDims = reifyResultDims(rewriter, op);
    if (failed(outDims))
      return failure();
    int64_t rank = resultType.getRank();
    ArrayRef<int64_t> bdims = op.getBroadcastDimensions();
    SmallVector<Value> inDims = getDims(rewriter, loc, operand);
    // Decide per operand dim: statically equal (identity), statically 1
    // (expand), or known only at run time (index computed in the body).
    SmallVector<int64_t> nonexpanding;
    if constexpr (std::is_same_v<OpTy, DynamicBroadcastInDimOp>)
      if (auto known = op.getKnownNonexpandingDimensions())
        nonexpanding.assign(known->begin(), known->end());
    SmallVector<AffineExpr> exprs;
    bool needsRuntimeIndex = false;
    for (auto [i, d] : llvm::enumerate(bdims)) {
      int64_t in = operandType.getDimSize(i), out = resultType.getDimSize(d);
      if (in == 1 && out != 1) {
        exprs.push_back(rewriter.getAffineConstantExpr(0));
        continue;
      }
      if (!ShapedType::isDynamic(in) && in == out) {
        exprs.push_back(rewriter.getAffineDimExpr(d));
        continue;
      }
      if (llvm::is_contained(nonexpanding, (int64_t)i)) {
        // Declared equal by the producer: index directly, check once.
        disc::emitAssertEqualSizes(rewriter, loc, inDims[i], (*outDims)[d],
                    opLabel(op) + ": operand dim " + Twine(i) +
                        " is declared non-expanding but differs from "
                        "result dim " +
                        Twine(d));
        exprs.push_back(rewriter.getAffineDimExpr(d));
        continue;
      }
      // Run-time: operand dim is either the output dim or 1.
      Value isOne = arith::CmpIOp::create(rewriter, loc,
                                          arith::CmpIPredicate::eq, inDims[i],
                                          cIndex(rewriter, loc, 1));
      Value isEqual = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::eq, inDims[i], (*outDims)[d]);
      assertTrue(rewriter, loc,
                 arith::OrIOp::create(rewriter, loc, isOne, isEqual),
                 opLabel(op) + ": operand dim " + Twine(i) +
                     " is neither 1 nor the size of result dim " + Twine(d));
      if (!ShapedType::isDynamic(in) && ShapedType::isDynamic(out)) {
        exprs.push_back(rewriter.getAffineDimExpr(d)); // asserted equal
        continue;
      }
      needsRuntimeIndex = true;
      exprs.push_back(rewriter.getAffineDimExpr(d));
    }
    auto outType = signlessTensor(resultType);
    Value in = operand;
    auto inSignless = signlessTensor(operandType);
    in = castTo(rewriter, loc, in, inSignless);
    Value init = emptyTensor(rewriter, loc, outType, *outDims);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    linalg::GenericOp generic;
    if (!needsRuntimeIndex) {
      SmallVector<AffineMap> maps{
          AffineMap::get(rank, 0, exprs, rewriter.getContext()),
          rewriter.getMultiDimIdentityMap(rank)};
      generic = linalg::GenericOp::create(
          rewriter, loc, TypeRange{outType}, ValueRange{in}, ValueRange{init},
          maps, iterators, [](OpBuilder &b, Location l, ValueRange args) {
            linalg::YieldOp::create(b, l, args[0]);
          });
    } else {
      // index_i = (inDim_i == 1) ? 0 : outIndex_{bdims[i]}
      SmallVector<Value> expand;
      for (auto [i, d] : llvm::enumerate(bdims))
        expand.push_back(arith::CmpIOp::create(rewriter, loc,
                                               arith::CmpIPredicate::eq,
                                               inDims[i],
                                               cIndex(rewriter, loc, 1)));
      SmallVector<AffineMap> maps{rewriter.getMultiDimIdentityMap(rank)};
      generic = linalg::GenericOp::create(
          rewriter, loc, TypeRange{outType}, ValueRange{}, ValueRange{init},
          maps, iterators, [&](OpBuilder &b, Location l, ValueRange) {
            SmallVector<Value> idx;
            Value zero = cIndex(b, l, 0);
            for (auto [i, d] : llvm::enumerate(bdims)) {
              Value o = linalg::IndexOp::create(b, l, d);
              idx.push_back(arith::SelectOp::create(b, l, expand[i], zero, o));
            }
            Value v = tensor::ExtractOp::create(b, l, in, idx);
            linalg::YieldOp::create(b, l, v);
          });
    }
    Value result = generic.getResult(0);
    result = castTo(rewriter, loc, result, resultType);
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Reshape / transpose / slice / concatenate / pad
//===----------------------------------------------------------------------===//

/// `value` as `type` (the same shape with sizes static on one side and
/// dynamic on the other): a tensor.cast when they differ.
Value castShape(OpBuilder &b, Location loc, Value value, Type type) {
  return value.getType() == type ? value
                                 : tensor::CastOp::create(b, loc, type, value);
}

/// `expanded` collapsed by `reassociation` the way tensor.expand_shape and
/// tensor.collapse_shape require: a group's dim is static exactly when all
/// its members are. A reshape's two sides can disagree: a dim the user
/// marked dynamic may meet a size the graph pins (a position table of 197
/// rows), so `[1, ?, 3, 64] -> [1, 197, 192]` is a valid reshape whose
/// groups are not a valid collapse_shape without a cast on one side.
RankedTensorType collapsedType(RankedTensorType expanded,
                               ArrayRef<ReassociationIndices> reassociation) {
  return tensor::CollapseShapeOp::inferCollapsedType(
      expanded, SmallVector<ReassociationIndices>(reassociation));
}


/// Whether `type` has a dim of static size 0: a tensor without elements.
/// Reshaped, it is an empty tensor of the new shape (after the size
/// checks). As a collapse_shape, a group that holds the 0 beside a dynamic
/// dim is a dynamic dim at the tensor level, but bufferization infers the
/// collapsed memref's dim as a static 0, which the memref op's verifier
/// rejects (a static 0 head count of attention, decomposed for cuda:
/// fuzz/disc_fuzz.py --differential).
bool hasStaticZeroDim(RankedTensorType type) {
  return llvm::is_contained(type.getShape(), 0);
}

/// A reshape whose dim groups are proven becomes tensor.expand_shape or
/// tensor.collapse_shape (a tensor.cast for equal ranks): linalg fusion and
/// tiling see through those. Any other reshape is a tensor.reshape, which
/// they do not.
template <typename OpTy>
struct ReshapeToTensor : public OpConversionPattern<OpTy> {
  ReshapeToTensor(MLIRContext *ctx, const ReshapeGroups &groups)
      : OpConversionPattern<OpTy>(ctx), groups(groups) {}
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto outDims = reifyResultDims(rewriter, op);
    if (failed(outDims))
      return failure();
    Value operand = adaptor.getOperand();
    SmallVector<Value> inDims = getDims(rewriter, loc, operand);
    auto resultType = cast<RankedTensorType>(op.getType());
    auto operandType = cast<RankedTensorType>(operand.getType());
    auto proven = groups.find(op.getOperation());
    std::string mismatch =
        opLabel(op) +
        ": the new shape does not have the operand's number of elements";
    if (proven == groups.end()) {
      // The new sizes may come from data: each must be non-negative and
      // their product must not wrap (a wrapped product could equal the
      // operand's count).
      Value outCount = emitCheckedElementCount(rewriter, loc, *outDims,
                                               /*elementBytes=*/1, opLabel(op));
      disc::emitAssertEqualSizes(rewriter, loc, outCount,
                                 product(rewriter, loc, inDims), mismatch);
    } else {
      // Each group's product must match its dim (the analysis proved it
      // for the symbols; this checks the run-time sizes agree with them).
      ArrayRef<ReassociationIndices> reassociation = proven->second;
      bool expanding = resultType.getRank() >= operandType.getRank();
      ArrayRef<Value> narrow = expanding ? ArrayRef<Value>(inDims) : *outDims;
      ArrayRef<Value> wide = expanding ? *outDims : ArrayRef<Value>(inDims);
      for (auto [n, group] : llvm::enumerate(reassociation)) {
        SmallVector<Value> members;
        for (int64_t w : group)
          members.push_back(wide[w]);
        disc::emitAssertEqualSizes(
            rewriter, loc, product(rewriter, loc, members), narrow[n],
            mismatch);
      }
    }
    if (hasStaticZeroDim(operandType)) {
      rewriter.replaceOp(op, emptyTensor(rewriter, loc, resultType, *outDims));
      return success();
    }
    Value result =
        proven == groups.end()
            ? buildRowMajorReshape(rewriter, loc, operand, resultType,
                                   *outDims)
            : buildGroupedReshape(rewriter, loc, operand, resultType,
                                  *outDims, proven->second);
    rewriter.replaceOp(op, result);
    return success();
  }

private:
  /// One group of every dim of `type`: its flattening.
  static ReassociationIndices allDims(RankedTensorType type) {
    return llvm::to_vector<2>(llvm::seq<int64_t>(0, type.getRank()));
  }

  /// Row-major order: flatten, then unflatten to the new shape. Both steps
  /// are views; tensor.reshape would lower to memref.reshape, which
  /// upstream expand-strided-metadata cannot follow with an expand_shape.
  /// A rank-0 operand or result is a tensor.reshape.
  static Value buildRowMajorReshape(ConversionPatternRewriter &rewriter,
                                    Location loc, Value operand,
                                    RankedTensorType resultType,
                                    ArrayRef<Value> outDims) {
    auto operandType = cast<RankedTensorType>(operand.getType());
    if (operandType.getRank() == 0 || resultType.getRank() == 0) {
      Value shape = tensor::FromElementsOp::create(
          rewriter, loc,
          RankedTensorType::get({(int64_t)outDims.size()},
                                rewriter.getIndexType()),
          outDims);
      return tensor::ReshapeOp::create(rewriter, loc, resultType, operand,
                                       shape);
    }
    Value flat = operand;
    if (operandType.getRank() != 1) {
      flat = tensor::CollapseShapeOp::create(
          rewriter, loc, operand,
          ArrayRef<ReassociationIndices>{allDims(operandType)});
    }
    if (resultType.getRank() == 1)
      return castShape(rewriter, loc, flat, resultType);
    SmallVector<ReassociationIndices> groups{allDims(resultType)};
    return tensor::ExpandShapeOp::create(
        rewriter, loc, resultType,
        castShape(rewriter, loc, flat, collapsedType(resultType, groups)),
        groups, mixedSizes(rewriter, resultType, outDims));
  }

  /// Proven dim groups: tensor.expand_shape or tensor.collapse_shape (a
  /// tensor.cast for equal ranks).
  static Value buildGroupedReshape(ConversionPatternRewriter &rewriter,
                                   Location loc, Value operand,
                                   RankedTensorType resultType,
                                   ArrayRef<Value> outDims,
                                   ArrayRef<ReassociationIndices> groups) {
    auto operandType = cast<RankedTensorType>(operand.getType());
    if (resultType.getRank() == operandType.getRank())
      return tensor::CastOp::create(rewriter, loc, resultType, operand);
    if (resultType.getRank() > operandType.getRank())
      return tensor::ExpandShapeOp::create(
          rewriter, loc, resultType,
          castShape(rewriter, loc, operand, collapsedType(resultType, groups)),
          groups, mixedSizes(rewriter, resultType, outDims));
    Value collapsed = tensor::CollapseShapeOp::create(
        rewriter, loc, collapsedType(operandType, groups), operand, groups);
    return castShape(rewriter, loc, collapsed, resultType);
  }

private:
  const ReshapeGroups &groups;
};

struct TransposeToLinalg : public OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto outDims = reifyResultDims(rewriter, op);
    if (failed(outDims))
      return failure();
    auto type = cast<RankedTensorType>(op.getType());
    Value init = emptyTensor(rewriter, loc, type, *outDims);
    auto t = linalg::TransposeOp::create(rewriter, loc, adaptor.getOperand(),
                                         init, op.getPermutation());
    rewriter.replaceOp(op, t.getResult());
    return success();
  }
};

struct ReverseToLinalg : public OpConversionPattern<ReverseOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReverseOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value operand = adaptor.getOperand();
    auto type = cast<RankedTensorType>(op.getType());
    auto outType = signlessTensor(type);
    operand = castTo(rewriter, loc, operand, outType);
    SmallVector<Value> dims = getDims(rewriter, loc, operand);
    Value init = emptyTensor(rewriter, loc, outType, dims);
    int64_t rank = type.getRank();
    ArrayRef<int64_t> reversed = op.getDimensions();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{outType}, ValueRange{}, ValueRange{init},
        SmallVector<AffineMap>{rewriter.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> idx;
          for (int64_t d = 0; d < rank; ++d) {
            Value i = linalg::IndexOp::create(b, l, d);
            if (llvm::is_contained(reversed, d)) {
              // size - 1 - i
              Value last = arith::SubIOp::create(b, l, dims[d], cIndex(b, l, 1));
              i = arith::SubIOp::create(b, l, last, i);
            }
            idx.push_back(i);
          }
          linalg::YieldOp::create(
              b, l, tensor::ExtractOp::create(b, l, operand, idx).getResult());
        });
    Value result = generic.getResult(0);
    result = castTo(rewriter, loc, result, type);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SliceToTensor : public OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value operand = adaptor.getOperand();
    auto operandType = cast<RankedTensorType>(operand.getType());
    SmallVector<Value> inDims = getDims(rewriter, loc, operand);
    for (auto [i, l] : llvm::enumerate(op.getLimitIndices()))
      if (operandType.isDynamicDim(i))
        assertTrue(rewriter, loc,
                   arith::CmpIOp::create(rewriter, loc,
                                         arith::CmpIPredicate::sle,
                                         cIndex(rewriter, loc, l), inDims[i]),
                   opLabel(op) + ": limit " + Twine(l) + " of dim " + Twine(i) +
                       " exceeds the operand size");
    SmallVector<int64_t> sizes;
    for (auto [s, l, st] : llvm::zip(op.getStartIndices(),
                                     op.getLimitIndices(), op.getStrides()))
      sizes.push_back((l - s + st - 1) / st);
    auto slice = tensor::ExtractSliceOp::create(
        rewriter, loc, cast<RankedTensorType>(op.getType()), operand,
        ValueRange{}, ValueRange{}, ValueRange{}, op.getStartIndices(), sizes,
        op.getStrides());
    rewriter.replaceOp(op, slice.getResult());
    return success();
  }
};

struct RealDynamicSliceToTensor
    : public OpConversionPattern<RealDynamicSliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RealDynamicSliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value operand = adaptor.getOperand();
    auto start = getShapeElements(rewriter, loc, adaptor.getStartIndices());
    auto limit = getShapeElements(rewriter, loc, adaptor.getLimitIndices());
    auto strides = getShapeElements(rewriter, loc, adaptor.getStrides());
    auto outDims = reifyResultDims(rewriter, op);
    if (failed(outDims))
      return failure();
    SmallVector<Value> inDims = getDims(rewriter, loc, operand);
    Value zero = cIndex(rewriter, loc, 0);
    for (size_t i = 0; i < inDims.size(); ++i) {
      Value ok = arith::AndIOp::create(
          rewriter, loc,
          arith::AndIOp::create(
              rewriter, loc,
              arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sle,
                                    zero, start[i]),
              arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sle,
                                    start[i], limit[i])),
          arith::AndIOp::create(
              rewriter, loc,
              arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sle,
                                    limit[i], inDims[i]),
              arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sgt,
                                    strides[i], zero)));
      assertTrue(rewriter, loc, ok,
                 opLabel(op) + ": dim " + Twine(i) +
                     " needs 0 <= start <= limit <= size and stride > 0");
    }
    SmallVector<OpFoldResult> offsets(start.begin(), start.end()),
        sizes = mixedSizes(rewriter, cast<RankedTensorType>(op.getType()),
                           *outDims),
        steps(strides.begin(), strides.end());
    auto slice = tensor::ExtractSliceOp::create(
        rewriter, loc, cast<RankedTensorType>(op.getType()), operand, offsets,
        sizes, steps);
    rewriter.replaceOp(op, slice.getResult());
    return success();
  }
};

struct ConcatenateToTensor : public OpConversionPattern<ConcatenateOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConcatenateOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto outDims = reifyResultDims(rewriter, op);
    if (failed(outDims))
      return failure();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t axis = op.getDimension();
    SmallVector<SmallVector<Value>> inputDims;
    for (Value input : adaptor.getInputs())
      inputDims.push_back(getDims(rewriter, loc, input));
    // The buffer holds every input's slice whatever the size checks below
    // find: an input's producer may be bufferized to write its slice in
    // place (empty-tensor elimination moves it after this buffer's
    // allocation), and so before the checks run. Along a dim where an
    // input's size is only checked at run time, the buffer takes the
    // largest (the result's size when the checks pass); the fuzzer found
    // a static 16x16 input written into the 1x1 buffer of a dynamic one.
    SmallVector<Value> bufferDims(*outDims);
    SmallVector<int64_t> bufferShape(type.getShape());
    auto growTo = [&](int64_t d, Value size) {
      if (disc::sizesKnownEqual(size, bufferDims[d]))
        return;
      bufferDims[d] =
          arith::MaxSIOp::create(rewriter, loc, bufferDims[d], size);
      bufferShape[d] = ShapedType::kDynamic;
    };
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != axis)
        for (ArrayRef<Value> dims : inputDims)
          growTo(d, dims[d]);
    // Along the axis a dynamic result is the inputs' sum by construction;
    // a static one is checked against it (LegalizeToLinalg.cpp).
    if (!type.isDynamicDim(axis) &&
        llvm::any_of(adaptor.getInputs(), [&](Value input) {
          return cast<RankedTensorType>(input.getType()).isDynamicDim(axis);
        })) {
      Value sum = cIndex(rewriter, loc, 0);
      for (ArrayRef<Value> dims : inputDims)
        sum = arith::AddIOp::create(rewriter, loc, sum, dims[axis]);
      growTo(axis, sum);
    }
    Value result = emptyTensor(rewriter, loc, type.clone(bufferShape),
                               bufferDims);
    Value offset = cIndex(rewriter, loc, 0);
    for (auto [idx, input] : llvm::enumerate(adaptor.getInputs())) {
      ArrayRef<Value> dims = inputDims[idx];
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (d != axis)
          disc::emitAssertEqualSizes(rewriter, loc, dims[d], (*outDims)[d],
                      opLabel(op) + ": input " + Twine(idx) + " dim " +
                          Twine(d) + " does not match input 0");
      // An input with a static zero-size dim adds nothing (and an
      // insert_slice at the end of the axis would be out of bounds).
      if (llvm::is_contained(
              cast<RankedTensorType>(input.getType()).getShape(), 0))
        continue;
      SmallVector<OpFoldResult> offsets(type.getRank(),
                                        rewriter.getIndexAttr(0));
      offsets[axis] = offset;
      SmallVector<OpFoldResult> sizes =
          mixedSizes(rewriter, cast<RankedTensorType>(input.getType()), dims);
      SmallVector<OpFoldResult> strides(type.getRank(),
                                        rewriter.getIndexAttr(1));
      result = tensor::InsertSliceOp::create(rewriter, loc, input, result,
                                             offsets, sizes, strides);
      offset = arith::AddIOp::create(rewriter, loc, offset, dims[axis]);
    }
    // Larger than the result only where the checks have failed.
    if (ArrayRef<int64_t>(bufferShape) != type.getShape())
      result = tensor::CastOp::create(rewriter, loc, type, result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The largest padding amount (either sign) and interior padding: sizes
/// padded by at most this cannot wrap a 64-bit index.
constexpr int64_t kMaxPadding = std::numeric_limits<int32_t>::max();

template <typename OpTy>
struct PadToTensor : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value operand = adaptor.getOperand();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t rank = type.getRank();
    SmallVector<Value> lo, hi, interior;
    if constexpr (std::is_same_v<OpTy, PadOp>) {
      // Negative edge padding crops; supported without interior padding.
      SmallVector<int64_t> cropLo, cropHi;
      bool crop = false;
      for (int64_t i = 0; i < rank; ++i) {
        int64_t l = op.getEdgePaddingLow()[i], h = op.getEdgePaddingHigh()[i];
        if ((l < 0 || h < 0) && op.getInteriorPadding()[i] != 0)
          return rewriter.notifyMatchFailure(
              op, "negative edge padding with interior padding");
        cropLo.push_back(l < 0 ? -l : 0);
        cropHi.push_back(h < 0 ? -h : 0);
        crop |= l < 0 || h < 0;
        lo.push_back(cIndex(rewriter, loc, std::max<int64_t>(l, 0)));
        hi.push_back(cIndex(rewriter, loc, std::max<int64_t>(h, 0)));
        interior.push_back(cIndex(rewriter, loc, op.getInteriorPadding()[i]));
      }
      if (crop) {
        SmallVector<Value> dims = getDims(rewriter, loc, operand);
        SmallVector<OpFoldResult> offsets, sizes, strides;
        for (int64_t i = 0; i < rank; ++i) {
          offsets.push_back(rewriter.getIndexAttr(cropLo[i]));
          Value size = arith::SubIOp::create(
              rewriter, loc, dims[i],
              cIndex(rewriter, loc, cropLo[i] + cropHi[i]));
          sizes.push_back(size);
          strides.push_back(rewriter.getIndexAttr(1));
        }
        operand = tensor::ExtractSliceOp::create(rewriter, loc, operand,
                                                 offsets, sizes, strides);
      }
    } else {
      lo = getShapeElements(rewriter, loc, adaptor.getEdgePaddingLow());
      hi = getShapeElements(rewriter, loc, adaptor.getEdgePaddingHigh());
      interior = getShapeElements(rewriter, loc, adaptor.getInteriorPadding());
      Value zero = cIndex(rewriter, loc, 0);
      // `pred(v, bound)` for each of the dim's three amounts.
      auto allOf = [&](int64_t i, arith::CmpIPredicate pred, Value bound) {
        Value ok;
        for (Value v : {lo[i], hi[i], interior[i]}) {
          Value c = arith::CmpIOp::create(rewriter, loc, pred, v, bound);
          ok = ok ? arith::AndIOp::create(rewriter, loc, ok, c).getResult() : c;
        }
        return ok;
      };
      Value limit = cIndex(rewriter, loc, kMaxPadding);
      Value negLimit = cIndex(rewriter, loc, -kMaxPadding);
      auto nonNegativeConstant = [](Value v) {
        std::optional<int64_t> c = getConstantIntValue(v);
        return c && *c >= 0;
      };
      // Negative edge amounts crop (a convolution's weight gradient cut
      // to the kernel by a symbolic amount), as PadOp's static ones do:
      // the operand is sliced first, then padded by the positive parts.
      // Amounts known non-negative need no slice.
      bool mayCrop = false;
      for (int64_t i = 0; i < rank; ++i)
        mayCrop |= !nonNegativeConstant(lo[i]) || !nonNegativeConstant(hi[i]);
      SmallVector<Value> dims = getDims(rewriter, loc, operand);
      SmallVector<OpFoldResult> offsets, sizes, strides;
      for (int64_t i = 0; i < rank; ++i) {
        assertTrue(rewriter, loc, allOf(i, arith::CmpIPredicate::sge, negLimit),
                   opLabel(op) + ": padding of dim " + Twine(i) +
                       " is smaller than " + Twine(-kMaxPadding));
        assertTrue(rewriter, loc,
                   arith::CmpIOp::create(rewriter, loc,
                                         arith::CmpIPredicate::sge,
                                         interior[i], zero),
                   opLabel(op) + ": negative interior padding of dim " +
                       Twine(i));
        // Amounts as PadOp's verifier bounds them, so the padded size
        // cannot wrap.
        assertTrue(rewriter, loc, allOf(i, arith::CmpIPredicate::sle, limit),
                   opLabel(op) + ": padding of dim " + Twine(i) +
                       " is larger than " + Twine(kMaxPadding));
        if (!mayCrop)
          continue;
        // Folded where the amounts are constants, so static sizes stay
        // static in the slice's type.
        auto negativePart = [&](Value v) -> Value {
          return rewriter.createOrFold<arith::MaxSIOp>(
              loc, rewriter.createOrFold<arith::SubIOp>(loc, zero, v), zero);
        };
        Value cropLo = negativePart(lo[i]), cropHi = negativePart(hi[i]);
        Value crop = rewriter.createOrFold<arith::AddIOp>(loc, cropLo, cropHi);
        Value noCrop = arith::CmpIOp::create(
            rewriter, loc, arith::CmpIPredicate::eq, crop, zero);
        Value noInterior = arith::CmpIOp::create(
            rewriter, loc, arith::CmpIPredicate::eq, interior[i], zero);
        assertTrue(rewriter, loc,
                   arith::OrIOp::create(rewriter, loc, noCrop, noInterior),
                   opLabel(op) + ": negative padding of dim " + Twine(i) +
                       " together with interior padding is not supported");
        assertTrue(rewriter, loc,
                   arith::CmpIOp::create(rewriter, loc,
                                         arith::CmpIPredicate::sle, crop,
                                         dims[i]),
                   opLabel(op) + ": negative padding of dim " + Twine(i) +
                       " removes more than the dim's size");
        offsets.push_back(getAsOpFoldResult(cropLo));
        sizes.push_back(getAsOpFoldResult(
            rewriter.createOrFold<arith::SubIOp>(loc, dims[i], crop)));
        strides.push_back(rewriter.getIndexAttr(1));
        lo[i] = rewriter.createOrFold<arith::MaxSIOp>(loc, lo[i], zero);
        hi[i] = rewriter.createOrFold<arith::MaxSIOp>(loc, hi[i], zero);
      }
      if (mayCrop)
        operand = tensor::ExtractSliceOp::create(rewriter, loc, operand,
                                                 offsets, sizes, strides);
    }
    // Result = fill(pad) with the operand inserted at `lo`, stride
    // interior + 1.
    SmallVector<Value> inDims = getDims(rewriter, loc, operand), outDims;
    Value one = cIndex(rewriter, loc, 1), zero = cIndex(rewriter, loc, 0);
    for (int64_t i = 0; i < rank; ++i) {
      Value inMinusOne = arith::MaxSIOp::create(
          rewriter, loc, arith::SubIOp::create(rewriter, loc, inDims[i], one),
          zero);
      // (size - 1) * interior must not wrap.
      if (!isConstantIntValue(interior[i], 0))
        emitCheckedElementCount(rewriter, loc, {inMinusOne, interior[i]},
                                /*elementBytes=*/1, opLabel(op));
      Value d = arith::AddIOp::create(
          rewriter, loc, inDims[i],
          arith::MulIOp::create(rewriter, loc, inMinusOne, interior[i]));
      outDims.push_back(arith::AddIOp::create(
          rewriter, loc, d, arith::AddIOp::create(rewriter, loc, lo[i], hi[i])));
    }
    Value padScalar = tensor::ExtractOp::create(
        rewriter, loc, adaptor.getPaddingValue(), ValueRange{});
    Value init = emptyTensor(rewriter, loc, type, outDims);
    Value filled =
        linalg::FillOp::create(rewriter, loc, padScalar, init).getResult(0);
    SmallVector<OpFoldResult> offsets(lo.begin(), lo.end());
    SmallVector<OpFoldResult> sizes =
        mixedSizes(rewriter, cast<RankedTensorType>(operand.getType()), inDims);
    SmallVector<OpFoldResult> strides;
    for (Value in : interior)
      strides.push_back(
          arith::AddIOp::create(rewriter, loc, in, one).getResult());
    Value result = tensor::InsertSliceOp::create(rewriter, loc, operand, filled,
                                                 offsets, sizes, strides);
    if (result.getType() != type)
      result = tensor::CastOp::create(rewriter, loc, type, result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateDataMovementPatterns(RewritePatternSet &patterns,
                                  const ReshapeGroups &groups) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<BroadcastToLinalg<BroadcastInDimOp>,
               BroadcastToLinalg<DynamicBroadcastInDimOp>, TransposeToLinalg,
               ReverseToLinalg, SliceToTensor, RealDynamicSliceToTensor,
               ConcatenateToTensor, PadToTensor<PadOp>,
               PadToTensor<DynamicPadOp>>(ctx);
  patterns.add<ReshapeToTensor<ReshapeOp>, ReshapeToTensor<DynamicReshapeOp>>(
      ctx, groups);
}

} // namespace disc::legalize
