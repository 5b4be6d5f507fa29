//===- SizeChecks.cpp - run-time checks of sizes computed from data -------===//
#include "disc/Conversion/SizeChecks.h"

#include "disc/Dialect/Disc/DiscDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

Value disc::emitCheckedElementCount(OpBuilder &b, Location loc,
                                    ArrayRef<Value> sizes,
                                    int64_t elementBytes,
                                    const Twine &message) {
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value zero = cst(0);
  Value ok;
  auto require = [&](Value cond) {
    ok = ok ? arith::AndIOp::create(b, loc, ok, cond).getResult() : cond;
  };
  // count * elementBytes is tracked as `bytes`; each step checks that the
  // multiplication did not wrap (bytes / size == previous bytes, for
  // non-negative values) and that the result stays non-negative.
  Value count = cst(1);
  Value bytes = cst(std::max<int64_t>(elementBytes, 1));
  for (Value size : sizes) {
    std::optional<int64_t> constant = getConstantIntValue(size);
    if (!constant)
      require(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, size,
                                    zero));
    count = arith::MulIOp::create(b, loc, count, size);
    if (constant && *constant >= 0 && *constant <= 1)
      continue;
    Value next = arith::MulIOp::create(b, loc, bytes, size);
    Value safeSize = arith::SelectOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, size, zero),
        cst(1), size);
    Value noWrap = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::DivUIOp::create(b, loc, next, safeSize), bytes);
    Value zeroSize =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, size, zero);
    require(arith::OrIOp::create(b, loc, zeroSize, noWrap));
    require(
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, next, zero));
    bytes = next;
  }
  if (ok)
    cf::AssertOp::create(b, loc, ok,
                         (message + ": a size computed at run time is "
                                    "negative, or the element count "
                                    "overflows a 64-bit byte size")
                             .str());
  return count;
}

bool disc::sizesKnownEqual(Value x, Value y) {
  if (x == y)
    return true;
  auto cx = getConstantIntValue(x), cy = getConstantIntValue(y);
  if (cx && cy)
    return *cx == *cy;
  // Two tensor.dim of one tensor's same dim (before CSE merges them).
  auto dx = x.getDefiningOp<tensor::DimOp>();
  auto dy = y.getDefiningOp<tensor::DimOp>();
  if (!dx || !dy || dx.getSource() != dy.getSource())
    return false;
  std::optional<int64_t> ix = dx.getConstantIndex();
  std::optional<int64_t> iy = dy.getConstantIndex();
  return ix && iy && *ix == *iy;
}

void disc::emitAssertEqualSizes(OpBuilder &b, Location loc, Value x, Value y,
                                const Twine &message) {
  if (sizesKnownEqual(x, y))
    return;
  Value eq = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y);
  cf::AssertOp::create(b, loc, eq, message.str());
}

void disc::emitConvolutionWindowChecks(OpBuilder &b, Operation *op) {
  auto conv = cast<ConvolutionOp>(op);
  Location loc = conv.getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  for (auto [s, span] :
       llvm::enumerate(conv.buildWindowSpans(b, conv->getOperands()))) {
    Value fits = b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::sge,
                                               span, zero);
    if (auto c = getConstantIntValue(fits); c && *c)
      continue;
    cf::AssertOp::create(
        b, loc, fits,
        ("disc.convolution: along spatial dim " + Twine(s) +
         " the kernel (dilated) is larger than the padded input")
            .str());
  }
}

SmallVector<Value> disc::dynamicSizes(ShapedType type, ArrayRef<Value> dims) {
  SmallVector<Value> out;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (type.isDynamicDim(i))
      out.push_back(dims[i]);
  return out;
}
