//===- FuseElementwise.cpp - loop and input fusion with a recompute rule --===//
//
// See DiscFuseElementwise in Passes.td: upstream elementwise fusion, with a
// control function that keeps expensive producers out of broadcasting
// consumers (FusionCost.h).
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/Passes.h"

#include "FusionCost.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/raw_ostream.h"

namespace disc {
#define GEN_PASS_DEF_DISCFUSEELEMENTWISE
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

/// Gives every fusable consumer of a cheap multi-use producer (a broadcast
/// zero shared by all the ReLUs of one shape after CSE) its own copy:
/// elementwise fusion only fuses a producer into its single user, and
/// otherwise the producer would be written to memory once and read back by
/// every consumer.
void duplicateCheapProducers(Operation *root, bool log) {
  SmallVector<linalg::GenericOp> producers;
  root->walk([&](linalg::GenericOp op) {
    if (!op->use_empty() && !op->hasOneUse() && disc::isCheapToDuplicate(op))
      producers.push_back(op);
  });
  for (linalg::GenericOp producer : producers) {
    SmallVector<OpOperand *> fusable;
    for (OpOperand &use : producer->getResult(0).getUses())
      if (isa<linalg::GenericOp>(use.getOwner()) &&
          linalg::areElementwiseOpsFusable(&use))
        fusable.push_back(&use);
    // When every use fuses, the last one keeps the original.
    if (fusable.size() == llvm::range_size(producer->getResult(0).getUses()))
      fusable.pop_back();
    for (OpOperand *use : fusable) {
      OpBuilder builder(use->getOwner());
      use->set(builder.clone(*producer)->getResult(0));
    }
    if (log && !fusable.empty())
      llvm::errs() << "[disc] fusion: duplicated " << producer->getName()
                   << " at " << producer->getLoc() << " into "
                   << fusable.size() << " more consumers (cheap to recompute)\n";
  }
}

struct FuseElementwisePass
    : disc::impl::DiscFuseElementwiseBase<FuseElementwisePass> {
  using DiscFuseElementwiseBase::DiscFuseElementwiseBase;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    // Upstream's rule: the producer's only use is this one.
    linalg::ControlFusionFn singleUse = [](OpOperand *fusedOperand) {
      Operation *producer = fusedOperand->get().getDefiningOp();
      return producer && producer->hasOneUse();
    };
    bool logRefusals = log;
    linalg::ControlFusionFn noExpensiveRecompute =
        [singleUse, logRefusals](OpOperand *fusedOperand) {
          if (!singleUse(fusedOperand))
            return false;
          Operation *producer = fusedOperand->get().getDefiningOp();
          if (disc::broadcastLoops(*fusedOperand).empty() ||
              !disc::isExpensiveToRecompute(producer))
            return true;
          if (logRefusals)
            llvm::errs() << "[disc] fusion: not fused (would recompute "
                         << producer->getName() << " at " << producer->getLoc()
                         << " per broadcast element of "
                         << fusedOperand->getOwner()->getName() << " at "
                         << fusedOperand->getOwner()->getLoc() << ")\n";
          return false;
        };

    duplicateCheapProducers(getOperation(), log);
    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns,
                                                 noExpensiveRecompute);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, singleUse);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, singleUse);
    // Top-down, as upstream, for compile time. As upstream, not reaching a
    // fixed point within the driver's iteration limit is not an error: the
    // IR is valid after every rewrite, only possibly less fused.
    (void)applyPatternsGreedily(getOperation(), std::move(patterns),
                                GreedyRewriteConfig().setUseTopDownTraversal());
  }
};

} // namespace
