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

/// A float max/min accumulator (`maximumf`/`minimumf` of the carried value
/// and one other operand, used by nothing else) that may carry NaNs apart.
Operation *nanPropagatingMinMax(Value stored, Value carried) {
  Operation *combine = stored.getDefiningOp();
  if (!isa_and_nonnull<arith::MaximumFOp, arith::MinimumFOp>(combine))
    return nullptr;
  if (!llvm::is_contained(combine->getOperands(), carried) ||
      combine->getOperand(0) == combine->getOperand(1) ||
      !carried.hasOneUse() || !stored.hasOneUse())
    return nullptr;
  return combine;
}

/// `maximumf`/`minimumf` propagate NaN and order -0 below +0; x86 has no
/// instruction for that, so LLVM expands each into six dependent ones, on
/// the reduction's critical path (a softmax's row max took 3x eager's
/// time). A reduction instead carries a plain max (`maxnumf` with `nnan
/// nsz`: vmaxps) and, apart, whether it has seen a NaN; after the loop a
/// NaN seen gives NaN. The same result (PyTorch leaves the sign of a zero
/// max unspecified), and both carried values vectorise.
void carryNanApart(scf::ForOp loop, Operation *combine) {
  Location loc = combine->getLoc();
  Value carried = loop.getRegionIterArgs()[0];
  Value other = combine->getOperand(0) == carried ? combine->getOperand(1)
                                                  : combine->getOperand(0);
  OpBuilder before(loop);
  Value init = loop.getInitArgs()[0];
  Value initNan = arith::CmpFOp::create(before, loc, arith::CmpFPredicate::UNO,
                                        init, init);
  auto newLoop = scf::ForOp::create(
      before, loop.getLoc(), loop.getLowerBound(), loop.getUpperBound(),
      loop.getStep(), ValueRange{init, initNan},
      [](OpBuilder &, Location, Value, ValueRange) {});
  Block *newBody = newLoop.getBody();
  Block *oldBody = loop.getBody();
  auto yield = cast<scf::YieldOp>(oldBody->getTerminator());
  newBody->getOperations().splice(newBody->begin(), oldBody->getOperations(),
                                  oldBody->begin(), Block::iterator(yield));
  loop.getInductionVar().replaceAllUsesWith(newLoop.getInductionVar());
  carried.replaceAllUsesWith(newLoop.getRegionIterArgs()[0]);
  OpBuilder b(combine);
  auto flags = arith::FastMathFlagsAttr::get(
      b.getContext(), arith::FastMathFlags::nnan | arith::FastMathFlags::nsz);
  Value acc = newLoop.getRegionIterArgs()[0];
  Value minMax =
      isa<arith::MaximumFOp>(combine)
          ? arith::MaxNumFOp::create(b, loc, acc, other, flags).getResult()
          : arith::MinNumFOp::create(b, loc, acc, other, flags).getResult();
  Value isNan =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, other, other);
  Value seen =
      arith::OrIOp::create(b, loc, newLoop.getRegionIterArgs()[1], isNan);
  OpBuilder end = OpBuilder::atBlockEnd(newBody);
  scf::YieldOp::create(end, yield.getLoc(), ValueRange{minMax, seen});
  OpBuilder after(newLoop);
  after.setInsertionPointAfter(newLoop);
  Type type = minMax.getType();
  Value nan = arith::ConstantOp::create(
      after, loc, type,
      after.getFloatAttr(type, APFloat::getQNaN(
                                   cast<FloatType>(type).getFloatSemantics())));
  Value result = arith::SelectOp::create(after, loc, newLoop.getResult(1), nan,
                                         newLoop.getResult(0));
  loop.getResult(0).replaceAllUsesWith(result);
  loop.erase(); // with the old yield, the combine's last user
  combine->erase();
}

/// Rewrites `loop` to carry the accumulator: load before, store after.
void promote(scf::ForOp loop, Accumulator acc, bool nanApart) {
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
  Type element = stored.getType();
  if (Operation *minMax = nanPropagatingMinMax(stored, carried))
    if (nanApart && (element.isF32() || element.isF64()))
      carryNanApart(newLoop, minMax);
}

struct PromoteAccumulatorsPass
    : public disc::impl::DiscPromoteAccumulatorsBase<PromoteAccumulatorsPass> {
  using DiscPromoteAccumulatorsBase::DiscPromoteAccumulatorsBase;
  void runOnOperation() override {
    // Post-order: inner loops first, so the outer loop then sees the
    // inner loop's hoisted load/store pair.
    SmallVector<scf::ForOp> loops;
    getOperation()->walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      if (loop.getNumResults() != 0)
        continue;
      if (auto acc = findAccumulator(loop))
        promote(loop, *acc, carryNanApart);
    }
  }
};

} // namespace
