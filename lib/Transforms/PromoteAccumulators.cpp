//===- PromoteAccumulators.cpp - reduction accumulators in registers ------===//
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace disc {
#define GEN_PASS_DEF_DISCPROMOTEACCUMULATORS
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

/// The buffer a memref value views: follows view-like ops (reshape,
/// subview, expand/collapse_shape, casts) to their source.
Value rootBuffer(Value memref) {
  while (Operation *def = memref.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      memref = view.getViewSource();
      continue;
    }
    if (auto reshape = dyn_cast<memref::ReshapeOp>(def)) {
      memref = reshape.getSource();
      continue;
    }
    break;
  }
  return memref;
}

/// A buffer this function allocated (heap or stack).
bool isLocalAllocation(Value buffer) {
  return buffer.getDefiningOp<memref::AllocOp>() ||
         buffer.getDefiningOp<memref::AllocaOp>();
}

/// Whether `op` (anywhere in the loop) may touch the buffer `root`, other
/// than through `load`/`store`. Unknown effects count as touching.
bool mayTouch(Operation *op, Value root, Operation *load, Operation *store) {
  if (op == load || op == store)
    return false;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return !op->hasTrait<OpTrait::HasRecursiveMemoryEffects>();
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  for (auto &effect : instances) {
    Value value = effect.getValue();
    if (!value)
      return true; // an effect on unknown memory
    if (!isa<BaseMemRefType>(value.getType()))
      continue;
    Value other = rootBuffer(value);
    // Two different allocations never alias; an allocation never aliases
    // a function argument.
    bool distinct = other != root && isLocalAllocation(other);
    distinct |= other != root && isa<BlockArgument>(other);
    if (!distinct)
      return true;
  }
  return false;
}

/// A load/store pair of one accumulator element in the body of `loop`.
struct Accumulator {
  memref::LoadOp load;
  memref::StoreOp store;
};

std::optional<Accumulator> findAccumulator(scf::ForOp loop) {
  Block *body = loop.getBody();
  for (auto store : body->getOps<memref::StoreOp>()) {
    Value root = rootBuffer(store.getMemRef());
    if (!isLocalAllocation(root))
      continue;
    if (llvm::any_of(store.getIndices(), [&](Value index) {
          return !loop.isDefinedOutsideOfLoop(index);
        }))
      continue;
    if (!loop.isDefinedOutsideOfLoop(store.getMemRef()))
      continue;
    // The one load of the same element, before the store, in the body.
    memref::LoadOp load;
    for (auto candidate : body->getOps<memref::LoadOp>())
      if (candidate.getMemRef() == store.getMemRef() &&
          candidate.getIndices() == store.getIndices() &&
          candidate->isBeforeInBlock(store)) {
        if (load)
          return std::nullopt;
        load = candidate;
      }
    if (!load)
      continue;
    WalkResult touched = body->walk([&](Operation *op) {
      return mayTouch(op, root, load, store) ? WalkResult::interrupt()
                                             : WalkResult::advance();
    });
    if (touched.wasInterrupted())
      continue;
    return Accumulator{load, store};
  }
  return std::nullopt;
}

/// Rewrites `loop` to carry the accumulator: load before, store after.
void promote(scf::ForOp loop, Accumulator acc) {
  OpBuilder b(loop);
  Location loc = acc.load.getLoc();
  Value init = memref::LoadOp::create(b, loc, acc.load.getMemRef(),
                                      acc.load.getIndices());
  Value stored = acc.store.getValueToStore();
  // The store is erased below; keep what the final store needs.
  Value buffer = acc.store.getMemRef();
  SmallVector<Value> indices(acc.store.getIndices());
  auto newLoop = scf::ForOp::create(
      b, loop.getLoc(), loop.getLowerBound(), loop.getUpperBound(),
      loop.getStep(), ValueRange{init},
      [](OpBuilder &, Location, Value, ValueRange) {});
  Block *newBody = newLoop.getBody();
  // Move the old body's ops (all but its terminator) into the new loop.
  Block *oldBody = loop.getBody();
  newBody->getOperations().splice(newBody->begin(), oldBody->getOperations(),
                                  oldBody->begin(),
                                  std::prev(oldBody->end()));
  loop.getInductionVar().replaceAllUsesWith(newLoop.getInductionVar());
  Value carried = newLoop.getRegionIterArgs()[0];
  acc.load.getResult().replaceAllUsesWith(carried);
  acc.load.erase();
  acc.store.erase();
  OpBuilder end = OpBuilder::atBlockEnd(newBody);
  scf::YieldOp::create(end, loop.getLoc(), stored);
  // Reassociable sums/products: LLVM vectorises them with partial results.
  if (Operation *combine = stored.getDefiningOp())
    if (isa<arith::AddFOp, arith::MulFOp>(combine) &&
        llvm::is_contained(combine->getOperands(), carried))
      if (auto fmf = dyn_cast<arith::ArithFastMathInterface>(combine))
        combine->setAttr(
            fmf.getFastMathAttrName(),
            arith::FastMathFlagsAttr::get(
                combine->getContext(),
                fmf.getFastMathFlagsAttr().getValue() |
                    arith::FastMathFlags::reassoc));
  OpBuilder after(newLoop->getContext());
  after.setInsertionPointAfter(newLoop);
  memref::StoreOp::create(after, loc, newLoop.getResult(0), buffer, indices);
  loop.erase();
}

struct PromoteAccumulatorsPass
    : public disc::impl::DiscPromoteAccumulatorsBase<PromoteAccumulatorsPass> {
  void runOnOperation() override {
    // Post-order: inner loops first, so the outer loop then sees the
    // inner loop's hoisted load/store pair.
    SmallVector<scf::ForOp> loops;
    getOperation()->walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      if (loop.getNumResults() != 0)
        continue;
      if (auto acc = findAccumulator(loop))
        promote(loop, *acc);
    }
  }
};

} // namespace
