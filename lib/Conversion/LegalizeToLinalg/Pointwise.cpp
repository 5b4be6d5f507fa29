//===- Pointwise.cpp - elementwise disc ops to linalg --------------------===//
//
// Elementwise disc ops become linalg.generic with a scalar body; constants
// become arith constants, iotas linalg.generic over the index.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

using namespace mlir;
using namespace disc;
using namespace disc::legalize;

namespace disc::legalize {
namespace {

//===----------------------------------------------------------------------===//
// Scalar bodies
//===----------------------------------------------------------------------===//

Value zeroOf(OpBuilder &b, Location loc, Type t) {
  return arith::ConstantOp::create(b, loc, b.getZeroAttr(t));
}

Value oneOf(OpBuilder &b, Location loc, Type t) {
  if (isa<FloatType>(t))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(t, 1.0));
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(t, 1));
}

/// Integer division/remainder without UB: a zero divisor gives 0 (torch
/// raises there; StableHLO leaves it implementation-defined) and
/// INT_MIN / -1 wraps.
Value safeIntDivRem(OpBuilder &b, Location loc, Value lhs, Value rhs,
                    bool isRem, bool isUnsigned) {
  Type t = lhs.getType();
  Value zero = zeroOf(b, loc, t), one = oneOf(b, loc, t);
  Value isZero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rhs, zero);
  Value safe = arith::SelectOp::create(b, loc, isZero, one, rhs);
  Value result;
  if (isUnsigned) {
    result = isRem ? arith::RemUIOp::create(b, loc, lhs, safe).getResult()
                   : arith::DivUIOp::create(b, loc, lhs, safe).getResult();
  } else {
    // -1 divisor: x / -1 = -x (wrapping), x % -1 = 0.
    Value minusOne = arith::ConstantOp::create(b, loc, b.getIntegerAttr(t, -1));
    Value isMinusOne =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, safe, minusOne);
    Value safe2 = arith::SelectOp::create(b, loc, isMinusOne, one, safe);
    Value q = isRem ? arith::RemSIOp::create(b, loc, lhs, safe2).getResult()
                    : arith::DivSIOp::create(b, loc, lhs, safe2).getResult();
    Value special = isRem ? zero : arith::SubIOp::create(b, loc, zero, lhs);
    result = arith::SelectOp::create(b, loc, isMinusOne, special, q);
  }
  return arith::SelectOp::create(b, loc, isZero, zero, result);
}

/// Shifts with StableHLO semantics for out-of-range amounts.
Value safeShift(OpBuilder &b, Location loc, Operation *op, Value lhs,
                Value rhs) {
  Type t = lhs.getType();
  unsigned width = t.getIntOrFloatBitWidth();
  Value w = arith::ConstantOp::create(b, loc, b.getIntegerAttr(t, width));
  Value zero = zeroOf(b, loc, t);
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, rhs, w);
  Value shifted;
  Value outOfRange = zero;
  if (isa<ShiftLeftOp>(op)) {
    shifted = arith::ShLIOp::create(b, loc, lhs, rhs);
  } else if (isa<ShiftRightLogicalOp>(op)) {
    shifted = arith::ShRUIOp::create(b, loc, lhs, rhs);
  } else {
    Value wm1 = arith::ConstantOp::create(b, loc, b.getIntegerAttr(t, width - 1));
    Value clamped = arith::SelectOp::create(b, loc, inRange, rhs, wm1);
    return arith::ShRSIOp::create(b, loc, lhs, clamped);
  }
  return arith::SelectOp::create(b, loc, inRange, shifted, outOfRange);
}

Value convertScalar(OpBuilder &b, Location loc, Value v, Type from, Type to) {
  Type fromS = signless(from), toS = signless(to);
  if (fromS == toS)
    return v;
  bool fromFloat = isa<FloatType>(fromS), toFloat = isa<FloatType>(toS);
  if (toS.isInteger(1)) {
    if (fromFloat)
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v,
                                   zeroOf(b, loc, fromS));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v,
                                 zeroOf(b, loc, fromS));
  }
  if (fromFloat && toFloat) {
    if (fromS.getIntOrFloatBitWidth() < toS.getIntOrFloatBitWidth())
      return arith::ExtFOp::create(b, loc, toS, v);
    if (fromS.getIntOrFloatBitWidth() > toS.getIntOrFloatBitWidth())
      return arith::TruncFOp::create(b, loc, toS, v);
    // f16 <-> bf16: through f32.
    Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
    return arith::TruncFOp::create(b, loc, toS, wide);
  }
  if (!fromFloat && toFloat) {
    if (isUnsignedLike(from))
      return arith::UIToFPOp::create(b, loc, toS, v);
    return arith::SIToFPOp::create(b, loc, toS, v);
  }
  if (fromFloat && !toFloat) {
    if (isUnsignedLike(to))
      return arith::FPToUIOp::create(b, loc, toS, v);
    return arith::FPToSIOp::create(b, loc, toS, v);
  }
  unsigned fw = fromS.getIntOrFloatBitWidth(), tw = toS.getIntOrFloatBitWidth();
  if (fw < tw) {
    if (isUnsignedLike(from))
      return arith::ExtUIOp::create(b, loc, toS, v);
    return arith::ExtSIOp::create(b, loc, toS, v);
  }
  return arith::TruncIOp::create(b, loc, toS, v);
}

arith::CmpFPredicate floatPredicate(ComparisonDirection d) {
  switch (d) {
  case ComparisonDirection::EQ:
    return arith::CmpFPredicate::OEQ;
  case ComparisonDirection::NE:
    return arith::CmpFPredicate::UNE;
  case ComparisonDirection::GE:
    return arith::CmpFPredicate::OGE;
  case ComparisonDirection::GT:
    return arith::CmpFPredicate::OGT;
  case ComparisonDirection::LE:
    return arith::CmpFPredicate::OLE;
  case ComparisonDirection::LT:
    return arith::CmpFPredicate::OLT;
  }
  llvm_unreachable("bad direction");
}

arith::CmpIPredicate intPredicate(ComparisonDirection d, bool isUnsigned) {
  switch (d) {
  case ComparisonDirection::EQ:
    return arith::CmpIPredicate::eq;
  case ComparisonDirection::NE:
    return arith::CmpIPredicate::ne;
  case ComparisonDirection::GE:
    return isUnsigned ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge;
  case ComparisonDirection::GT:
    return isUnsigned ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt;
  case ComparisonDirection::LE:
    return isUnsigned ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle;
  case ComparisonDirection::LT:
    return isUnsigned ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt;
  }
  llvm_unreachable("bad direction");
}

/// The scalar computation of an elementwise disc op. `elementType` is the
/// (original, possibly unsigned) element type of the first tensor operand.
FailureOr<Value> buildScalar(OpBuilder &b, Location loc, Operation *op,
                             ValueRange args, Type elementType,
                             Type resultElementType) {
  bool isFloat = isa<FloatType>(elementType);
  bool isUnsigned = isUnsignedLike(elementType);
  bool isPred = elementType.isInteger(1);
  Value x = args.empty() ? Value() : args[0];
  Value y = args.size() > 1 ? args[1] : Value();
  using R = FailureOr<Value>;
  return TypeSwitch<Operation *, R>(op)
      .Case([&](AddOp) -> R {
        if (isFloat)
          return arith::AddFOp::create(b, loc, x, y).getResult();
        if (isPred)
          return arith::OrIOp::create(b, loc, x, y).getResult();
        return arith::AddIOp::create(b, loc, x, y).getResult();
      })
      .Case([&](SubtractOp) -> R {
        if (isFloat)
          return arith::SubFOp::create(b, loc, x, y).getResult();
        return arith::SubIOp::create(b, loc, x, y).getResult();
      })
      .Case([&](MulOp) -> R {
        if (isFloat)
          return arith::MulFOp::create(b, loc, x, y).getResult();
        if (isPred)
          return arith::AndIOp::create(b, loc, x, y).getResult();
        return arith::MulIOp::create(b, loc, x, y).getResult();
      })
      .Case([&](DivOp) -> R {
        if (isFloat)
          return arith::DivFOp::create(b, loc, x, y).getResult();
        return safeIntDivRem(b, loc, x, y, /*isRem=*/false, isUnsigned);
      })
      .Case([&](RemOp) -> R {
        if (isFloat)
          return arith::RemFOp::create(b, loc, x, y).getResult();
        return safeIntDivRem(b, loc, x, y, /*isRem=*/true, isUnsigned);
      })
      .Case([&](MaxOp) -> R {
        if (isFloat)
          return arith::MaximumFOp::create(b, loc, x, y).getResult();
        if (isUnsigned)
          return arith::MaxUIOp::create(b, loc, x, y).getResult();
        return arith::MaxSIOp::create(b, loc, x, y).getResult();
      })
      .Case([&](MinOp) -> R {
        if (isFloat)
          return arith::MinimumFOp::create(b, loc, x, y).getResult();
        if (isUnsigned)
          return arith::MinUIOp::create(b, loc, x, y).getResult();
        return arith::MinSIOp::create(b, loc, x, y).getResult();
      })
      .Case([&](PowOp) -> R {
        if (isFloat)
          return math::PowFOp::create(b, loc, x, y).getResult();
        if (isUnsigned)
          return math::IPowIOp::create(b, loc, x, y).getResult();
        // PyTorch's integer pow: a negative exponent gives 0 except for
        // bases 1 and -1. math.ipowi divides by zero for base 0 there, so
        // that base is replaced first and its result selected as 0.
        Value zero = zeroOf(b, loc, x.getType());
        Value zeroToNegative = arith::AndIOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, y, zero),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, zero));
        Value base = arith::SelectOp::create(b, loc, zeroToNegative,
                                             oneOf(b, loc, x.getType()), x);
        Value power = math::IPowIOp::create(b, loc, base, y);
        return arith::SelectOp::create(b, loc, zeroToNegative, zero, power)
            .getResult();
      })
      .Case([&](Atan2Op) -> R {
        return math::Atan2Op::create(b, loc, x, y).getResult();
      })
      .Case([&](CopySignOp) -> R {
        return math::CopySignOp::create(b, loc, x, y).getResult();
      })
      .Case([&](AndOp) -> R {
        return arith::AndIOp::create(b, loc, x, y).getResult();
      })
      .Case([&](OrOp) -> R {
        return arith::OrIOp::create(b, loc, x, y).getResult();
      })
      .Case([&](XorOp) -> R {
        return arith::XOrIOp::create(b, loc, x, y).getResult();
      })
      .Case<ShiftLeftOp, ShiftRightArithmeticOp, ShiftRightLogicalOp>(
          [&](Operation *shift) -> R {
            return safeShift(b, loc, shift, x, y);
          })
      .Case([&](CompareOp c) -> R {
        if (isFloat)
          return arith::CmpFOp::create(
                     b, loc, floatPredicate(c.getComparisonDirection()), x, y)
              .getResult();
        return arith::CmpIOp::create(
                   b, loc,
                   intPredicate(c.getComparisonDirection(), isUnsigned), x, y)
            .getResult();
      })
      .Case([&](SelectOp) -> R {
        return arith::SelectOp::create(b, loc, args[0], args[1], args[2])
            .getResult();
      })
      .Case([&](ClampOp) -> R {
        // args: min, operand, max
        Value lo = args[0], v = args[1], hi = args[2];
        if (isFloat) {
          Value m = arith::MaximumFOp::create(b, loc, v, lo);
          return arith::MinimumFOp::create(b, loc, m, hi).getResult();
        }
        if (isUnsigned) {
          Value m = arith::MaxUIOp::create(b, loc, v, lo);
          return arith::MinUIOp::create(b, loc, m, hi).getResult();
        }
        Value m = arith::MaxSIOp::create(b, loc, v, lo);
        return arith::MinSIOp::create(b, loc, m, hi).getResult();
      })
      .Case([&](ConvertOp) -> R {
        return convertScalar(b, loc, x, elementType, resultElementType);
      })
      .Case([&](AbsOp) -> R {
        if (isFloat)
          return math::AbsFOp::create(b, loc, x).getResult();
        if (isUnsigned)
          return x;
        return math::AbsIOp::create(b, loc, x).getResult();
      })
      .Case([&](NegOp) -> R {
        if (isFloat)
          return arith::NegFOp::create(b, loc, x).getResult();
        return arith::SubIOp::create(b, loc, zeroOf(b, loc, x.getType()), x)
            .getResult();
      })
      .Case([&](SignOp) -> R {
        Type t = x.getType();
        Value zero = zeroOf(b, loc, t);
        if (isFloat) {
          Value one = oneOf(b, loc, t);
          Value s = math::CopySignOp::create(b, loc, one, x);
          Value isZero =
              arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, zero);
          Value isNan =
              arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
          Value r = arith::SelectOp::create(b, loc, isZero, zero, s);
          return arith::SelectOp::create(b, loc, isNan, x, r).getResult();
        }
        Value gt = arith::CmpIOp::create(
            b, loc,
            isUnsigned ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt,
            x, zero);
        Value lt = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x,
                                         zero);
        Value gtI = arith::ExtUIOp::create(b, loc, t, gt);
        Value ltI = isUnsigned ? zero : arith::ExtUIOp::create(b, loc, t, lt);
        return arith::SubIOp::create(b, loc, gtI, ltI).getResult();
      })
      .Case([&](ExpOp) -> R { return math::ExpOp::create(b, loc, x).getResult(); })
      .Case([&](Expm1Op) -> R {
        return math::ExpM1Op::create(b, loc, x).getResult();
      })
      .Case([&](LogOp) -> R { return math::LogOp::create(b, loc, x).getResult(); })
      .Case([&](Log1pOp) -> R {
        return math::Log1pOp::create(b, loc, x).getResult();
      })
      .Case([&](Log2Op) -> R {
        return math::Log2Op::create(b, loc, x).getResult();
      })
      .Case([&](Log10Op) -> R {
        return math::Log10Op::create(b, loc, x).getResult();
      })
      .Case([&](Exp2Op) -> R {
        return math::Exp2Op::create(b, loc, x).getResult();
      })
      .Case([&](TanhOp) -> R {
        return math::TanhOp::create(b, loc, x).getResult();
      })
      .Case([&](LogisticOp) -> R {
        // 1 / (1 + exp(-x))
        Value one = oneOf(b, loc, x.getType());
        Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
        return arith::DivFOp::create(b, loc, one,
                                     arith::AddFOp::create(b, loc, one, e))
            .getResult();
      })
      .Case([&](SqrtOp) -> R {
        return math::SqrtOp::create(b, loc, x).getResult();
      })
      .Case([&](RsqrtOp) -> R {
        return math::RsqrtOp::create(b, loc, x).getResult();
      })
      .Case([&](CbrtOp) -> R {
        return math::CbrtOp::create(b, loc, x).getResult();
      })
      .Case([&](SineOp) -> R { return math::SinOp::create(b, loc, x).getResult(); })
      .Case([&](CosineOp) -> R {
        return math::CosOp::create(b, loc, x).getResult();
      })
      .Case([&](TanOp) -> R { return math::TanOp::create(b, loc, x).getResult(); })
      .Case([&](ErfOp) -> R { return math::ErfOp::create(b, loc, x).getResult(); })
      .Case([&](FloorOp) -> R {
        return math::FloorOp::create(b, loc, x).getResult();
      })
      .Case([&](CeilOp) -> R {
        return math::CeilOp::create(b, loc, x).getResult();
      })
      .Case([&](RoundNearestEvenOp) -> R {
        return math::RoundEvenOp::create(b, loc, x).getResult();
      })
      .Case([&](RoundNearestAfzOp) -> R {
        return math::RoundOp::create(b, loc, x).getResult();
      })
      .Case([&](NotOp) -> R {
        Value ones = arith::ConstantOp::create(
            b, loc, b.getIntegerAttr(x.getType(), -1));
        return arith::XOrIOp::create(b, loc, x, ones).getResult();
      })
      .Case([&](IsFiniteOp) -> R {
        return math::IsFiniteOp::create(b, loc, x).getResult();
      })
      .Default([](Operation *) -> R { return failure(); });
}

//===----------------------------------------------------------------------===//
// Elementwise ops -> linalg.generic
//===----------------------------------------------------------------------===//

struct ElementwiseToLinalg : public ConversionPattern {
  ElementwiseToLinalg(MLIRContext *ctx)
      : ConversionPattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isa<DiscDialect>(op->getDialect()) ||
        !(op->hasTrait<OpTrait::Elementwise>() || isa<ClampOp, SelectOp>(op)))
      return failure();
    Location loc = op->getLoc();
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    int64_t rank = resultType.getRank();
    // The first operand of full rank defines the iteration space (select's
    // pred, clamp's operand).
    Value shapeSource;
    for (Value v : operands)
      if (cast<RankedTensorType>(v.getType()).getRank() == rank) {
        shapeSource = v;
        break;
      }
    SmallVector<Value> dims = getDims(rewriter, loc, shapeSource);
    // Operands of full rank must agree with the iteration space at run time.
    for (auto [i, v] : llvm::enumerate(operands)) {
      auto type = cast<RankedTensorType>(v.getType());
      if (type.getRank() != rank || v == shapeSource)
        continue;
      SmallVector<Value> vDims = getDims(rewriter, loc, v);
      for (int64_t d = 0; d < rank; ++d)
        disc::emitAssertEqualSizes(rewriter, loc, vDims[d], dims[d],
                    opLabel(op) + ": operand " + Twine(i) + " dim " +
                        Twine(d) + " does not match the other operands");
    }
    SmallVector<AffineMap> maps;
    for (Value v : operands) {
      int64_t r = cast<RankedTensorType>(v.getType()).getRank();
      maps.push_back(r == rank ? rewriter.getMultiDimIdentityMap(rank)
                               : AffineMap::get(rank, 0, {}, getContext()));
    }
    maps.push_back(rewriter.getMultiDimIdentityMap(rank));
    RankedTensorType outType = signlessTensor(resultType);
    Value init = emptyTensor(rewriter, loc, outType, dims);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    // The element type that decides signedness: the first non-pred operand
    // (select/clamp bodies use the on_true/operand type).
    Type elementType =
        cast<RankedTensorType>(op->getOperand(0).getType()).getElementType();
    if (isa<SelectOp, ClampOp>(op))
      elementType =
          cast<RankedTensorType>(op->getOperand(1).getType()).getElementType();
    bool failedBody = false;
    SmallVector<Value> signlessOperands;
    for (auto [orig, v] : llvm::zip(op->getOperands(), operands)) {
      Type st = signlessTensor(v.getType());
      signlessOperands.push_back(
          castTo(rewriter, loc, v, st));
    }
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{outType}, signlessOperands, ValueRange{init},
        maps, iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          FailureOr<Value> v =
              buildScalar(b, l, op, args.drop_back(), elementType,
                          resultType.getElementType());
          if (failed(v)) {
            failedBody = true;
            linalg::YieldOp::create(b, l, args.back());
            return;
          }
          linalg::YieldOp::create(b, l, *v);
        });
    if (failedBody) {
      rewriter.eraseOp(generic);
      return rewriter.notifyMatchFailure(op, "no scalar lowering");
    }
    Value result = generic.getResult(0);
    result = castTo(rewriter, loc, result, resultType);
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Constants and iota
//===----------------------------------------------------------------------===//

/// An op whose every result has a static zero-size dim computes nothing:
/// its results are empty tensors. Lowering it like any other op would build
/// slices and reshapes that upstream verifiers reject for zero-size dims
/// (an offset 0 into a dim of size 0 is "out of bounds" for
/// tensor.extract_slice; memref.collapse_shape of a 0 x ? type), so it
/// becomes tensor.empty first (dynamic dims from shape reification).
struct EmptyResultToEmptyTensor : public ConversionPattern {
  EmptyResultToEmptyTensor(MLIRContext *ctx)
      : ConversionPattern(MatchAnyOpTypeTag(), /*benefit=*/10, ctx) {}
  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value>,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isa<DiscDialect>(op->getDialect()) || op->getNumResults() == 0)
      return failure();
    for (Type t : op->getResultTypes()) {
      auto type = dyn_cast<RankedTensorType>(t);
      if (!type || !llvm::is_contained(type.getShape(), 0))
        return failure();
    }
    SmallVector<Value> results;
    for (OpResult result : op->getResults()) {
      auto type = cast<RankedTensorType>(result.getType());
      SmallVector<Value> dims;
      if (!type.hasStaticShape()) {
        auto reified = reifyResultDims(rewriter, op, result.getResultNumber());
        if (failed(reified))
          return failure();
        dims = *reified;
      }
      Location loc = op->getLoc();
      results.push_back(castTo(rewriter, loc,
                               emptyTensor(rewriter, loc, signlessTensor(type),
                                           dims),
                               type));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct ConstantToArith : public OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto value = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!value)
      return rewriter.notifyMatchFailure(op, "only dense constants");
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getElementType().isUnsignedInteger()) {
      auto st = signlessTensor(type);
      Value c = arith::ConstantOp::create(
          rewriter, op.getLoc(),
          value.bitcast(st.getElementType()).reshape(st));
      rewriter.replaceOpWithNewOp<UnrealizedConversionCastOp>(op, type, c);
      return success();
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, value);
    return success();
  }
};

template <typename OpTy>
struct IotaToLinalg : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto dims = reifyResultDims(rewriter, op);
    if (failed(dims))
      return failure();
    auto type = cast<RankedTensorType>(op.getType());
    auto outType = signlessTensor(type);
    Value init = emptyTensor(rewriter, loc, outType, *dims);
    int64_t iotaDim = op.getIotaDimension();
    Type elementType = type.getElementType();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{outType}, ValueRange{}, ValueRange{init},
        SmallVector<AffineMap>{rewriter.getMultiDimIdentityMap(type.getRank())},
        SmallVector<utils::IteratorType>(type.getRank(),
                                         utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange) {
          Value i = linalg::IndexOp::create(b, l, iotaDim);
          Value asI64 = arith::IndexCastOp::create(b, l, b.getI64Type(), i);
          linalg::YieldOp::create(
              b, l,
              convertScalar(b, l, asI64, b.getI64Type(), elementType));
        });
    Value result = generic.getResult(0);
    result = castTo(rewriter, loc, result, type);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populatePointwisePatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ElementwiseToLinalg, EmptyResultToEmptyTensor, ConstantToArith,
               IotaToLinalg<IotaOp>, IotaToLinalg<DynamicIotaOp>>(ctx);
}

} // namespace disc::legalize
