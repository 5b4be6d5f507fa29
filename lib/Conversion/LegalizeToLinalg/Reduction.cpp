//===- Reduction.cpp - disc reduce and scan to linalg/scf ----------------===//
//
// Reductions become linalg.generic with reduction iterators (a long serial
// sum accumulates in pieces); a scan is a loop nest, sequential along the
// scan dim.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

using namespace mlir;
using namespace disc;
using namespace disc::legalize;

namespace disc::legalize {

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

namespace {

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

} // namespace

void populateReductionPatterns(RewritePatternSet &patterns) {
  patterns.add<ReduceToLinalg, ScanToLoops>(patterns.getContext());
}

} // namespace disc::legalize
