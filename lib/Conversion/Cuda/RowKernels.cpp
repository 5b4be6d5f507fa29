//===- RowKernels.cpp - a row per block or warp for row reductions --------===//
//
// See RowKernels.h and DiscMapLoopsToGpu in Passes.td.
//
//===----------------------------------------------------------------------===//
#include "RowKernels.h"

#include "GpuLoopUtils.h"
#include "VectorGrids.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace disc::cuda {

bool isRowCache(Value value) {
  auto alloc = value.getDefiningOp<memref::AllocOp>();
  return alloc && alloc->hasAttr(kRowCacheAttr);
}

namespace {

/// The op combining iteration argument `i` of `loop` with the iteration's
/// value, if that is all the argument is used for and the op is a
/// supported combiner.
Operation *combinerOf(scf::ForOp loop, unsigned i) {
  BlockArgument acc = loop.getRegionIterArg(i);
  Value yielded = loop.getYieldedValues()[i];
  Operation *combine = yielded.getDefiningOp();
  if (!combine || combine->getBlock() != loop.getBody() ||
      combine->getNumOperands() != 2 || combine->getNumResults() != 1 ||
      !acc.hasOneUse() || !yielded.hasOneUse() ||
      (combine->getOperand(0) != acc && combine->getOperand(1) != acc) ||
      !reductionIdentity(combine))
    return nullptr;
  return combine;
}

/// Whether `op` writes a stack buffer: on a GPU each thread has its own,
/// so a row written by all threads of a block would be split among them.
bool writesStackBuffer(Operation *op) {
  WalkResult result = op->walk([](Operation *nested) {
    Value target;
    if (auto store = dyn_cast<memref::StoreOp>(nested))
      target = store.getMemRef();
    else if (auto rmw = dyn_cast<memref::AtomicRMWOp>(nested))
      target = rmw.getMemref();
    else if (auto copy = dyn_cast<memref::CopyOp>(nested))
      target = copy.getTarget();
    else
      return WalkResult::advance();
    if (rootBuffer(target).getDefiningOp<memref::AllocaOp>())
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

Value materializeOnHost(OpBuilder &b, Value value, Operation *loop, int depth);

/// Extent `index` of `memref` (a value of the loop body: a view of a row)
/// as host code, or null when it depends on the row.
Value dimOnHost(OpBuilder &b, Location loc, Value memref, int64_t index,
                Operation *loop, int depth) {
  auto type = cast<MemRefType>(memref.getType());
  if (!type.isDynamicDim(index))
    return arith::ConstantIndexOp::create(b, loc, type.getDimSize(index));
  if (definedOutside(memref, loop))
    return memref::DimOp::create(b, loc, memref, index);
  if (depth > 16)
    return nullptr;
  auto fromSize = [&](OpFoldResult size) -> Value {
    if (auto attr = dyn_cast<Attribute>(size))
      return arith::ConstantIndexOp::create(b, loc,
                                            cast<IntegerAttr>(attr).getInt());
    return materializeOnHost(b, cast<Value>(size), loop, depth + 1);
  };
  if (auto subview = memref.getDefiningOp<memref::SubViewOp>()) {
    llvm::SmallBitVector dropped = subview.getDroppedDims();
    int64_t seen = -1;
    for (unsigned j = 0; j < dropped.size(); ++j) {
      if (dropped.test(j))
        continue;
      if (++seen == index)
        return fromSize(subview.getMixedSizes()[j]);
    }
    return nullptr;
  }
  if (auto collapse = memref.getDefiningOp<memref::CollapseShapeOp>()) {
    Value product = arith::ConstantIndexOp::create(b, loc, 1);
    // getReassociationIndices() returns a temporary: a range-for over one
    // of its elements would read freed memory (C++17 does not extend the
    // temporary's life to the loop).
    SmallVector<ReassociationIndices> groups =
        collapse.getReassociationIndices();
    for (int64_t j : groups[index]) {
      Value extent = dimOnHost(b, loc, collapse.getSrc(), j, loop, depth + 1);
      if (!extent)
        return nullptr;
      // Folded: a unit dim's 1 leaves the other extent itself, which
      // then compares equal with another phase's length of the row.
      product = b.createOrFold<arith::MulIOp>(loc, product, extent);
    }
    return product;
  }
  if (auto expand = memref.getDefiningOp<memref::ExpandShapeOp>())
    return fromSize(expand.getMixedOutputShape()[index]);
  if (auto cast = memref.getDefiningOp<memref::CastOp>())
    return dimOnHost(b, loc, cast.getSource(), index, loop, depth + 1);
  // A row's slice of loop temporaries (disc-hoist-loop-temporaries): its
  // sizes are operands, one per dynamic dim.
  if (auto view = memref.getDefiningOp<memref::ViewOp>()) {
    unsigned dynamicBefore = 0;
    for (int64_t j = 0; j < index; ++j)
      dynamicBefore += type.isDynamicDim(j);
    return materializeOnHost(b, view.getSizes()[dynamicBefore], loop,
                             depth + 1);
  }
  return nullptr;
}

/// `value` (an index computed in the loop body) recomputed by host code,
/// or null when it depends on the row or on memory.
Value materializeOnHost(OpBuilder &b, Value value, Operation *loop,
                        int depth) {
  if (definedOutside(value, loop))
    return value;
  Operation *def = value.getDefiningOp();
  if (!def || depth > 16)
    return nullptr;
  if (auto dim = dyn_cast<memref::DimOp>(def)) {
    std::optional<int64_t> index = getConstantIntValue(dim.getIndex());
    if (!index)
      return nullptr;
    return dimOnHost(b, def->getLoc(), dim.getSource(), *index, loop, depth);
  }
  if (def->getNumRegions() != 0 || !isMemoryEffectFree(def) ||
      def->getNumResults() != 1 ||
      def->getDialect()->getNamespace() != "arith")
    return nullptr;
  IRMapping mapping;
  for (Value operand : def->getOperands()) {
    Value host = materializeOnHost(b, operand, loop, depth + 1);
    if (!host)
      return nullptr;
    mapping.map(operand, host);
  }
  return b.clone(*def, mapping)->getResult(0);
}

/// Bounds of a phase: one (lb, ub, step) per dim.
SmallVector<std::array<Value, 3>> phaseBounds(Operation *phase) {
  SmallVector<std::array<Value, 3>> bounds;
  if (auto loop = dyn_cast<scf::ForOp>(phase)) {
    bounds.push_back({loop.getLowerBound(), loop.getUpperBound(),
                      loop.getStep()});
    return bounds;
  }
  auto loop = cast<scf::ParallelOp>(phase);
  for (auto [lb, ub, step] : llvm::zip(loop.getLowerBound(),
                                       loop.getUpperBound(), loop.getStep()))
    bounds.push_back({lb, ub, step});
  return bounds;
}

/// Unrolls a thread's strided loop over its part of a row
/// (`for i = start to ub step stride`, an iteration per `stride` elements)
/// by `factor`: the main loop runs iterations i, i + stride, ...,
/// i + (factor - 1) * stride per trip, the remainder loop what is left, in
/// the original order (a reduction combines in the same sequence). The
/// iterations are independent (a stage's are parallel, a reduction phase
/// writes no memory), so when every store of the body follows its loads,
/// the copies' stores are placed after all their loads: the factor loads
/// are then in flight at once, where the rolled loop waits for each one
/// (a block-per-row loop's dynamic step keeps LLVM from unrolling it).
void unrollThreadLoop(OpBuilder &b, scf::ForOp loop, unsigned factor) {
  if (factor <= 1)
    return;
  Location loc = loop.getLoc();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop);
  Value start = loop.getLowerBound(), ub = loop.getUpperBound(),
        stride = loop.getStep();
  auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  // Trips, clamped at 0 (threads past the row's end start beyond ub).
  Value trips = arith::MaxSIOp::create(
      b, loc, c(0),
      arith::CeilDivSIOp::create(
          b, loc, arith::SubIOp::create(b, loc, ub, start), stride));
  Value factorValue = c(factor);
  Value mainTrips = arith::SubIOp::create(
      b, loc, trips, arith::RemSIOp::create(b, loc, trips, factorValue));
  Value mainEnd = arith::AddIOp::create(
      b, loc, start, arith::MulIOp::create(b, loc, mainTrips, stride));
  Value mainStep = arith::MulIOp::create(b, loc, stride, factorValue);
  auto main = scf::ForOp::create(b, loc, start, mainEnd, mainStep,
                                 loop.getInitArgs());
  Block *body = loop.getBody();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  // Stores last: only when no op reads memory after the body's first write.
  bool storesLast = true;
  bool written = false;
  for (Operation &op : body->without_terminator()) {
    if (written && !isMemoryEffectFree(&op) && !isa<memref::StoreOp>(op))
      storesLast = false;
    if (isa<memref::StoreOp>(op))
      written = true;
    else if (op.getNumRegions() != 0 || (!isMemoryEffectFree(&op) &&
                                         !isa<memref::LoadOp>(op)))
      storesLast = false;
  }
  {
    OpBuilder::InsertionGuard inner(b);
    // Without results the builder gave the body its yield already.
    bool hasYield = main.getBody()->mightHaveTerminator();
    if (hasYield)
      b.setInsertionPoint(main.getBody()->getTerminator());
    else
      b.setInsertionPointToStart(main.getBody());
    SmallVector<Value> carried(main.getRegionIterArgs());
    SmallVector<std::pair<Operation *, IRMapping>> stores;
    for (unsigned k = 0; k < factor; ++k) {
      IRMapping mapping;
      Value iv = main.getInductionVar();
      if (k)
        iv = arith::AddIOp::create(
            b, loc, iv,
            arith::MulIOp::create(b, loc, stride, c(k)));
      mapping.map(loop.getInductionVar(), iv);
      mapping.map(loop.getRegionIterArgs(), carried);
      for (Operation &op : body->without_terminator()) {
        if (storesLast && isa<memref::StoreOp>(op)) {
          stores.push_back({&op, mapping});
          continue;
        }
        b.clone(op, mapping);
      }
      for (auto [i, value] : llvm::enumerate(yield.getOperands()))
        carried[i] = mapping.lookupOrDefault(value);
    }
    for (auto &[op, mapping] : stores)
      b.clone(*op, mapping);
    if (!hasYield)
      scf::YieldOp::create(b, loc, carried);
  }
  // The remainder: the original loop from where the main loop stopped.
  loop.getLowerBoundMutable().assign(mainEnd);
  loop.getInitArgsMutable().assign(main.getResults());
}

/// The thread loop of a phase: `scf.parallel (%t) = 0 to threads` mapped
/// to thread_x.
scf::ParallelOp createThreadLoop(OpBuilder &b, Location loc, Value threads,
                                 ValueRange inits) {
  return createMappedLoop(b, loc, threads, gpu::Processor::ThreadX, inits);
}

/// `scf.if %flag != 0` at `b` with an else block and results of the types
/// of `inits`, when `vectors` has a plan for `phase`; else null.
scf::IfOp vectorBranch(OpBuilder &b, Location loc, Operation *phase,
                       RowVectorChoice vectors, ValueRange inits) {
  if (!vectors.plan || !vectors.plan->accesses.count(phase))
    return nullptr;
  Value isVector = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ne, vectors.flag,
      arith::ConstantIndexOp::create(b, loc, 0));
  return scf::IfOp::create(b, loc, TypeRange(inits), isVector,
                           /*withElse=*/true);
}

/// A thread's vector loop over a phase from 0 to `ub` (a multiple of
/// kVectorWidth: the host checked): iterations 4t .. 4t + 3, then
/// 4(t + threads) .., with `inits` as its iteration arguments. `lanes` gets
/// one copy of `mapping` per lane, `iv` mapped to the loop's induction
/// variable plus the lane.
scf::ForOp createVectorLoop(OpBuilder &b, Location loc, const IRMapping &mapping,
                            Value iv, Value thread, Value threads, Value ub,
                            ValueRange inits,
                            SmallVectorImpl<IRMapping> &lanes) {
  Value width = arith::ConstantIndexOp::create(b, loc, kVectorWidth);
  Value start = arith::MulIOp::create(b, loc, thread, width);
  Value stride = arith::MulIOp::create(b, loc, threads, width);
  auto loop = scf::ForOp::create(b, loc, start, ub, stride, inits);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  lanes.assign(kVectorWidth, mapping);
  for (int64_t k = 0; k < kVectorWidth; ++k)
    lanes[k].map(iv, k == 0 ? loop.getInductionVar()
                            : (Value)arith::AddIOp::create(
                                  b, loc, loop.getInductionVar(),
                                  arith::ConstantIndexOp::create(b, loc, k)));
  return loop;
}

/// The vector iterations of reduction `phase` for `thread`: a partial
/// result per lane and iteration argument, from the identities, combined
/// lane by lane after the loop. Returns the thread's partial results.
SmallVector<Value> buildVectorReduction(OpBuilder &b, scf::ForOp phase,
                                        const IRMapping &mapping, Value thread,
                                        Value threads, Value ub,
                                        ArrayRef<Operation *> combiners,
                                        ArrayRef<Value> identities,
                                        ArrayRef<Operation *> accesses) {
  Location loc = phase.getLoc();
  const unsigned n = identities.size();
  SmallVector<Value> inits;
  for (int64_t k = 0; k < kVectorWidth; ++k)
    inits.append(identities.begin(), identities.end());
  SmallVector<IRMapping> lanes;
  scf::ForOp loop = createVectorLoop(b, loc, mapping, phase.getInductionVar(),
                                     thread, threads, ub, inits, lanes);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(loop.getBody());
    for (int64_t k = 0; k < kVectorWidth; ++k)
      lanes[k].map(phase.getRegionIterArgs(),
                   loop.getRegionIterArgs().slice(k * n, n));
    llvm::DenseSet<Operation *> planned(accesses.begin(), accesses.end());
    cloneLanesVectorized(b, loc, *phase.getBody(), lanes, planned);
    SmallVector<Value> yielded;
    for (int64_t k = 0; k < kVectorWidth; ++k)
      for (Value value : phase.getYieldedValues())
        yielded.push_back(lanes[k].lookupOrDefault(value));
    scf::YieldOp::create(b, loc, yielded);
  }
  SmallVector<Value> partials;
  for (unsigned i = 0; i < n; ++i) {
    Value acc = loop.getResult(i);
    for (int64_t k = 1; k < kVectorWidth; ++k) {
      Operation *step = b.clone(*combiners[i]);
      step->setOperands({acc, loop.getResult(k * n + i)});
      acc = step->getResult(0);
    }
    partials.push_back(acc);
  }
  return partials;
}

/// The vector iterations of the one-dim stage `phase` for `thread`.
void buildVectorStage(OpBuilder &b, scf::ParallelOp phase,
                      const IRMapping &mapping, Value thread, Value threads,
                      Value ub, ArrayRef<Operation *> accesses) {
  Location loc = phase.getLoc();
  SmallVector<IRMapping> lanes;
  scf::ForOp loop =
      createVectorLoop(b, loc, mapping, phase.getInductionVars()[0], thread,
                       threads, ub, {}, lanes);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  llvm::DenseSet<Operation *> planned(accesses.begin(), accesses.end());
  cloneLanesVectorized(b, loc, *phase.getBody(), lanes, planned);
}

/// A reduction phase: each thread reduces iterations t, t + threads, ...
/// from the identities; the block combines the threads' results and then
/// the loop's initial values.
void buildReductionPhase(OpBuilder &b, scf::ForOp phase, IRMapping &mapping,
                         Value threads, unsigned unroll,
                         RowVectorChoice vectors) {
  Location loc = phase.getLoc();
  SmallVector<Operation *> combiners;
  SmallVector<Value> identities;
  for (unsigned i = 0; i < phase.getNumResults(); ++i) {
    combiners.push_back(combinerOf(phase, i));
    identities.push_back(arith::ConstantOp::create(
        b, loc, reductionIdentity(combiners.back())));
  }
  scf::ParallelOp threadLoop = createThreadLoop(b, loc, threads, identities);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(threadLoop.getBody());
    Value thread = threadLoop.getInductionVars()[0];
    Value lb = mapping.lookupOrDefault(phase.getLowerBound());
    Value ub = mapping.lookupOrDefault(phase.getUpperBound());
    Value step = mapping.lookupOrDefault(phase.getStep());
    scf::IfOp either = vectorBranch(b, loc, phase, vectors, identities);
    if (either) {
      b.setInsertionPointToStart(either.thenBlock());
      SmallVector<Value> partials = buildVectorReduction(
          b, phase, mapping, thread, threads, ub, combiners, identities,
          vectors.plan->accesses.lookup(phase));
      scf::YieldOp::create(b, loc, partials);
      b.setInsertionPointToStart(either.elseBlock());
    }
    Value start = arith::AddIOp::create(
        b, loc, lb, arith::MulIOp::create(b, loc, thread, step));
    Value stride = arith::MulIOp::create(b, loc, threads, step);
    auto part = scf::ForOp::create(b, loc, start, ub, stride, identities);
    mapping.map(phase.getInductionVar(), part.getInductionVar());
    mapping.map(phase.getRegionIterArgs(), part.getRegionIterArgs());
    b.setInsertionPointToStart(part.getBody());
    for (Operation &op : phase.getBody()->getOperations())
      b.clone(op, mapping);
    unrollThreadLoop(b, part, unroll);
    ValueRange partials = part.getResults();
    if (either) {
      b.setInsertionPointToEnd(either.elseBlock());
      scf::YieldOp::create(b, loc, partials);
      partials = either.getResults();
    }
    b.setInsertionPointToEnd(threadLoop.getBody());
    auto reduce = scf::ReduceOp::create(b, loc, partials);
    for (auto [i, combine] : llvm::enumerate(combiners)) {
      Block &block = reduce.getReductions()[i].front();
      b.setInsertionPointToStart(&block);
      Operation *step = b.clone(*combine);
      step->setOperands({block.getArgument(0), block.getArgument(1)});
      scf::ReduceReturnOp::create(b, loc, step->getResult(0));
    }
  }
  for (auto [i, combine] : llvm::enumerate(combiners)) {
    Value acc = phase.getRegionIterArg(i);
    Operation *final = b.clone(*combine);
    Value init = mapping.lookupOrDefault(phase.getInitArgs()[i]);
    final->setOperands(combine->getOperand(0) == acc
                           ? ValueRange{init, threadLoop.getResult(i)}
                           : ValueRange{threadLoop.getResult(i), init});
    mapping.map(phase.getResult(i), final->getResult(0));
  }
}

/// A stage over the row: each thread runs iterations t, t + threads, ...
/// of the (linearised) iteration space.
void buildStagePhase(OpBuilder &b, scf::ParallelOp phase, IRMapping &mapping,
                     Value threads, unsigned unroll, RowVectorChoice vectors) {
  Location loc = phase.getLoc();
  SmallVector<Value> lbs, steps, counts;
  Value total;
  for (auto [lb, ub, step] : phaseBounds(phase)) {
    lbs.push_back(mapping.lookupOrDefault(lb));
    steps.push_back(mapping.lookupOrDefault(step));
    counts.push_back(tripCount(b, loc, lbs.back(), mapping.lookupOrDefault(ub),
                               steps.back()));
    total = total ? arith::MulIOp::create(b, loc, total, counts.back())
                  : counts.back();
  }
  scf::ParallelOp threadLoop = createThreadLoop(b, loc, threads, {});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(threadLoop.getBody()->getTerminator());
  Value thread = threadLoop.getInductionVars()[0];
  SmallVector<Value> ivs;
  scf::ForOp part;
  if (scf::IfOp either = vectorBranch(b, loc, phase, vectors, {})) {
    b.setInsertionPoint(either.thenBlock()->getTerminator());
    buildVectorStage(b, phase, mapping, thread, threads,
                     mapping.lookupOrDefault(phase.getUpperBound()[0]),
                     vectors.plan->accesses.lookup(phase));
    b.setInsertionPoint(either.elseBlock()->getTerminator());
  }
  if (lbs.size() == 1) {
    Value start = arith::AddIOp::create(
        b, loc, lbs[0], arith::MulIOp::create(b, loc, thread, steps[0]));
    Value stride = arith::MulIOp::create(b, loc, threads, steps[0]);
    auto loop = scf::ForOp::create(
        b, loc, start, mapping.lookupOrDefault(phase.getUpperBound()[0]),
        stride);
    part = loop;
    b.setInsertionPoint(loop.getBody()->getTerminator());
    ivs.push_back(loop.getInductionVar());
  } else {
    auto loop = scf::ForOp::create(b, loc, thread, total, threads);
    part = loop;
    b.setInsertionPoint(loop.getBody()->getTerminator());
    // Innermost dim fastest: consecutive threads, consecutive elements.
    ivs = delinearize(b, loc, loop.getInductionVar(), counts, lbs, steps);
  }
  mapping.map(phase.getInductionVars(), ivs);
  for (Operation &op : phase.getBody()->without_terminator())
    b.clone(op, mapping);
  unrollThreadLoop(b, part, unroll);
}

} // namespace

std::optional<RowKernel> analyzeRowKernel(scf::ParallelOp loop,
                                          std::string &why) {
  RowKernel kernel{loop, {}};
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (auto phase = dyn_cast<scf::ForOp>(op)) {
      if (phase.getNumResults() == 0) {
        why = "a loop over the row without results";
        return std::nullopt;
      }
      for (unsigned i = 0; i < phase.getNumResults(); ++i)
        if (!combinerOf(phase, i)) {
          why = "a loop over the row that is not a reduction with an "
                "associative, commutative combiner";
          return std::nullopt;
        }
      // Stores to a row cache do not count: a reduction phase keeps the
      // row it reads there (planRowCache).
      if (writesMemory(phase, isRowCache)) {
        why = "a reduction over the row that writes memory";
        return std::nullopt;
      }
      kernel.phases.push_back(phase);
      continue;
    }
    if (auto phase = dyn_cast<scf::ParallelOp>(op)) {
      if (phase.getNumResults() != 0) {
        why = "a parallel loop with reductions";
        return std::nullopt;
      }
      if (writesStackBuffer(phase)) {
        why = "a stage that writes a stack buffer";
        return std::nullopt;
      }
      kernel.phases.push_back(phase);
      continue;
    }
    if (op.getNumRegions() != 0) {
      why = ("an op with regions (" + op.getName().getStringRef() + ")").str();
      return std::nullopt;
    }
    if (auto alloc = dyn_cast<memref::AllocOp>(op);
        alloc && isRowCache(alloc))
      continue; // planRowCache's caches
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op);
        dealloc && isRowCache(dealloc.getMemref()))
      continue;
    if (auto alloca = dyn_cast<memref::AllocaOp>(op)) {
      if (!alloca.getType().hasStaticShape()) {
        why = "a dynamic stack buffer";
        return std::nullopt;
      }
      continue;
    }
    if (isMemoryEffectFree(&op) ||
        isa<memref::LoadOp, memref::StoreOp, cf::AssertOp>(op))
      continue;
    why = ("an op with side effects (" + op.getName().getStringRef() + ")")
              .str();
    return std::nullopt;
  }
  if (kernel.phases.empty()) {
    why = "no loop over the row";
    return std::nullopt;
  }
  return kernel;
}

Value hostRowLength(OpBuilder &b, const RowKernel &kernel) {
  Value longest;
  for (Operation *phase : kernel.phases) {
    Location loc = phase->getLoc();
    Value elements;
    for (auto [lb, ub, step] : phaseBounds(phase)) {
      Value hostLb = materializeOnHost(b, lb, kernel.loop, 0);
      Value hostUb = materializeOnHost(b, ub, kernel.loop, 0);
      Value hostStep = materializeOnHost(b, step, kernel.loop, 0);
      if (!hostLb || !hostUb || !hostStep)
        return nullptr;
      Value count = tripCount(b, loc, hostLb, hostUb, hostStep);
      elements = elements ? b.createOrFold<arith::MulIOp>(loc, elements, count)
                          : count;
    }
    longest = longest ? b.createOrFold<arith::MaxUIOp>(loc, longest, elements)
                      : elements;
  }
  return longest;
}

namespace {

/// The induction variable of a one-dim phase.
Value phaseInductionVar(Operation *phase) {
  if (auto loop = dyn_cast<scf::ForOp>(phase))
    return loop.getInductionVar();
  return cast<scf::ParallelOp>(phase).getInductionVars()[0];
}

/// The buffer `memref` (a view of a row) is taken from, when the view
/// keeps the buffer's last dim contiguous and starts a multiple of
/// kVectorWidth elements into it, and the buffer has the identity layout
/// and is defined outside `rowLoop`; else null. With the host's checks
/// (the buffer's address aligned, its last dim a multiple of
/// kVectorWidth), every row of such a view then starts aligned and its
/// elements 4m, 4m + 1, ... are one aligned vector:
///   - subview: the last dim kept, at a static offset that is a multiple
///     of kVectorWidth, with stride 1 (other dims: any offset or stride,
///     each a multiple of the last dim);
///   - collapse_shape: its groups are contiguous, so the last one is too;
///   - expand_shape of the last dim into [.., K]: K a multiple of
///     kVectorWidth (static, or host code added to `multiples`), or the
///     other dims of the group of static size 1;
///   - cast.
Value vectorRoot(OpBuilder &b, Value memref, Operation *rowLoop,
                 SmallVectorImpl<Value> &multiples) {
  for (int depth = 0; depth < 32; ++depth) {
    Operation *def = memref.getDefiningOp();
    if (auto subview = dyn_cast_or_null<memref::SubViewOp>(def)) {
      int64_t last = subview.getSourceType().getRank() - 1;
      if (last < 0 || subview.getDroppedDims().test(last))
        return nullptr;
      std::optional<int64_t> offset =
          getConstantIntValue(subview.getMixedOffsets()[last]);
      if (!offset || *offset % kVectorWidth != 0 ||
          !isConstantIntValue(subview.getMixedStrides()[last], 1))
        return nullptr;
      memref = subview.getSource();
      continue;
    }
    if (auto collapse = dyn_cast_or_null<memref::CollapseShapeOp>(def)) {
      memref = collapse.getSrc();
      continue;
    }
    if (auto expand = dyn_cast_or_null<memref::ExpandShapeOp>(def)) {
      MemRefType type = expand.getResultType();
      SmallVector<ReassociationIndices> groups =
          expand.getReassociationIndices();
      ArrayRef<int64_t> shape = type.getShape();
      bool unitOuter = llvm::all_of(
          ArrayRef<int64_t>(groups.back()).drop_back(),
          [&](int64_t dim) { return shape[dim] == 1; });
      if (!unitOuter) {
        OpFoldResult inner = expand.getMixedOutputShape().back();
        if (std::optional<int64_t> size = getConstantIntValue(inner)) {
          if (*size % kVectorWidth != 0)
            return nullptr;
        } else {
          Value host =
              materializeOnHost(b, cast<Value>(inner), rowLoop, /*depth=*/0);
          if (!host)
            return nullptr;
          multiples.push_back(host);
        }
      }
      memref = expand.getSrc();
      continue;
    }
    if (auto cast = dyn_cast_or_null<memref::CastOp>(def)) {
      memref = cast.getSource();
      continue;
    }
    if (isRowCache(memref))
      return memref; // 16-byte aligned by construction, rows of its own
    if (def && isa<ViewLikeOpInterface>(def))
      return nullptr; // reinterpret_cast, view, transpose: not followed
    auto type = dyn_cast<MemRefType>(memref.getType());
    if (!type || type.getRank() < 1 || !type.getLayout().isIdentity() ||
        !definedOutside(memref, rowLoop))
      return nullptr;
    return memref;
  }
  return nullptr;
}

} // namespace

std::optional<RowVectorPlan> planRowVectors(OpBuilder &b,
                                            const RowKernel &kernel) {
  RowVectorPlan plan;
  llvm::SetVector<Value> roots;
  for (Operation *phase : kernel.phases) {
    SmallVector<std::array<Value, 3>> bounds = phaseBounds(phase);
    if (bounds.size() != 1 || !isConstantIntValue(bounds[0][0], 0) ||
        !isConstantIntValue(bounds[0][2], 1))
      continue;
    Value iv = phaseInductionVar(phase);
    Block &body = phase->getRegion(0).front();
    // Lanes run in lockstep: straight-line bodies whose only memory
    // effects are loads and stores.
    if (llvm::any_of(body.without_terminator(), [](Operation &op) {
          return op.getNumRegions() != 0 ||
                 (!isMemoryEffectFree(&op) &&
                  !isa<memref::LoadOp, memref::StoreOp>(op));
        }))
      continue;
    SmallVector<Value> multiples;
    llvm::DenseMap<Operation *, Value> candidates;
    llvm::DenseSet<Value> read, written;
    for (Operation &op : body.without_terminator()) {
      if (!isa<memref::LoadOp, memref::StoreOp>(op))
        continue;
      Value memref = accessedMemref(&op);
      (isa<memref::LoadOp>(op) ? read : written).insert(rootBuffer(memref));
      auto type = cast<MemRefType>(memref.getType());
      ValueRange indices = accessedIndices(&op);
      if (indices.empty() || indices.back() != iv ||
          vectorElementBytes(type) == 0 || !type.isLastDimUnitStride() ||
          llvm::any_of(indices.drop_back(), [&](Value index) {
            return !definedOutside(index, phase);
          }))
        continue;
      if (Value root = vectorRoot(b, memref, kernel.loop, multiples))
        candidates[&op] = root;
    }
    // A buffer both read and written by the phase: its accesses become
    // vector accesses only when all of them can, through one view at the
    // same indices (each lane then reads and writes only its own element).
    SmallVector<Operation *> accesses;
    for (Operation &op : body.without_terminator()) {
      if (!candidates.count(&op))
        continue;
      Value root = rootBuffer(accessedMemref(&op));
      if (read.contains(root) && written.contains(root)) {
        bool sameAccess = llvm::all_of(
            body.without_terminator(), [&](Operation &other) {
              if (!isa<memref::LoadOp, memref::StoreOp>(other) ||
                  rootBuffer(accessedMemref(&other)) != root)
                return true;
              return candidates.count(&other) &&
                     accessedMemref(&other) == accessedMemref(&op) &&
                     llvm::equal(accessedIndices(&other),
                                 accessedIndices(&op));
            });
        if (!sameAccess)
          continue;
      }
      accesses.push_back(&op);
    }
    if (accesses.empty())
      continue;
    Value trips = materializeOnHost(b, bounds[0][1], kernel.loop, 0);
    if (!trips)
      continue;
    for (Operation *access : accesses)
      if (!isRowCache(candidates[access]))
        roots.insert(candidates[access]);
    plan.hostMultiples.push_back(trips);
    plan.hostMultiples.append(multiples);
    plan.accesses[phase] = std::move(accesses);
  }
  if (plan.accesses.empty())
    return std::nullopt;
  plan.roots.assign(roots.begin(), roots.end());
  return plan;
}

Value rowVectorCondition(OpBuilder &b, Location loc,
                         const RowVectorPlan &plan) {
  return vectorAccessCondition(b, loc, plan.hostMultiples, plan.roots);
}

namespace {

/// Whether `a` and `b` are the same value or computed alike: ops of the
/// same kind and attributes (no regions, no memory effects) from
/// equivalent operands. Views of one row built twice (a subview and a
/// collapse_shape per phase, before CSE) count as one.
bool equivalentValues(Value a, Value b, int depth = 0) {
  if (a == b)
    return true;
  Operation *defA = a.getDefiningOp(), *defB = b.getDefiningOp();
  if (!defA || !defB || depth > 12 || defA->getNumRegions() != 0 ||
      !isMemoryEffectFree(defA) ||
      cast<OpResult>(a).getResultNumber() !=
          cast<OpResult>(b).getResultNumber())
    return false;
  return OperationEquivalence::isEquivalentTo(
      defA, defB,
      [&](Value x, Value y) {
        return success(equivalentValues(x, y, depth + 1));
      },
      /*markEquivalent=*/nullptr, OperationEquivalence::IgnoreLocations);
}

/// Bytes of one element a row cache can hold (8- to 64-bit integers and
/// floats), or 0.
int64_t cacheElementBytes(Type type) {
  if (!type.isIntOrFloat())
    return 0;
  unsigned bits = type.getIntOrFloatBitWidth();
  return bits % 8 == 0 && bits <= 64 ? bits / 8 : 0;
}

/// A row of a buffer the phases touch: the accesses (phase index, op) at
/// [indices..., the phase's induction variable] of `memref`.
struct RowGroup {
  Value memref;
  SmallVector<Value> indices;
  SmallVector<std::pair<unsigned, Operation *>> accesses;
  bool conflicted = false;
};

/// Whether `phase` can touch a cached row: one dim from 0 with step 1, a
/// straight-line body whose memory effects are loads and stores.
bool cacheablePhase(Operation *phase) {
  SmallVector<std::array<Value, 3>> bounds = phaseBounds(phase);
  if (bounds.size() != 1 || !isConstantIntValue(bounds[0][0], 0) ||
      !isConstantIntValue(bounds[0][2], 1))
    return false;
  return llvm::all_of(
      phase->getRegion(0).front().without_terminator(), [](Operation &op) {
        return op.getNumRegions() == 0 &&
               (isMemoryEffectFree(&op) ||
                isa<memref::LoadOp, memref::StoreOp>(op));
      });
}

/// The loads and stores of `kernel`'s cacheable phases that go through a
/// collapse_shape defined outside the phase, each of whose groups has at
/// most one source dim that is not a static 1, access its source instead
/// (the index of a group on its wide dim, 0 on the others), repeatedly.
/// The phases of a stitch kernel view one row differently (a row written
/// through `[1, 1, n] -> [n]` and read through `[1, 1, n] -> [1, n]`); read
/// through one view they are one row to cache. The ops are changed in
/// place: the same computation.
void accessCollapsedRowsDirectly(OpBuilder &b, const RowKernel &kernel) {
  Value zero;
  for (Operation *phase : kernel.phases) {
    if (!cacheablePhase(phase))
      continue;
    for (Operation &op : phase->getRegion(0).front().without_terminator()) {
      if (!isa<memref::LoadOp, memref::StoreOp>(op) ||
          accessedIndices(&op).empty())
        continue;
      while (auto collapse = accessedMemref(&op)
                                 .getDefiningOp<memref::CollapseShapeOp>()) {
        if (!definedOutside(collapse.getResult(), phase))
          break;
        MemRefType source = collapse.getSrcType();
        SmallVector<Value> indices(accessedIndices(&op));
        SmallVector<Value> expanded;
        bool single = true;
        for (auto [g, group] :
             llvm::enumerate(collapse.getReassociationIndices())) {
          std::optional<int64_t> wide;
          for (int64_t d : group)
            if (source.getDimSize(d) != 1) {
              single &= !wide.has_value();
              wide = d;
            }
          if (!single)
            break;
          if (!zero)
            zero = arith::ConstantIndexOp::create(b, op.getLoc(), 0);
          for (int64_t d : group)
            expanded.push_back(wide == d ? indices[g] : zero);
        }
        if (!single || expanded.size() != static_cast<size_t>(source.getRank()))
          break;
        if (auto load = dyn_cast<memref::LoadOp>(op)) {
          load.getMemrefMutable().assign(collapse.getSrc());
          load.getIndicesMutable().assign(expanded);
        } else {
          auto store = cast<memref::StoreOp>(op);
          store.getMemrefMutable().assign(collapse.getSrc());
          store.getIndicesMutable().assign(expanded);
        }
      }
    }
  }
}

} // namespace

Value rowCacheBytes(OpBuilder &b, Location loc, memref::AllocOp cache,
                    Value count) {
  int64_t element =
      cacheElementBytes(cache.getType().getElementType());
  auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value bytes = arith::MulIOp::create(b, loc, count, c(element));
  return arith::MulIOp::create(
      b, loc, arith::CeilDivUIOp::create(b, loc, bytes, c(16)), c(16));
}

FailureOr<std::optional<RowCachePlan>>
planRowCache(OpBuilder &b, const RowKernel &kernel) {
  scf::ParallelOp loop = kernel.loop;
  accessCollapsedRowsDirectly(b, kernel);
  // Accesses of rows, grouped by view and row-level indices.
  SmallVector<RowGroup> groups;
  llvm::DenseSet<Operation *> grouped;
  for (auto [p, phase] : llvm::enumerate(kernel.phases)) {
    if (!cacheablePhase(phase))
      continue;
    Value iv = phaseInductionVar(phase);
    for (Operation &op : phase->getRegion(0).front().without_terminator()) {
      if (!isa<memref::LoadOp, memref::StoreOp>(op))
        continue;
      Value memref = accessedMemref(&op);
      ValueRange indices = accessedIndices(&op);
      auto type = cast<MemRefType>(memref.getType());
      if (indices.empty() || indices.back() != iv ||
          cacheElementBytes(type.getElementType()) == 0 ||
          llvm::any_of(indices.drop_back(), [&](Value index) {
            return !definedOutside(index, phase);
          }))
        continue;
      auto same = [&](const RowGroup &group) {
        return equivalentValues(group.memref, memref) &&
               llvm::all_of(llvm::zip_equal(group.indices,
                                            indices.drop_back()),
                            [](auto pair) {
                              return equivalentValues(std::get<0>(pair),
                                                      std::get<1>(pair));
                            });
      };
      auto *group = llvm::find_if(groups, same);
      if (group == groups.end()) {
        groups.push_back({memref, llvm::to_vector(indices.drop_back()), {}});
        group = std::prev(groups.end());
      }
      group->accesses.push_back({static_cast<unsigned>(p), &op});
      grouped.insert(&op);
    }
  }
  if (groups.empty())
    return std::optional<RowCachePlan>();
  // One group per buffer, and no other access to it in the row loop: the
  // cache and the buffer then never disagree where it matters.
  llvm::DenseMap<Value, unsigned> groupsOfRoot;
  for (RowGroup &group : groups)
    ++groupsOfRoot[rootBuffer(group.memref)];
  loop.walk([&](Operation *op) {
    if (grouped.contains(op) || isa<ViewLikeOpInterface, memref::DimOp>(op))
      return;
    for (Value operand : op->getOperands())
      if (isa<MemRefType>(operand.getType()))
        for (RowGroup &group : groups)
          if (rootBuffer(group.memref) == rootBuffer(operand))
            group.conflicted = true;
  });
  // Qualifying groups, with their first and last writing phases and the
  // host's row length.
  struct Cached {
    RowGroup *group;
    unsigned first;
    std::optional<unsigned> lastWrite;
    Value hostCount;
  };
  SmallVector<Cached> cached;
  // Each phase's trip count as host code (null: not computable there).
  // Phases over one row compute their lengths from different views of it
  // (the input's, the output's): equal as host code.
  llvm::DenseMap<unsigned, Value> hostTrips;
  auto hostTripCount = [&](unsigned p) {
    auto [it, inserted] = hostTrips.try_emplace(p);
    if (inserted)
      it->second = materializeOnHost(b, phaseBounds(kernel.phases[p])[0][1],
                                     loop, 0);
    return it->second;
  };
  for (RowGroup &group : groups) {
    if (group.conflicted || groupsOfRoot[rootBuffer(group.memref)] != 1)
      continue;
    unsigned first = group.accesses.front().first;
    Value hostCount = hostTripCount(first);
    bool sameLength = hostCount != nullptr, touchedLater = false;
    std::optional<unsigned> lastWrite;
    for (auto [p, op] : group.accesses) {
      Value count = sameLength ? hostTripCount(p) : Value();
      sameLength &= count && equivalentValues(count, hostCount);
      touchedLater |= p != first;
      if (isa<memref::StoreOp>(op))
        lastWrite = p;
    }
    if (!sameLength || !touchedLater)
      continue;
    cached.push_back({&group, first, lastWrite, hostCount});
  }
  if (cached.empty())
    return std::optional<RowCachePlan>();

  // The clone, its caches and rewritten accesses.
  Location loc = loop.getLoc();
  IRMapping cloned;
  auto clone = cast<scf::ParallelOp>(b.clone(*loop, cloned));
  Value bytesPerRow = arith::ConstantIndexOp::create(b, loc, 0);
  OpBuilder at(b.getContext());
  for (Cached &entry : cached) {
    auto type = cast<MemRefType>(entry.group->memref.getType());
    auto cacheType = MemRefType::get({ShapedType::kDynamic},
                                     type.getElementType());
    at.setInsertionPoint(cloned.lookup(kernel.phases[entry.first]));
    auto cache = memref::AllocOp::create(at, loc, cacheType,
                                         ValueRange{entry.hostCount},
                                         at.getI64IntegerAttr(64));
    cache->setAttr(kRowCacheAttr, at.getUnitAttr());
    at.setInsertionPoint(clone.getBody()->getTerminator());
    memref::DeallocOp::create(at, loc, cache);
    bytesPerRow = arith::AddIOp::create(
        b, loc, bytesPerRow, rowCacheBytes(b, loc, cache, entry.hostCount));
    // In the first phase, a load before any store of the row reads the
    // buffer and fills the cache; every other load reads the cache. A
    // store writes the cache if a load follows it, and the buffer in the
    // last writing phase (unless the buffer holds loop temporaries).
    bool stored = false;
    auto &accesses = entry.group->accesses;
    // A slice of loop temporaries is dead after its row: the cache is all
    // of it.
    Operation *root = rootBuffer(entry.group->memref).getDefiningOp();
    bool temporary = root && root->hasAttr(kLoopTemporariesAttr);
    for (auto [i, access] : llvm::enumerate(accesses)) {
      auto [p, original] = access;
      Operation *op = cloned.lookup(original);
      Value iv = accessedIndices(op).back();
      at.setInsertionPoint(op);
      if (auto load = dyn_cast<memref::LoadOp>(op)) {
        if (p == entry.first && !stored) {
          at.setInsertionPointAfter(op);
          memref::StoreOp::create(at, loc, load.getResult(), cache, iv);
          continue;
        }
        Value value = memref::LoadOp::create(at, loc, cache, iv);
        load.getResult().replaceAllUsesWith(value);
        load.erase();
        continue;
      }
      auto store = cast<memref::StoreOp>(op);
      bool readLater = llvm::any_of(
          llvm::drop_begin(accesses, i + 1),
          [](auto later) { return isa<memref::LoadOp>(later.second); });
      if (readLater)
        memref::StoreOp::create(at, loc, store.getValueToStore(), cache, iv);
      stored |= p == entry.first;
      if (p != *entry.lastWrite || temporary)
        store.erase();
    }
  }
  std::string why;
  std::optional<RowKernel> rewritten = analyzeRowKernel(clone, why);
  if (!rewritten) {
    // planRowCache only adds what analyzeRowKernel accepts.
    loop.emitError("disc-map-loops-to-gpu: the row cache made this row "
                   "kernel unsupported (a bug): ")
        << why;
    clone.erase();
    return failure();
  }
  return std::optional<RowCachePlan>(RowCachePlan{*rewritten, bytesPerRow});
}

Value threadsForRow(OpBuilder &b, Location loc, Value rowLength) {
  if (!rowLength)
    return arith::ConstantIndexOp::create(b, loc, 256);
  auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value perFour = b.createOrFold<arith::CeilDivUIOp>(loc, rowLength, c(4));
  Value clamped = b.createOrFold<arith::MinUIOp>(loc, perFour, c(256));
  clamped = b.createOrFold<arith::MaxUIOp>(loc, clamped, c(32));
  Value warps = b.createOrFold<arith::CeilDivUIOp>(loc, clamped, c(32));
  return b.createOrFold<arith::MulIOp>(loc, warps, c(32));
}

namespace {

/// The row loop's trip counts, per dim, and their product (the rows).
Value rowCounts(OpBuilder &b, scf::ParallelOp loop,
                SmallVector<Value> &counts) {
  Location loc = loop.getLoc();
  Value rows = arith::ConstantIndexOp::create(b, loc, 1);
  for (auto [lb, ub, step] : llvm::zip(
           loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    counts.push_back(tripCount(b, loc, lb, ub, step));
    rows = b.createOrFold<arith::MulIOp>(loc, rows, counts.back());
  }
  return rows;
}

/// The body of `kernel` for row `row` (linear) at `b`'s insertion point,
/// its phases spread over `threads` threads (thread loops).
void buildRowBody(OpBuilder &b, const RowKernel &kernel, Value row,
                  ValueRange counts, Value threads, unsigned unroll,
                  RowVectorChoice vectors) {
  scf::ParallelOp loop = kernel.loop;
  SmallVector<Value> ivs = delinearize(b, loop.getLoc(), row, counts,
                                       loop.getLowerBound(), loop.getStep());
  IRMapping mapping;
  mapping.map(loop.getInductionVars(), ivs);
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (!llvm::is_contained(kernel.phases, &op)) {
      b.clone(op, mapping);
      continue;
    }
    if (auto reduction = dyn_cast<scf::ForOp>(op))
      buildReductionPhase(b, reduction, mapping, threads, unroll, vectors);
    else
      buildStagePhase(b, cast<scf::ParallelOp>(op), mapping, threads, unroll,
                      vectors);
  }
}

} // namespace

void buildRowBlockNest(OpBuilder &b, const RowKernel &kernel, Value threads,
                       unsigned unroll, RowVectorChoice vectors) {
  scf::ParallelOp loop = kernel.loop;
  Location loc = loop.getLoc();
  SmallVector<Value> counts;
  Value rows = rowCounts(b, loop, counts);
  auto nest = createMappedLoop(b, loc, rows, gpu::Processor::BlockX);
  nest->setAttr(kRowBlockAttr, b.getUnitAttr());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(nest.getBody()->getTerminator());
  buildRowBody(b, kernel, nest.getInductionVars()[0], counts, threads, unroll,
               vectors);
}

void buildRowWarpNest(OpBuilder &b, const RowKernel &kernel, unsigned unroll,
                      RowVectorChoice vectors) {
  scf::ParallelOp loop = kernel.loop;
  Location loc = loop.getLoc();
  auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  SmallVector<Value> counts;
  Value rows = rowCounts(b, loop, counts);
  Value perBlock = c(kRowsPerWarpBlock);
  Value blocks = b.createOrFold<arith::CeilDivUIOp>(loc, rows, perBlock);
  auto nest = createMappedLoop(b, loc, blocks, gpu::Processor::BlockX);
  nest->setAttr(kRowWarpAttr, b.getUnitAttr());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(nest.getBody()->getTerminator());
  auto warps = createMappedLoop(b, loc, perBlock, gpu::Processor::ThreadY);
  b.setInsertionPoint(warps.getBody()->getTerminator());
  Value row = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, nest.getInductionVars()[0],
                                    perBlock),
      warps.getInductionVars()[0]);
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, rows);
  auto guardRow = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
  b.setInsertionPoint(guardRow.thenBlock()->getTerminator());
  buildRowBody(b, kernel, row, counts, c(kWarpSize), unroll, vectors);
}

void sequentializeParallelLoopsIn(Operation *root) {
  SmallVector<scf::ParallelOp> inner;
  for (Region &region : root->getRegions())
    region.walk([&](scf::ParallelOp p) { inner.push_back(p); });
  // Post-order: innermost first, so every rewritten loop is leaf-most.
  for (scf::ParallelOp p : inner) {
    OpBuilder b(p);
    Location loc = p.getLoc();
    SmallVector<Value> ivs;
    OpBuilder nested = b;
    for (auto [lb, ub, step] :
         llvm::zip(p.getLowerBound(), p.getUpperBound(), p.getStep())) {
      auto loop = scf::ForOp::create(nested, loc, lb, ub, step);
      ivs.push_back(loop.getInductionVar());
      nested.setInsertionPoint(loop.getBody()->getTerminator());
    }
    IRMapping mapping;
    mapping.map(p.getInductionVars(), ivs);
    for (Operation &op : p.getBody()->without_terminator())
      nested.clone(op, mapping);
    p.erase();
  }
}

} // namespace disc::cuda
