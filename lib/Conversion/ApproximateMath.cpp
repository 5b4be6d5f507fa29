//===- ApproximateMath.cpp - inline polynomial approximations for math ---===//
#include "disc/Conversion/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>

namespace disc {
#define GEN_PASS_DEF_DISCAPPROXIMATEMATH
#include "disc/Conversion/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

/// Math ops whose upstream f32 approximation matches libm to a few ulp
/// (checked against PyTorch by python/tests/test_math_accuracy.py).
/// Not sin/cos: upstream's range reduction loses ~50 ulp for |x| > 50
/// (positional encodings reach that), so they stay libm calls.
constexpr const char *kAccurateOps[] = {"exp",  "expm1", "log", "log1p",
                                        "log2", "tanh",  "erf"};

/// Upstream's log/log2 approximation treats subnormal inputs as if their
/// exponent were the minimum one (log(1e-40) comes out -87.3, not -92.1).
/// Scale subnormals into the normal range first and correct the result:
///   log(x) = log(x * 2^23) - 23 ln 2   for 0 < x < FLT_MIN.
template <typename LogOp>
struct ScaleSubnormalLogInput : public OpRewritePattern<LogOp> {
  ScaleSubnormalLogInput(MLIRContext *context, double correction)
      : OpRewritePattern<LogOp>(context, /*benefit=*/2),
        correction(correction) {}

  LogicalResult matchAndRewrite(LogOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32() ||
        op->hasAttr("disc.subnormal_scaled"))
      return failure();
    Location loc = op.getLoc();
    auto constant = [&](double value) -> Value {
      Attribute attr = rewriter.getF32FloatAttr(value);
      if (auto shaped = dyn_cast<ShapedType>(type))
        attr = SplatElementsAttr::get(shaped, attr);
      return arith::ConstantOp::create(rewriter, loc, type,
                                       cast<TypedAttr>(attr));
    };
    Value x = op.getOperand();
    Value subnormal =
        arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OLT, x,
                              constant(1.17549435e-38));
    Value scaled = arith::MulFOp::create(rewriter, loc, x, constant(8388608.0));
    Value input = arith::SelectOp::create(rewriter, loc, subnormal, scaled, x);
    auto log = LogOp::create(rewriter, loc, input);
    log->setAttr("disc.subnormal_scaled", rewriter.getUnitAttr());
    Value corrected =
        arith::SubFOp::create(rewriter, loc, log, constant(correction));
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, subnormal, corrected,
                                                 log);
    return success();
  }

  double correction;
};

struct ApproximateMathPass
    : public disc::impl::DiscApproximateMathBase<ApproximateMathPass> {
  using DiscApproximateMathBase::DiscApproximateMathBase;

  void runOnOperation() override {
    llvm::StringSet<> enabled;
    if (ops.empty())
      for (const char *name : kAccurateOps)
        enabled.insert(name);
    else
      for (const std::string &name : ops)
        enabled.insert(name);
    MLIRContext *context = &getContext();
    {
      RewritePatternSet prepare(context);
      if (enabled.contains("log"))
        prepare.add<ScaleSubnormalLogInput<math::LogOp>>(context,
                                                         23.0 * M_LN2);
      if (enabled.contains("log2"))
        prepare.add<ScaleSubnormalLogInput<math::Log2Op>>(context, 23.0);
      if (failed(applyPatternsGreedily(getOperation(), std::move(prepare))))
        return signalPassFailure();
      getOperation()->walk([](Operation *op) {
        op->removeAttr("disc.subnormal_scaled");
      });
    }
    RewritePatternSet patterns(context);
    populateMathPolynomialApproximationPatterns(
        patterns, [&](StringRef name) {
          // Upstream passes the full op name ("math.erf").
          return enabled.contains(name.drop_front(strlen("math.")));
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
