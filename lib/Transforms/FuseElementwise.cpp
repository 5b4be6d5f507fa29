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

/// Fuses a producer with several uses into a consumer that iterates over
/// exactly its elements, when every other use of the producer follows the
/// consumer in its block: the fused op yields the producer's results as
/// well, and they replace the producer everywhere (upstream's pattern keeps
/// the producer for its other uses, computing it twice). See
/// DiscFuseElementwise's `multi-result`.
struct FuseMultiUseProducer : OpRewritePattern<linalg::GenericOp> {
  FuseMultiUseProducer(MLIRContext *context, bool log)
      : OpRewritePattern(context, /*benefit=*/2), log(log) {}

  /// Whether every use of the producer is `operand` or follows the
  /// consumer. The consumer must read the producer through `operand` only:
  /// the fused op would otherwise read its own result (a second input, or
  /// an init).
  static bool usesFollow(linalg::GenericOp producer, OpOperand *operand) {
    Operation *consumer = operand->getOwner();
    Block *block = consumer->getBlock();
    if (producer->getBlock() != block)
      return false;
    for (OpResult result : producer->getResults())
      for (OpOperand &use : result.getUses()) {
        if (&use == operand)
          continue;
        Operation *user = use.getOwner();
        Operation *inBlock = block->findAncestorOpInBlock(*user);
        if (!inBlock || inBlock == consumer ||
            !consumer->isBeforeInBlock(inBlock))
          return false;
      }
    return true;
  }

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    if (consumer.getNumParallelLoops() != consumer.getNumLoops() ||
        !consumer.hasPureTensorSemantics())
      return failure();
    for (OpOperand *operand : consumer.getDpsInputOperands()) {
      auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
      // A single-use producer is upstream's pattern's.
      if (!producer || producer->hasOneUse() ||
          !linalg::areElementwiseOpsFusable(operand) ||
          !consumer.getMatchingIndexingMap(operand).isPermutation() ||
          !usesFollow(producer, operand))
        continue;
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, operand);
      if (failed(fused))
        continue;
      if (log)
        llvm::errs() << "[disc] fusion: " << producer->getName() << " at "
                     << producer->getLoc()
                     << " fused into its consumer at " << consumer->getLoc()
                     << " (multi-result: its other uses read the fused "
                        "op's result)\n";
      SmallVector<Value> consumerResults;
      for (Value result : consumer->getResults())
        consumerResults.push_back(fused->replacements.lookup(result));
      rewriter.replaceOp(consumer, consumerResults);
      for (Value result : producer->getResults())
        if (Value replacement = fused->replacements.lookup(result))
          rewriter.replaceAllUsesWith(result, replacement);
      // A result the fused op does not yield had the consumer as its only
      // user: nothing reads the producer any more.
      rewriter.eraseOp(producer);
      return success();
    }
    return failure();
  }

  bool log;
};

/// A result nothing uses whose init the payload reads (a multi-result
/// fusion's producer result whose other users were fused too: `tril(v)`
/// computed over `v`'s buffer) is dropped, its init read as an input.
/// Upstream's dead-result removal keeps such a result, and bufferization
/// then copies the init to give the fused op a buffer to write over: in a
/// stitch kernel, a copy of a row and a row temporary per row.
struct ReadInitOfDeadResultAsInput : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    // All-parallel, the init read through a permutation: each element of
    // the result is written once, so the payload's out argument is the
    // init's element (in a reduction, or along a broadcast, it is the
    // value written before, which an input would not carry).
    if (!op.hasPureTensorSemantics() || op->getNumResults() < 2 ||
        op.getNumParallelLoops() != op.getNumLoops())
      return failure();
    auto dead = llvm::find_if(op->getResults(), [&](OpResult result) {
      OpOperand *init = op.getDpsInitOperand(result.getResultNumber());
      return result.use_empty() && op.payloadUsesValueFromOperand(init) &&
             op.getMatchingIndexingMap(init).isPermutation();
    });
    if (dead == op->getResults().end())
      return failure();
    unsigned index = (*dead).getResultNumber();
    OpOperand *init = op.getDpsInitOperand(index);
    unsigned numInputs = op.getNumDpsInputs();

    SmallVector<Value> inputs = op.getDpsInputs();
    inputs.push_back(init->get());
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    AffineMap initMap = maps[numInputs + index];
    maps.erase(maps.begin() + numInputs + index);
    maps.insert(maps.begin() + numInputs, initMap);
    SmallVector<Value> outputs;
    SmallVector<Type> resultTypes;
    for (OpOperand &other : op.getDpsInitsMutable())
      if (&other != init) {
        outputs.push_back(other.get());
        resultTypes.push_back(other.get().getType());
      }
    auto fused = linalg::GenericOp::create(
        rewriter, op.getLoc(), resultTypes, inputs, outputs, maps,
        op.getIteratorTypesArray());
    fused->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    rewriter.inlineRegionBefore(op.getRegion(), fused.getRegion(),
                                fused.getRegion().begin());
    Block &body = fused.getRegion().front();
    BlockArgument oldArg = body.getArgument(numInputs + index);
    BlockArgument newArg =
        body.insertArgument(numInputs, oldArg.getType(), oldArg.getLoc());
    rewriter.replaceAllUsesWith(oldArg, newArg);
    body.eraseArgument(numInputs + 1 + index);
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    rewriter.modifyOpInPlace(yield, [&] { yield->eraseOperand(index); });

    unsigned next = 0;
    for (OpResult result : op->getResults())
      if (result.getResultNumber() != index)
        rewriter.replaceAllUsesWith(result, fused->getResult(next++));
    rewriter.eraseOp(op);
    return success();
  }
};

/// Whether fusing through `fusedOperand` would make the fused op write one
/// element of the producer's result several times, each write reading the
/// one before: the producer's payload reads its init (stitch fusion makes
/// `log(sum) + max` write over the max's row buffer) and the consumer reads
/// the producer through a broadcast. Upstream's fusion keeps such a
/// producer result as a result of the fused op, indexed by the consumer's
/// map, so every iteration along the broadcast dims would add to the value
/// the previous one wrote instead of to the init.
bool rewritesItsInitAlongBroadcast(OpOperand *fusedOperand) {
  auto producer = fusedOperand->get().getDefiningOp<linalg::GenericOp>();
  auto consumer = dyn_cast<linalg::GenericOp>(fusedOperand->getOwner());
  if (!producer || !consumer || disc::broadcastLoops(*fusedOperand).empty())
    return false;
  return llvm::any_of(producer.getDpsInitsMutable(), [&](OpOperand &init) {
    return producer.payloadUsesValueFromOperand(&init);
  });
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
    bool recompute = recomputeBroadcasts;
    linalg::ControlFusionFn noExpensiveRecompute =
        [singleUse, logRefusals, recompute](OpOperand *fusedOperand) {
          if (!singleUse(fusedOperand))
            return false;
          if (rewritesItsInitAlongBroadcast(fusedOperand)) {
            if (logRefusals)
              llvm::errs() << "[disc] fusion: not fused ("
                           << fusedOperand->get().getDefiningOp()->getLoc()
                           << " reads its init, which "
                           << fusedOperand->getOwner()->getName() << " at "
                           << fusedOperand->getOwner()->getLoc()
                           << " would rewrite once per broadcast element)\n";
            return false;
          }
          Operation *producer = fusedOperand->get().getDefiningOp();
          if (recompute || disc::broadcastLoops(*fusedOperand).empty() ||
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
    if (multiResult)
      patterns.add<FuseMultiUseProducer>(context, log);
    patterns.add<ReadInitOfDeadResultAsInput>(context);
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
