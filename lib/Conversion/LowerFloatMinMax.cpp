//===- LowerFloatMinMax.cpp - arith float max/min -> LLVM intrinsics ------===//
#include "disc/Conversion/Passes.h"

#include "mlir/Conversion/ArithCommon/AttrToLLVMConverter.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace disc {
#define GEN_PASS_DEF_DISCLOWERFLOATMINMAX
#include "disc/Conversion/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

bool isF32OrF64(Type type) {
  Type element = getElementTypeOrSelf(type);
  return element.isF32() || element.isF64();
}

template <typename ArithOp, typename LlvmOp>
struct LowerToIntrinsic : public OpRewritePattern<ArithOp> {
  using OpRewritePattern<ArithOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(ArithOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!isF32OrF64(type) || isa<TensorType>(type))
      return failure();
    // Fast-math flags carry over: a reduction's max with its NaNs counted
    // apart (disc-promote-accumulators) is `nnan nsz`, a plain vmaxps.
    rewriter.replaceOpWithNewOp<LlvmOp>(
        op, type, op.getLhs(), op.getRhs(),
        convertArithFastMathAttrToLLVM(op.getFastmathAttr()));
    return success();
  }
};

struct LowerFloatMinMaxPass
    : public disc::impl::DiscLowerFloatMinMaxBase<LowerFloatMinMaxPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<LowerToIntrinsic<arith::MaximumFOp, LLVM::MaximumOp>,
                 LowerToIntrinsic<arith::MinimumFOp, LLVM::MinimumOp>,
                 LowerToIntrinsic<arith::MaxNumFOp, LLVM::MaxNumOp>,
                 LowerToIntrinsic<arith::MinNumFOp, LLVM::MinNumOp>>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
