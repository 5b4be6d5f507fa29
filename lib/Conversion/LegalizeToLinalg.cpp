//===- LegalizeToLinalg.cpp - memory-bound disc ops to linalg/tensor ------===//
//
// Every memory-bound disc op becomes linalg on tensors (or tensor ops, or an
// scf loop nest for scatter). Result shapes come from the op's shape
// reification, so everything works for `?` dims; where the op semantics need
// two run-time sizes to agree, a cf.assert checks it (lowered later to a
// runtime error, see disc-ral-lower-asserts).
//
//===----------------------------------------------------------------------===//
#include "disc/Analysis/ShapeConstraints.h"
#include "disc/Conversion/Passes.h"
#include "disc/Conversion/SizeChecks.h"

#include <limits>
#include "disc/Dialect/Disc/DiscDialect.h"

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/TypeSwitch.h"

namespace disc {
#define GEN_PASS_DEF_DISCLEGALIZETOLINALG
#include "disc/Conversion/Passes.h.inc"
} // namespace disc

using namespace mlir;
using namespace disc;

namespace {

Value cIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

bool isUnsignedLike(Type t) {
  auto it = dyn_cast<IntegerType>(t);
  return it && (it.isUnsigned() || it.getWidth() == 1);
}

/// Signless version of an element type (ui8 -> i8) for arith ops.
Type signless(Type t) {
  if (auto it = dyn_cast<IntegerType>(t))
    return IntegerType::get(t.getContext(), it.getWidth());
  return t;
}

RankedTensorType signlessTensor(Type t) {
  auto tt = cast<RankedTensorType>(t);
  return RankedTensorType::get(tt.getShape(), signless(tt.getElementType()));
}

/// Slice sizes for a tensor of `type`: static dims as attributes (so that
/// slice ops infer/verify the static type), dynamic dims as `dims`.
SmallVector<OpFoldResult> mixedSizes(OpBuilder &b, RankedTensorType type,
                                     ArrayRef<Value> dims) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t i = 0; i < type.getRank(); ++i)
    sizes.push_back(type.isDynamicDim(i)
                        ? OpFoldResult(dims[i])
                        : OpFoldResult(b.getIndexAttr(type.getDimSize(i))));
  return sizes;
}

/// `v` as type `t` through an unrealized cast (signed/unsigned integer
/// tensors <-> signless ones); `v` itself when it already has type `t`.
Value castTo(OpBuilder &b, Location loc, Value v, Type t) {
  if (v.getType() == t)
    return v;
  return UnrealizedConversionCastOp::create(b, loc, t, v).getResult(0);
}

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type,
                  ArrayRef<Value> dims) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType(),
                                 disc::dynamicSizes(type, dims));
}


void assertTrue(OpBuilder &b, Location loc, Value cond, const Twine &message) {
  if (auto c = getConstantIntValue(cond); c && *c)
    return;
  cf::AssertOp::create(b, loc, cond, message.str());
}


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

Value product(OpBuilder &b, Location loc, ArrayRef<Value> dims) {
  Value p = cIndex(b, loc, 1);
  for (Value d : dims)
    p = arith::MulIOp::create(b, loc, p, d);
  return p;
}

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

/// Dim groups of reshapes the shape analysis proved (see
/// ShapeConstraints::reshapeGroups), computed before the conversion starts.
using ReshapeGroups = llvm::DenseMap<Operation *, SmallVector<ReassociationIndices>>;

/// A reshape whose dim groups are proven becomes tensor.expand_shape or
/// tensor.collapse_shape (or both, for equal ranks): linalg fusion and
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
    if (proven == groups.end()) {
      // The new sizes may come from data: each must be non-negative and
      // their product must not wrap (a wrapped product could equal the
      // operand's count).
      Value outCount = emitCheckedElementCount(rewriter, loc, *outDims,
                                               /*elementBytes=*/1, opLabel(op));
      disc::emitAssertEqualSizes(rewriter, loc, outCount, product(rewriter, loc, inDims),
                  opLabel(op) + ": the new shape does not have the operand's "
                               "number of elements");
      // Row-major order: flatten, then unflatten to the new shape. Both
      // steps are views; tensor.reshape would lower to memref.reshape,
      // which upstream expand-strided-metadata cannot follow with an
      // expand_shape.
      if (operandType.getRank() > 0 && resultType.getRank() > 0) {
        Value flat = operand;
        if (operandType.getRank() != 1) {
          ReassociationIndices all;
          for (int64_t i = 0; i < operandType.getRank(); ++i)
            all.push_back(i);
          flat = tensor::CollapseShapeOp::create(rewriter, loc, operand,
                                                 ArrayRef<ReassociationIndices>{all});
        }
        Value result = flat;
        if (resultType.getRank() != 1) {
          ReassociationIndices all;
          for (int64_t i = 0; i < resultType.getRank(); ++i)
            all.push_back(i);
          SmallVector<ReassociationIndices> groups{all};
          result = tensor::ExpandShapeOp::create(
              rewriter, loc, resultType,
              castShape(rewriter, loc, flat, collapsedType(resultType, groups)),
              groups, mixedSizes(rewriter, resultType, *outDims));
        } else {
          result = castShape(rewriter, loc, result, resultType);
        }
        rewriter.replaceOp(op, result);
        return success();
      }
      Value shape = tensor::FromElementsOp::create(
          rewriter, loc,
          RankedTensorType::get({(int64_t)outDims->size()},
                                rewriter.getIndexType()),
          *outDims);
      rewriter.replaceOpWithNewOp<tensor::ReshapeOp>(op, op.getType(),
                                                     operand, shape);
      return success();
    }
    // Each group's product must match its dim (the analysis proved it for
    // the symbols; this checks the run-time sizes agree with them).
    ArrayRef<ReassociationIndices> reassociation = proven->second;
    bool expanding = resultType.getRank() >= operandType.getRank();
    ArrayRef<Value> narrow = expanding ? ArrayRef<Value>(inDims) : *outDims;
    ArrayRef<Value> wide = expanding ? *outDims : ArrayRef<Value>(inDims);
    for (auto [n, group] : llvm::enumerate(reassociation)) {
      SmallVector<Value> members;
      for (int64_t w : group)
        members.push_back(wide[w]);
      disc::emitAssertEqualSizes(rewriter, loc, product(rewriter, loc, members), narrow[n],
                  opLabel(op) + ": the new shape does not have the operand's "
                               "number of elements");
    }
    Value result;
    if (resultType.getRank() == operandType.getRank()) {
      result = tensor::CastOp::create(rewriter, loc, resultType, operand);
    } else if (expanding) {
      SmallVector<OpFoldResult> shape = mixedSizes(rewriter, resultType, *outDims);
      result = tensor::ExpandShapeOp::create(
          rewriter, loc, resultType,
          castShape(rewriter, loc, operand,
                    collapsedType(resultType, reassociation)),
          reassociation, shape);
    } else {
      Value collapsed = tensor::CollapseShapeOp::create(
          rewriter, loc, collapsedType(operandType, reassociation), operand,
          reassociation);
      result = castShape(rewriter, loc, collapsed, resultType);
    }
    rewriter.replaceOp(op, result);
    return success();
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
    Value result = emptyTensor(rewriter, loc, type, *outDims);
    Value offset = cIndex(rewriter, loc, 0);
    for (auto [idx, input] : llvm::enumerate(adaptor.getInputs())) {
      SmallVector<Value> dims = getDims(rewriter, loc, input);
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

//===----------------------------------------------------------------------===//
// Reduce
//===----------------------------------------------------------------------===//

Value reduceIdentity(OpBuilder &b, Location loc, ReduceKind kind, Type t,
                     bool isUnsigned) {
  if (auto ft = dyn_cast<FloatType>(t)) {
    const llvm::fltSemantics &sem = ft.getFloatSemantics();
    switch (kind) {
    case ReduceKind::Sum:
      return arith::ConstantOp::create(b, loc, b.getFloatAttr(t, 0.0));
    case ReduceKind::Prod:
      return arith::ConstantOp::create(b, loc, b.getFloatAttr(t, 1.0));
    case ReduceKind::Max:
      return arith::ConstantOp::create(
          b, loc, b.getFloatAttr(t, APFloat::getInf(sem, /*Negative=*/true)));
    case ReduceKind::Min:
      return arith::ConstantOp::create(
          b, loc, b.getFloatAttr(t, APFloat::getInf(sem, /*Negative=*/false)));
    default:
      break;
    }
    return {};
  }
  unsigned w = t.getIntOrFloatBitWidth();
  APInt v;
  switch (kind) {
  case ReduceKind::Sum:
  case ReduceKind::Or:
    v = APInt::getZero(w);
    break;
  case ReduceKind::Prod:
    v = APInt(w, 1);
    break;
  case ReduceKind::And:
    v = APInt::getAllOnes(w);
    break;
  case ReduceKind::Max:
    v = isUnsigned ? APInt::getZero(w) : APInt::getSignedMinValue(w);
    break;
  case ReduceKind::Min:
    v = isUnsigned ? APInt::getAllOnes(w) : APInt::getSignedMaxValue(w);
    break;
  }
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(t, v));
}

Value reduceCombine(OpBuilder &b, Location loc, ReduceKind kind, Value acc,
                    Value x, bool isUnsigned) {
  bool isFloat = isa<FloatType>(acc.getType());
  bool isPred = acc.getType().isInteger(1);
  switch (kind) {
  case ReduceKind::Sum:
    if (isFloat)
      return arith::AddFOp::create(b, loc, acc, x);
    if (isPred)
      return arith::OrIOp::create(b, loc, acc, x);
    return arith::AddIOp::create(b, loc, acc, x);
  case ReduceKind::Prod:
    if (isFloat)
      return arith::MulFOp::create(b, loc, acc, x);
    if (isPred)
      return arith::AndIOp::create(b, loc, acc, x);
    return arith::MulIOp::create(b, loc, acc, x);
  case ReduceKind::Max:
    if (isFloat)
      return arith::MaximumFOp::create(b, loc, acc, x);
    return isUnsigned ? arith::MaxUIOp::create(b, loc, acc, x).getResult()
                      : arith::MaxSIOp::create(b, loc, acc, x).getResult();
  case ReduceKind::Min:
    if (isFloat)
      return arith::MinimumFOp::create(b, loc, acc, x);
    return isUnsigned ? arith::MinUIOp::create(b, loc, acc, x).getResult()
                      : arith::MinSIOp::create(b, loc, acc, x).getResult();
  case ReduceKind::And:
    return arith::AndIOp::create(b, loc, acc, x);
  case ReduceKind::Or:
    return arith::OrIOp::create(b, loc, acc, x);
  }
  llvm_unreachable("bad reduce kind");
}

/// Whether an f32 sum over `dims` of a `type` operand adds more than
/// kShortSumExtent elements per output one after another (or a number
/// unknown until run time): a column sum (the innermost dim kept), or a sum
/// over the innermost dim and others too (a bias or norm-weight gradient
/// over batch and space, a whole-tensor sum), whose vector partial sums
/// each add a long run of the outer dims. A sum over the innermost dim
/// alone (softmax, layer norm) is not: its extent is a row, split over the
/// vector lanes.
constexpr int64_t kShortSumExtent = 64;
bool isLongSerialSum(RankedTensorType type, ArrayRef<int64_t> dims) {
  int64_t rank = type.getRank();
  if (dims.empty() || (dims.size() == 1 && dims[0] == rank - 1))
    return false;
  int64_t extent = 1;
  for (int64_t d : dims) {
    if (type.isDynamicDim(d))
      return true;
    extent *= type.getDimSize(d);
  }
  return extent > kShortSumExtent;
}

struct ReduceToLinalg : public OpConversionPattern<ReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto outDims = reifyResultDims(rewriter, op);
    if (failed(outDims))
      return failure();
    auto type = cast<RankedTensorType>(op.getType());
    Type originalElement = type.getElementType();
    bool isUnsigned = isUnsignedLike(originalElement);
    auto outType = signlessTensor(type);
    Value operand = adaptor.getOperand();
    auto inSignless = signlessTensor(operand.getType());
    operand = castTo(rewriter, loc, operand, inSignless);
    ReduceKind kind = op.getKind();
    // f16/bf16 sums and products accumulate in f32 (as PyTorch does) and
    // round once at the end; max/min are exact in any precision.
    Type elementType = outType.getElementType();
    bool widen = (elementType.isF16() || elementType.isBF16()) &&
                 (kind == ReduceKind::Sum || kind == ReduceKind::Prod);
    Type accElementType = widen ? rewriter.getF32Type() : elementType;
    // An f32 column sum (the innermost dim kept) adds each output's
    // elements one after another, and a sum over several dims adds long
    // runs per vector lane: the rounding error grows with the reduced
    // extent (32768 rows: 50x eager's, whose cascade sums keep it near
    // log n), and gradients that cancel magnify it (convtasnet's PReLU
    // weight gradients, sums over batch, channels and time: 3-20x eager's
    // error). These accumulate in f64 instead; row sums are split into
    // many partial sums along the row and stay f32.
    if (elementType.isF32() && kind == ReduceKind::Sum &&
        isLongSerialSum(cast<RankedTensorType>(inSignless),
                        op.getDimensions())) {
      widen = true;
      accElementType = rewriter.getF64Type();
    }
    auto accType =
        RankedTensorType::get(outType.getShape(), accElementType);
    Value identity = reduceIdentity(rewriter, loc, kind, accElementType,
                                    isUnsigned);
    if (!identity)
      return rewriter.notifyMatchFailure(op, "unsupported kind for type");
    Value init = emptyTensor(rewriter, loc, accType, *outDims);
    Value filled =
        linalg::FillOp::create(rewriter, loc, identity, init).getResult(0);
    auto reduce = linalg::ReduceOp::create(
        rewriter, loc, ValueRange{operand}, ValueRange{filled},
        op.getDimensions(), [&](OpBuilder &b, Location l, ValueRange args) {
          Value x = args[0];
          if (widen)
            x = arith::ExtFOp::create(b, l, accElementType, x);
          linalg::YieldOp::create(
              b, l, reduceCombine(b, l, kind, args[1], x, isUnsigned));
        });
    Value result = reduce.getResult(0);
    if (widen) {
      int64_t rank = outType.getRank();
      Value narrow = emptyTensor(rewriter, loc, outType, *outDims);
      result =
          linalg::GenericOp::create(
              rewriter, loc, TypeRange{outType}, ValueRange{result},
              ValueRange{narrow},
              SmallVector<AffineMap>(2, rewriter.getMultiDimIdentityMap(rank)),
              SmallVector<utils::IteratorType>(rank,
                                               utils::IteratorType::parallel),
              [&](OpBuilder &b, Location l, ValueRange args) {
                linalg::YieldOp::create(
                    b, l,
                    arith::TruncFOp::create(b, l, elementType, args[0])
                        .getResult());
              })
              .getResult(0);
    }
    result = castTo(rewriter, loc, result, type);
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Gather
//===----------------------------------------------------------------------===//

/// Where one element of a gather's index vector is computed, when the
/// start indices are a concatenate along the index vector dim of components
/// each reshaped to [batch..., 1] (aten.index's broadcast coordinates,
/// torch.gather's iotas): the component is read in place of the
/// concatenated tensor, and for a broadcast component its operand, so the
/// [batch..., k] coordinate tensor is never built. (Bilinear upsampling
/// indexes [C, 2H, 2W] with two small vectors; the coordinates would be
/// 2H x 2W x 2 int64, read again for every channel.)
struct IndexComponent {
  Value source;
  /// Per source dim: the batch dim that indexes it, or -1 (always 0: a
  /// broadcast's expanded unit dim).
  SmallVector<int64_t> batchDimOf;
  /// Per source dim: an i1 "expanded at run time" flag, or null.
  SmallVector<Value> expandedAtRunTime;
};

/// Each gather's coordinate components (ShapeConstraints::
/// coordinateComponents), found before the conversion starts.
using GatherComponents = llvm::DenseMap<Operation *, SmallVector<Value>>;

/// How `component` (one coordinate, batch-shaped) is read: from the
/// operand of the broadcast that builds it, if any, else from itself.
static IndexComponent readIndexComponent(ConversionPatternRewriter &rewriter,
                                         Location loc, Value component) {
  IndexComponent result;
  Value source = component;
  ArrayRef<int64_t> dims;
  SmallVector<int64_t> nonexpanding;
  if (auto b = component.getDefiningOp<BroadcastInDimOp>()) {
    source = b.getOperand();
    dims = b.getBroadcastDimensions();
  } else if (auto b = component.getDefiningOp<DynamicBroadcastInDimOp>()) {
    source = b.getOperand();
    dims = b.getBroadcastDimensions();
    if (auto known = b.getKnownNonexpandingDimensions())
      nonexpanding.assign(known->begin(), known->end());
  }
  FailureOr<Value> mapped = rewriter.getRemappedValue(source);
  result.source = succeeded(mapped) && *mapped ? *mapped : source;
  auto sourceType = cast<RankedTensorType>(source.getType());
  for (int64_t i = 0; i < sourceType.getRank(); ++i) {
    if (source == component) {
      result.batchDimOf.push_back(i);
      result.expandedAtRunTime.push_back(nullptr);
      continue;
    }
    int64_t d = dims[i];
    int64_t in = sourceType.getDimSize(i);
    if (in == 1) {
      result.batchDimOf.push_back(-1);
      result.expandedAtRunTime.push_back(nullptr);
      continue;
    }
    result.batchDimOf.push_back(d);
    // The broadcast's own lowering checks that a dim is 1 or the result's.
    if (!ShapedType::isDynamic(in) ||
        llvm::is_contained(nonexpanding, (int64_t)i)) {
      result.expandedAtRunTime.push_back(nullptr);
      continue;
    }
    Value size = tensor::DimOp::create(rewriter, loc, result.source, i);
    result.expandedAtRunTime.push_back(arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::eq, size, cIndex(rewriter, loc, 1)));
  }
  return result;
}

template <typename OpTy>
struct GatherToLinalg : public OpConversionPattern<OpTy> {
  GatherToLinalg(MLIRContext *ctx, const GatherComponents &components)
      : OpConversionPattern<OpTy>(ctx), coordinateComponents(components) {}
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto outDims = reifyResultDims(rewriter, op);
    if (failed(outDims))
      return failure();
    Value operand = adaptor.getOperand();
    Value indices = adaptor.getStartIndices();
    auto type = cast<RankedTensorType>(op.getType());
    auto outType = signlessTensor(type);
    auto inSignless = signlessTensor(operand.getType());
    operand = castTo(rewriter, loc, operand, inSignless);
    int64_t resultRank = type.getRank();
    int64_t operandRank = inSignless.getRank();
    int64_t indicesRank = cast<RankedTensorType>(indices.getType()).getRank();
    int64_t ivd = op.getIndexVectorDim();
    SmallVector<Value> sliceSizes;
    if constexpr (std::is_same_v<OpTy, GatherOp>) {
      for (int64_t s : op.getSliceSizes())
        sliceSizes.push_back(cIndex(rewriter, loc, s));
    } else {
      sliceSizes = getShapeElements(rewriter, loc, adaptor.getSliceSizes());
    }
    SmallVector<Value> operandDims = getDims(rewriter, loc, operand);
    // Largest valid start per operand dim: size - slice size (clamped).
    SmallVector<Value> maxStart;
    for (int64_t d = 0; d < operandRank; ++d)
      maxStart.push_back(arith::SubIOp::create(rewriter, loc, operandDims[d],
                                               sliceSizes[d]));
    // The index vector holds one start per start_index_map entry: a
    // shorter one (a dynamic index_vector_dim) would be read past its end.
    if (ivd < indicesRank)
      disc::emitAssertEqualSizes(rewriter, loc, getDims(rewriter, loc, indices)[ivd],
                  cIndex(rewriter, loc, op.getStartIndexMap().size()),
                  opLabel(op) + ": index_vector_dim " + Twine(ivd) +
                      " of the start indices must have " +
                      Twine(op.getStartIndexMap().size()) + " elements");
    // A slice must fit in the operand (0 <= slice size <= size), unless
    // the result is empty and nothing is read: a row gathered from an
    // operand with no rows would read outside it.
    Value resultEmpty = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::eq,
        product(rewriter, loc, *outDims), cIndex(rewriter, loc, 0));
    for (int64_t d = 0; d < operandRank; ++d) {
      Value fits = arith::AndIOp::create(
          rewriter, loc,
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge,
                                maxStart[d], cIndex(rewriter, loc, 0)),
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge,
                                sliceSizes[d], cIndex(rewriter, loc, 0)));
      assertTrue(rewriter, loc,
                 arith::OrIOp::create(rewriter, loc, fits, resultEmpty),
                 opLabel(op) + ": the slice of operand dim " + Twine(d) +
                     " is larger than the operand (or negative)");
    }
    SmallVector<int64_t> offsetDims(op.getOffsetDims());
    SmallVector<int64_t> collapsed(op.getCollapsedSliceDims());
    SmallVector<int64_t> startIndexMap(op.getStartIndexMap());
    SmallVector<std::optional<IndexComponent>> components(
        startIndexMap.size());
    auto found = coordinateComponents.find(op.getOperation());
    if (found != coordinateComponents.end() &&
        found->second.size() == startIndexMap.size())
      for (auto [k, component] : llvm::enumerate(found->second))
        components[k] = readIndexComponent(rewriter, loc, component);
    Value init = emptyTensor(rewriter, loc, outType, *outDims);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{outType}, ValueRange{}, ValueRange{init},
        SmallVector<AffineMap>{rewriter.getMultiDimIdentityMap(resultRank)},
        SmallVector<utils::IteratorType>(resultRank,
                                         utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> batchIdx, offsetIdx;
          for (int64_t i = 0; i < resultRank; ++i) {
            Value v = linalg::IndexOp::create(b, l, i);
            if (llvm::is_contained(offsetDims, i))
              offsetIdx.push_back(v);
            else
              batchIdx.push_back(v);
          }
          Value zero = cIndex(b, l, 0);
          SmallVector<Value> fullStart(operandRank, zero);
          for (auto [k, d] : llvm::enumerate(startIndexMap)) {
            Value s;
            if (const std::optional<IndexComponent> &c = components[k]) {
              SmallVector<Value> idx;
              for (auto [dim, flag] :
                   llvm::zip(c->batchDimOf, c->expandedAtRunTime)) {
                Value i = dim < 0 ? zero : batchIdx[dim];
                if (flag)
                  i = arith::SelectOp::create(b, l, flag, zero, i);
                idx.push_back(i);
              }
              s = tensor::ExtractOp::create(b, l, c->source, idx);
            } else {
              SmallVector<Value> idx;
              unsigned next = 0;
              for (int64_t j = 0; j < indicesRank; ++j)
                idx.push_back(j == ivd ? cIndex(b, l, k) : batchIdx[next++]);
              s = tensor::ExtractOp::create(b, l, indices, idx);
            }
            s = arith::IndexCastOp::create(b, l, b.getIndexType(), s);
            s = arith::MaxSIOp::create(b, l, s, zero);
            s = arith::MinSIOp::create(b, l, s, maxStart[d]);
            fullStart[d] = s;
          }
          SmallVector<Value> operandIdx;
          unsigned nextOffset = 0;
          for (int64_t d = 0; d < operandRank; ++d) {
            if (llvm::is_contained(collapsed, d)) {
              operandIdx.push_back(fullStart[d]);
              continue;
            }
            operandIdx.push_back(arith::AddIOp::create(
                b, l, fullStart[d], offsetIdx[nextOffset++]));
          }
          Value v = tensor::ExtractOp::create(b, l, operand, operandIdx);
          linalg::YieldOp::create(b, l, v);
        });
    Value result = generic.getResult(0);
    result = castTo(rewriter, loc, result, type);
    rewriter.replaceOp(op, result);
    return success();
  }

private:
  const GatherComponents &coordinateComponents;
};

//===----------------------------------------------------------------------===//
// Scatter: an scf.for nest over the update batch dims (sequential: colliding
// indices combine in order); for each, the window's start is read once and
// checked whole (StableHLO: an out-of-bounds window is skipped), then an
// scf.for nest over the window dims combines the window without per-element
// checks, the innermost loop running along the updates' last dim when it is
// a window dim (a row of PyTorch Geometric's aggregation: vectorizable).
//===----------------------------------------------------------------------===//

/// The update combined into `current` for a scatter of `kind`.
static Value scatterCombine(OpBuilder &b, Location loc, ScatterKind kind,
                            Value current, Value update, bool isUnsigned) {
  switch (kind) {
  case ScatterKind::Add:
    return reduceCombine(b, loc, ReduceKind::Sum, current, update, isUnsigned);
  case ScatterKind::Mul:
    return reduceCombine(b, loc, ReduceKind::Prod, current, update,
                         isUnsigned);
  case ScatterKind::Max:
    return reduceCombine(b, loc, ReduceKind::Max, current, update, isUnsigned);
  case ScatterKind::Min:
    return reduceCombine(b, loc, ReduceKind::Min, current, update, isUnsigned);
  default:
    return update;
  }
}

struct ScatterToLoops : public OpConversionPattern<ScatterOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScatterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value operand = adaptor.getOperand();
    Value indices = adaptor.getScatterIndices();
    Value updates = adaptor.getUpdates();
    auto type = cast<RankedTensorType>(op.getType());
    auto st = signlessTensor(type);
    bool isUnsigned = isUnsignedLike(type.getElementType());
    operand = castTo(rewriter, loc, operand, st);
    updates = castTo(rewriter, loc, updates, signlessTensor(updates.getType()));
    int64_t operandRank = type.getRank();
    int64_t indicesRank = cast<RankedTensorType>(indices.getType()).getRank();
    int64_t ivd = op.getIndexVectorDim();
    SmallVector<int64_t> windowDims(op.getUpdateWindowDims());
    SmallVector<int64_t> inserted(op.getInsertedWindowDims());
    SmallVector<int64_t> toOperand(op.getScatterDimsToOperandDims());
    ScatterKind kind = op.getKind();
    SmallVector<Value> updateDims = getDims(rewriter, loc, updates);
    SmallVector<Value> operandDims = getDims(rewriter, loc, operand);
    SmallVector<Value> batchUbs, windowUbs;
    for (auto [i, size] : llvm::enumerate(updateDims))
      (llvm::is_contained(windowDims, (int64_t)i) ? windowUbs : batchUbs)
          .push_back(size);
    // The loops run over the updates' batch dims and read the indices at
    // the same positions: the two must agree (StableHLO's constraint); the
    // index vector has one entry per scatter_dims_to_operand_dims.
    {
      SmallVector<Value> indexDims = getDims(rewriter, loc, indices);
      if (ivd < indicesRank)
        disc::emitAssertEqualSizes(rewriter, loc, indexDims[ivd],
                    cIndex(rewriter, loc, toOperand.size()),
                    opLabel(op) + ": index_vector_dim " + Twine(ivd) +
                        " of the scatter indices must have " +
                        Twine(toOperand.size()) + " elements");
      unsigned next = 0;
      for (int64_t j = 0; j < indicesRank && next < batchUbs.size(); ++j) {
        if (j == ivd)
          continue;
        disc::emitAssertEqualSizes(rewriter, loc, indexDims[j], batchUbs[next],
                    opLabel(op) + ": scatter_indices dim " + Twine(j) +
                        " differs from updates batch dim " + Twine(next));
        ++next;
      }
    }
    auto zeros = [&](size_t n) {
      return SmallVector<Value>(n, cIndex(rewriter, loc, 0));
    };
    auto ones = [&](size_t n) {
      return SmallVector<Value>(n, cIndex(rewriter, loc, 1));
    };
    scf::LoopNest nest = scf::buildLoopNest(
        rewriter, loc, zeros(batchUbs.size()), batchUbs, ones(batchUbs.size()),
        ValueRange{operand},
        [&](OpBuilder &b, Location l, ValueRange batchIvs,
            ValueRange iterArgs) -> scf::ValueVector {
          Value acc = iterArgs[0];
          Value zero = cIndex(b, l, 0);
          SmallVector<Value> start(operandRank, zero);
          for (auto [k, d] : llvm::enumerate(toOperand)) {
            SmallVector<Value> idx;
            unsigned next = 0;
            for (int64_t j = 0; j < indicesRank; ++j)
              idx.push_back(j == ivd ? cIndex(b, l, k) : batchIvs[next++]);
            Value s = tensor::ExtractOp::create(b, l, indices, idx);
            start[d] = arith::IndexCastOp::create(b, l, b.getIndexType(), s);
          }
          // The whole window in bounds: start >= 0, start + size <= dim.
          Value inBounds = arith::ConstantIntOp::create(b, l, 1, 1);
          unsigned nextWindow = 0;
          for (int64_t d = 0; d < operandRank; ++d) {
            Value size = llvm::is_contained(inserted, d)
                             ? cIndex(b, l, 1)
                             : windowUbs[nextWindow++];
            Value end = arith::AddIOp::create(b, l, start[d], size);
            Value ge = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge,
                                             start[d], zero);
            Value le = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sle,
                                             end, operandDims[d]);
            inBounds = arith::AndIOp::create(
                b, l, inBounds, arith::AndIOp::create(b, l, ge, le));
          }
          auto ifOp = scf::IfOp::create(
              b, l, inBounds,
              [&](OpBuilder &tb, Location tl) {
                scf::LoopNest window = scf::buildLoopNest(
                    tb, tl, zeros(windowUbs.size()), windowUbs,
                    ones(windowUbs.size()), ValueRange{acc},
                    [&](OpBuilder &wb, Location wl, ValueRange windowIvs,
                        ValueRange windowArgs) -> scf::ValueVector {
                      Value target = windowArgs[0];
                      SmallVector<Value> updateIdx;
                      unsigned nextBatch = 0, nextWin = 0;
                      for (int64_t i = 0; i < (int64_t)updateDims.size(); ++i)
                        updateIdx.push_back(llvm::is_contained(windowDims, i)
                                                ? windowIvs[nextWin++]
                                                : batchIvs[nextBatch++]);
                      SmallVector<Value> operandIdx;
                      unsigned nextOffset = 0;
                      for (int64_t d = 0; d < operandRank; ++d)
                        operandIdx.push_back(
                            llvm::is_contained(inserted, d)
                                ? start[d]
                                : arith::AddIOp::create(
                                      wb, wl, start[d],
                                      windowIvs[nextOffset++]));
                      Value v =
                          tensor::ExtractOp::create(wb, wl, updates, updateIdx);
                      if (kind != ScatterKind::Replace) {
                        Value cur = tensor::ExtractOp::create(wb, wl, target,
                                                              operandIdx);
                        v = scatterCombine(wb, wl, kind, cur, v, isUnsigned);
                      }
                      return {tensor::InsertOp::create(wb, wl, v, target,
                                                       operandIdx)};
                    });
                scf::YieldOp::create(tb, tl,
                                     window.results.empty()
                                         ? ValueRange{acc}
                                         : ValueRange{window.results[0]});
              },
              [&](OpBuilder &eb, Location el) {
                scf::YieldOp::create(eb, el, acc);
              });
          return {ifOp.getResult(0)};
        });
    Value result = nest.results.empty() ? operand : nest.results[0];
    result = castTo(rewriter, loc, result, type);
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Scan: a loop nest over the other dims, sequential along the scan dim.
//===----------------------------------------------------------------------===//

struct ScanToLoops : public OpConversionPattern<ScanOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScanOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    auto st = signlessTensor(type);
    bool isUnsigned = isUnsignedLike(type.getElementType());
    Value operand = adaptor.getOperand();
    operand = castTo(rewriter, loc, operand, st);
    Type elementType = st.getElementType();
    ReduceKind kind = op.getKind();
    bool widen = (elementType.isF16() || elementType.isBF16()) &&
                 (kind == ReduceKind::Sum || kind == ReduceKind::Prod);
    Type accType = widen ? rewriter.getF32Type() : elementType;
    Value identity = reduceIdentity(rewriter, loc, kind, accType, isUnsigned);
    if (!identity)
      return rewriter.notifyMatchFailure(op, "unsupported kind for type");
    int64_t dim = op.getDimension();
    SmallVector<Value> dims = getDims(rewriter, loc, operand);
    Value init = emptyTensor(rewriter, loc, st, dims);
    SmallVector<Value> lbs, ubs, steps;
    for (int64_t d = 0; d < st.getRank(); ++d) {
      if (d == dim)
        continue;
      lbs.push_back(cIndex(rewriter, loc, 0));
      ubs.push_back(dims[d]);
      steps.push_back(cIndex(rewriter, loc, 1));
    }
    auto body = [&](OpBuilder &b, Location l, ValueRange outer,
                    ValueRange iterArgs) -> scf::ValueVector {
      Value zero = cIndex(b, l, 0), one = cIndex(b, l, 1);
      auto inner = scf::ForOp::create(
          b, l, zero, dims[dim], one, ValueRange{identity, iterArgs[0]},
          [&](OpBuilder &ib, Location il, Value k, ValueRange carried) {
            SmallVector<Value> idx;
            unsigned next = 0;
            for (int64_t d = 0; d < st.getRank(); ++d)
              idx.push_back(d == dim ? k : outer[next++]);
            Value x = tensor::ExtractOp::create(ib, il, operand, idx);
            if (widen)
              x = arith::ExtFOp::create(ib, il, accType, x);
            Value acc =
                reduceCombine(ib, il, kind, carried[0], x, isUnsigned);
            Value stored =
                widen ? arith::TruncFOp::create(ib, il, elementType, acc)
                            .getResult()
                      : acc;
            Value updated =
                tensor::InsertOp::create(ib, il, stored, carried[1], idx);
            scf::YieldOp::create(ib, il, ValueRange{acc, updated});
          });
      return {inner.getResult(1)};
    };
    Value result;
    if (lbs.empty()) {
      result = body(rewriter, loc, ValueRange{}, ValueRange{init})[0];
    } else {
      scf::LoopNest nest = scf::buildLoopNest(rewriter, loc, lbs, ubs, steps,
                                              ValueRange{init}, body);
      result = nest.results[0];
    }
    result = castTo(rewriter, loc, result, type);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct LegalizeToLinalgPass
    : public disc::impl::DiscLegalizeToLinalgBase<LegalizeToLinalgPass> {
  /// Ops whose result sizes come from a shape operand at run time may
  /// still declare a static dim in their type (`dynamic_iota %shape :
  /// tensor<7x256xi64>`); the lowering allocates from the type and loops
  /// or copies from the operand. A mismatch is a run-time error naming the
  /// op, not a heap overflow (found by the mutation fuzzer).
  void assertStaticResultDims() {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<DynamicIotaOp, DynamicBroadcastInDimOp, DynamicReshapeOp,
              DynamicPadOp, RealDynamicSliceOp, DynamicGatherOp>(op))
        ops.push_back(op);
      // Static attributes, but a dynamic operand: the result's static dim
      // holds only for some operand sizes (a pad of a `?` operand typed
      // tensor<9xf32>; found by the mutation fuzzer, seed 20783).
      if (isa<PadOp, ConcatenateOp>(op) &&
          llvm::any_of(op->getOperandTypes(), [](Type t) {
            auto shaped = dyn_cast<ShapedType>(t);
            return shaped && !shaped.hasStaticShape();
          }))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      auto type = cast<RankedTensorType>(op->getResult(0).getType());
      if (llvm::none_of(type.getShape(), [](int64_t d) {
            return !ShapedType::isDynamic(d);
          }))
        continue;
      OpBuilder b(op);
      auto dims = reifyResultDims(b, op);
      if (failed(dims))
        continue;
      for (auto [i, size] : llvm::enumerate(type.getShape()))
        if (!ShapedType::isDynamic(size))
          disc::emitAssertEqualSizes(b, op->getLoc(), (*dims)[i], cIndex(b, op->getLoc(), size),
                      op->getName().getStringRef() + ": result dim " +
                          Twine(i) + " is " + Twine(size) +
                          " in its type, but its operands give another size");
    }
  }

  void runOnOperation() override {
    assertStaticResultDims();
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect,
                           arith::ArithDialect, math::MathDialect,
                           scf::SCFDialect, cf::ControlFlowDialect,
                           func::FuncDialect, bufferization::BufferizationDialect,
                           memref::MemRefDialect, LLVM::LLVMDialect>();
    target.addLegalOp<UnrealizedConversionCastOp>();
    target.addIllegalDialect<DiscDialect>();
    // Library ops become runtime calls in disc-lower-library-calls, which
    // runs right before bufferization (see Pipeline.cpp for why).
    target.addLegalOp<DotGeneralOp, ConvolutionOp, AttentionOp, SortOp>();
    RewritePatternSet patterns(ctx);
    patterns.add<ElementwiseToLinalg, EmptyResultToEmptyTensor>(ctx);
    patterns.add<ConstantToArith, IotaToLinalg<IotaOp>,
                 IotaToLinalg<DynamicIotaOp>,
                 BroadcastToLinalg<BroadcastInDimOp>,
                 BroadcastToLinalg<DynamicBroadcastInDimOp>,
                 TransposeToLinalg, ReverseToLinalg, SliceToTensor, RealDynamicSliceToTensor,
                 ConcatenateToTensor, PadToTensor<PadOp>,
                 PadToTensor<DynamicPadOp>, ReduceToLinalg, ScatterToLoops,
                 ScanToLoops>(ctx);
    // Reshape dim groups come from the shape analysis of the unconverted
    // functions.
    ReshapeGroups reshapeGroups;
    GatherComponents gatherComponents;
    getOperation()->walk([&](func::FuncOp func) {
      ShapeConstraints shapes(func);
      func.walk([&](Operation *op) {
        auto recordComponents = [&](auto gather) {
          if (auto components = shapes.coordinateComponents(
                  gather.getStartIndices(), gather.getIndexVectorDim()))
            gatherComponents[op] = std::move(*components);
        };
        if (auto gather = dyn_cast<GatherOp>(op))
          return recordComponents(gather);
        if (auto gather = dyn_cast<DynamicGatherOp>(op))
          return recordComponents(gather);
        if (!isa<ReshapeOp, DynamicReshapeOp>(op))
          return;
        if (auto groups =
                shapes.reshapeGroups(op->getOperand(0), op->getResult(0))) {
          SmallVector<ReassociationIndices> reassociation;
          for (auto &group : *groups)
            reassociation.emplace_back(group.begin(), group.end());
          reshapeGroups[op] = std::move(reassociation);
        }
      });
    });
    patterns.add<ReshapeToTensor<ReshapeOp>, ReshapeToTensor<DynamicReshapeOp>>(
        ctx, reshapeGroups);
    patterns.add<GatherToLinalg<GatherOp>, GatherToLinalg<DynamicGatherOp>>(
        ctx, gatherComponents);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
