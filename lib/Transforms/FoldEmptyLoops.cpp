//===- FoldEmptyLoops.cpp - linalg ops with a zero-trip loop --------------===//
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace disc {
#define GEN_PASS_DEF_DISCFOLDEMPTYLOOPS
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

struct FoldEmptyLoopsPass
    : public disc::impl::DiscFoldEmptyLoopsBase<FoldEmptyLoopsPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> empty;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!op.hasPureTensorSemantics())
        return;
      if (llvm::is_contained(op.getStaticLoopRanges(), 0))
        empty.push_back(op);
    });
    for (linalg::LinalgOp op : empty)
      for (auto [result, init] :
           llvm::zip(op->getResults(), op.getDpsInits()))
        result.replaceAllUsesWith(init);
  }
};

} // namespace
