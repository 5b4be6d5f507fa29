//===- StitchFusion.cpp - row reductions and their stages in one loop -----===//
//
// See DiscStitchFusion in Passes.td. The fusion itself is upstream
// tile-and-fuse; this pass decides what to fuse (roots, the tile shape and
// which producers) so that every fused op costs one row per iteration.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/Passes.h"

#include "FusionCost.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/RegionUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/raw_ostream.h"

namespace disc {
#define GEN_PASS_DEF_DISCSTITCHFUSION
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

/// A reduction over its innermost loop only, every other loop parallel.
bool isRowReduction(linalg::LinalgOp op) {
  unsigned numLoops = op.getNumLoops();
  if (numLoops < 2 || op.getNumReductionLoops() != 1)
    return false;
  return op.getIteratorTypesArray().back() == utils::IteratorType::reduction;
}

bool isAllParallel(linalg::LinalgOp op) {
  return op.getNumLoops() == op.getNumParallelLoops();
}

/// Ops the row loop may contain: elementwise-like ops and row reductions
/// on tensors (no library ops: those are not linalg at this point).
bool isFusibleKind(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && linalgOp.hasPureTensorSemantics() &&
         (isAllParallel(linalgOp) || isRowReduction(linalgOp));
}

/// The most ops one row loop takes (a layer norm is ~6): tile-and-fuse
/// clones a producer per use, so the group must stay small.
constexpr unsigned kMaxGroupOps = 24;

/// The linalg producers of `root` in its block that could join its row
/// loop, found through operands (inputs and inits): only producers whose
/// every user is already in the group, so nothing outside needs the full
/// tensor (no op is computed both in and outside the loop) and the group
/// never grows into the rest of the graph.
/// True when a use reads `producer` through a broadcast over an outer loop
/// of its user: tiled one row per iteration, the producer's slice would be
/// recomputed for every row along that loop. Allowed for cheap producers,
/// and for a broadcast along the innermost loop only (a row's statistics
/// read by every element of the row).
bool recomputedPerRow(Operation *producer) {
  if (!disc::isExpensiveToRecompute(producer))
    return false;
  for (OpOperand &use : producer->getUses()) {
    auto user = dyn_cast<linalg::LinalgOp>(use.getOwner());
    if (!user)
      continue;
    unsigned innermost = user.getNumLoops() - 1;
    for (unsigned loop : disc::broadcastLoops(use))
      if (loop != innermost)
        return true;
  }
  return false;
}

llvm::SetVector<Operation *> producerCone(Operation *root) {
  llvm::SetVector<Operation *> cone;
  auto inGroup = [&](Operation *op) {
    return op == root || cone.contains(op);
  };
  for (bool changed = true; changed && cone.size() <= kMaxGroupOps;) {
    changed = false;
    SmallVector<Operation *> members{root};
    members.append(cone.begin(), cone.end());
    for (Operation *op : members)
      for (Value operand : op->getOperands()) {
        Operation *producer = operand.getDefiningOp();
        if (!producer || inGroup(producer) ||
            producer->getBlock() != root->getBlock() ||
            !isFusibleKind(producer) ||
            !llvm::all_of(producer->getUsers(), inGroup) ||
            recomputedPerRow(producer))
          continue;
        cone.insert(producer);
        changed = true;
      }
  }
  return cone;
}

/// True when every size but the innermost is a static 1 (`allOnes`: the
/// innermost too).
bool isRowSlice(tensor::ExtractSliceOp slice, bool allOnes) {
  SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
  for (auto [i, size] : llvm::enumerate(sizes)) {
    if (!allOnes && i + 1 == sizes.size())
      break;
    if (!isConstantIntValue(size, 1))
      return false;
  }
  return true;
}

std::string describe(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getName();
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    os << (isRowReduction(linalgOp) ? " (row reduction)" : "");
  os << " at " << op->getLoc();
  return text;
}

/// For an expensive stage `op` (softmax's exp(x - max)) used by reductions
/// and by one elementwise user that reads it element for element: `op`
/// writes into the user's destination (the output row) and the user
/// overwrites `op`'s result in place (its init becomes `op`'s result). The
/// stage is computed once per element, the reductions read it back from
/// cache, and the user rescales it, instead of computing it once per user.
/// Returns false (nothing changed) when there is no such user, another
/// user writes `op`'s result, or the user's destination is not available
/// before `op`.
bool computeOnceInPlace(linalg::LinalgOp op, DominanceInfo &dominance) {
  if (!disc::isExpensiveToRecompute(op) || op.getNumDpsInits() != 1 ||
      op.payloadUsesValueFromOperand(op.getDpsInitOperand(0)))
    return false;
  Value result = op->getResult(0);
  linalg::GenericOp overwriter;
  for (OpOperand &use : result.getUses()) {
    auto user = dyn_cast<linalg::LinalgOp>(use.getOwner());
    if (!user || user.isDpsInit(&use))
      return false; // some user writes it already
    auto generic = dyn_cast<linalg::GenericOp>(use.getOwner());
    if (overwriter || !generic || !isAllParallel(generic) ||
        generic->getNumResults() != 1 ||
        generic->getResult(0).getType() != result.getType())
      continue;
    OpOperand *init = generic.getDpsInitOperand(0);
    Operation *destination = init->get().getDefiningOp();
    if (generic.payloadUsesValueFromOperand(init) || !destination ||
        !isa<tensor::EmptyOp, tensor::ExtractSliceOp>(destination) ||
        !llvm::all_of(destination->getOperands(),
                      [&](Value v) {
                        return dominance.properlyDominates(v, op);
                      }) ||
        generic.getMatchingIndexingMap(&use) !=
            generic.getMatchingIndexingMap(init) ||
        op.getMatchingIndexingMap(op.getDpsInitOperand(0)) !=
            generic.getMatchingIndexingMap(init))
      continue;
    overwriter = generic;
  }
  if (!overwriter)
    return false;
  OpOperand *init = overwriter.getDpsInitOperand(0);
  Operation *destination = init->get().getDefiningOp();
  if (!dominance.properlyDominates(destination, op))
    destination->moveBefore(op);
  op.getDpsInitOperand(0)->set(init->get());
  // The user reads `op`'s result through its init, not as an input:
  // `ins(..., %e) outs(%dest)` becomes `ins(...) outs(%e)` (a payload that
  // reads its init keeps it; with an unread init, elementwise fusion would
  // give it a fresh tensor.empty again).
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  Block &body = overwriter.getRegion().front();
  Value outArg = body.getArgument(overwriter.getNumDpsInputs());
  SmallVector<unsigned> dropped;
  for (OpOperand *input : overwriter.getDpsInputOperands()) {
    if (input->get() == result) {
      dropped.push_back(input->getOperandNumber());
      continue;
    }
    inputs.push_back(input->get());
    maps.push_back(overwriter.getMatchingIndexingMap(input));
  }
  maps.push_back(overwriter.getMatchingIndexingMap(init));
  for (unsigned index : llvm::reverse(dropped)) {
    body.getArgument(index).replaceAllUsesWith(outArg);
    body.eraseArgument(index);
  }
  OpBuilder b(overwriter);
  auto replacement = linalg::GenericOp::create(
      b, overwriter.getLoc(), overwriter->getResultTypes(), inputs,
      ValueRange{result}, maps, overwriter.getIteratorTypesArray());
  replacement.getRegion().takeBody(overwriter.getRegion());
  overwriter->replaceAllUsesWith(replacement->getResults());
  overwriter->erase();
  return true;
}

/// Inside the row loop, an elementwise op with several users is cloned
/// once per user, so that elementwise fusion merges each copy into its
/// user and no row-sized intermediate is written: recomputing an
/// elementwise stage costs less than a round trip through memory. An
/// expensive stage is computed once instead where computeOnceInPlace can.
void duplicateSharedProducers(Operation *loop, DominanceInfo &dominance) {
  SmallVector<linalg::LinalgOp> ops;
  loop->walk([&](linalg::LinalgOp op) {
    if (op.hasPureTensorSemantics() && isAllParallel(op) &&
        !isa<linalg::FillOp>(op.getOperation()) && op->getNumResults() == 1)
      ops.push_back(op);
  });
  // Consumers first: a cloned consumer adds a use to its producers.
  for (linalg::LinalgOp op : llvm::reverse(ops)) {
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : op->getResult(0).getUses())
      uses.push_back(&use);
    if (uses.size() < 2 || !llvm::all_of(uses, [](OpOperand *use) {
          return isa<linalg::LinalgOp>(use->getOwner());
        }))
      continue;
    if (computeOnceInPlace(op, dominance))
      continue;
    OpBuilder b(op);
    for (OpOperand *use : llvm::drop_begin(uses)) {
      b.setInsertionPoint(use->getOwner());
      use->set(b.clone(*op.getOperation())->getResult(0));
    }
  }
}

struct StitchFusionPass
    : public disc::impl::DiscStitchFusionBase<StitchFusionPass> {
  using DiscStitchFusionBase::DiscStitchFusionBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // One pass instance runs on every function of a module in turn (and on
    // every module a reused pass manager sees): the loops of the previous
    // run are not this function's (found by the libFuzzer target: a
    // use-after-free when a second run read the first one's erased loops).
    rowLoops.clear();
    // The function's own blocks: ops nested in loops or conditionals are
    // left alone.
    for (Block &block : func.getBody())
      if (failed(fuseBlock(&block)))
        return signalPassFailure();
    if (rowLoops.empty())
      return;
    // Tile-and-fuse fused a producer once per slice it feeds (softmax's max
    // and exp twice: once for the sum, once for the output), each copy with
    // its own shape queries outside the loop. CSE merges the identical
    // copies; then each shared stage is recomputed per user or computed
    // once (duplicateSharedProducers).
    llvm::DenseSet<Operation *> erased;
    ErasedTracker tracker(erased);
    IRRewriter rewriter(&getContext(), &tracker);
    DominanceInfo dominance(func);
    eliminateCommonSubExpressions(rewriter, dominance, func);
    for (Operation *loop : rowLoops)
      if (!erased.contains(loop))
        duplicateSharedProducers(loop, dominance);
  }

  /// Records the ops a rewriter erases.
  struct ErasedTracker : public RewriterBase::Listener {
    explicit ErasedTracker(llvm::DenseSet<Operation *> &erased)
        : erased(erased) {}
    void notifyOperationErased(Operation *op) override { erased.insert(op); }
    llvm::DenseSet<Operation *> &erased;
  };

  /// The row loops made so far in this run.
  SmallVector<Operation *> rowLoops;

  LogicalResult fuseBlock(Block *block) {
    // Last op first: a root's producers are fused into it before they could
    // become roots themselves. The walk goes backwards from the op before
    // each new loop, so it never visits an op a fusion erased.
    llvm::DenseSet<Operation *> erased; // by the fusions, seen by a listener
    ErasedTracker tracker(erased);
    IRRewriter rewriter(&getContext(), &tracker);
    Operation *cursor = block->empty() ? nullptr : &block->back();
    while (cursor) {
      Operation *root = cursor;
      cursor = root->getPrevNode();
      if (!isFusibleKind(root) || root->use_empty())
        continue;
      auto linalgRoot = cast<linalg::LinalgOp>(root);
      if (linalgRoot.getNumLoops() < 2)
        continue;
      llvm::SetVector<Operation *> cone = producerCone(root);
      bool hasRowReduction = llvm::any_of(cone, [](Operation *op) {
        return isRowReduction(cast<linalg::LinalgOp>(op));
      });
      if (!hasRowReduction)
        continue;
      if (cone.size() > kMaxGroupOps) {
        if (log)
          llvm::errs() << "[disc] fusion: not stitched (more than "
                       << kMaxGroupOps << " producers): " << describe(root)
                       << "\n";
        continue;
      }
      FailureOr<Operation *> loop = fuse(rewriter, linalgRoot, cone, erased);
      if (failed(loop))
        return failure();
      rowLoops.push_back(*loop);
      cursor = (*loop)->getPrevNode();
    }
    return success();
  }

  /// Returns the row loop.
  FailureOr<Operation *> fuse(IRRewriter &rewriter, linalg::LinalgOp root,
                     const llvm::SetVector<Operation *> &cone,
                     llvm::DenseSet<Operation *> &erased) {
    // One row per iteration: tile size 1 on every loop but the innermost.
    unsigned numLoops = root.getNumLoops();
    SmallVector<OpFoldResult> tileSizes(numLoops - 1,
                                        rewriter.getIndexAttr(1));
    tileSizes.push_back(rewriter.getIndexAttr(0));
    scf::SCFTilingOptions tiling;
    tiling.setTileSizes(tileSizes);
    tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);

    llvm::DenseSet<Operation *> group(cone.begin(), cone.end());
    group.insert(root);
    SmallVector<std::string> fusedLog;
    SmallVector<Operation *> fusedOps;
    scf::SCFTileAndFuseOptions options;
    options.setTilingOptions(tiling);
    options.setFusionControlFn(
        [&](tensor::ExtractSliceOp slice, OpResult producer,
            bool isDestination)
            -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
          Operation *op = producer.getOwner();
          if (!isFusibleKind(op) || !group.contains(op))
            return std::nullopt;
          bool reduction = isRowReduction(cast<linalg::LinalgOp>(op));
          if (!isRowSlice(slice, /*allOnes=*/reduction))
            return std::nullopt;
          // Every user of a group member is in the group (producerCone),
          // so no fused producer is needed outside: nothing is yielded.
          if (log && !isa<linalg::FillOp>(op) &&
              llvm::find(fusedOps, op) == fusedOps.end()) {
            fusedOps.push_back(op);
            fusedLog.push_back(describe(op));
          }
          scf::SCFTileAndFuseOptions::ControlFnResult result;
          return result;
        });

    std::string rootText = describe(root);
    FailureOr<scf::SCFTileAndFuseResult> fused =
        scf::tileConsumerAndFuseProducersUsingSCF(
            rewriter, cast<TilingInterface>(root.getOperation()), options);
    if (failed(fused))
      return root.emitOpError("stitch fusion: tiling the row loop failed");
    // The loop's results replace the root's (the only replacements: no
    // producer is yielded).
    Operation *loop = fused->loops.front().getOperation();
    for (auto [original, replacement] : fused->replacements)
      rewriter.replaceAllUsesWith(original, replacement);
    if (!root->use_empty())
      return root.emitOpError("stitch fusion: the root is still used");
    rewriter.eraseOp(root);
    // Slices that fusion replaced are left in the loop unused.
    SmallVector<Operation *> inLoop;
    loop->walk([&](Operation *op) {
      if (op != loop)
        inLoop.push_back(op);
    });
    for (Operation *op : llvm::reverse(inLoop))
      if (isOpTriviallyDead(op))
        rewriter.eraseOp(op);
    // Shape queries of the fused producers are answered from their inits,
    // so the producers whose every use was fused are dead now.
    {
      RewritePatternSet patterns(&getContext());
      memref::populateResolveRankedShapedTypeResultDimsPatterns(patterns);
      SmallVector<Operation *> dims;
      for (Operation *op : cone)
        for (Operation *user : op->getUsers())
          if (isa<tensor::DimOp>(user))
            dims.push_back(user);
      // Only the dims: the producers are erased below (and must not be
      // erased twice).
      GreedyRewriteConfig config;
      config.setStrictness(GreedyRewriteStrictness::ExistingOps);
      config.setListener(
          static_cast<RewriterBase::Listener *>(rewriter.getListener()));
      (void)applyOpPatternsGreedily(dims, std::move(patterns), config);
    }
    for (bool changed = true; changed;) {
      changed = false;
      // Unused shape queries (tiling leaves some) do not keep a producer.
      for (Operation *op : cone) {
        if (erased.contains(op))
          continue;
        for (Operation *user : llvm::make_early_inc_range(op->getUsers()))
          if (isa<tensor::DimOp>(user) && user->use_empty())
            rewriter.eraseOp(user);
      }
      for (Operation *op : cone)
        if (!erased.contains(op) && op->use_empty()) {
          rewriter.eraseOp(op);
          changed = true;
        }
    }
    if (log) {
      llvm::errs() << "[disc] fusion: stitch kernel (one loop over rows) "
                      "rooted at "
                   << rootText << ", with " << fusedLog.size()
                   << " producers:";
      for (const std::string &line : fusedLog)
        llvm::errs() << "\n[disc] fusion:   + " << line;
      llvm::errs() << "\n";
    }
    return loop;
  }
};

} // namespace
