//===- ColumnLoops.cpp - column reductions as parallel loops --------------===//
//
// See ColumnLoops.h.
//
//===----------------------------------------------------------------------===//
#include "ColumnLoops.h"

#include "GpuLoopUtils.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

using namespace mlir;

namespace disc::cuda {
namespace {

bool isPure(Operation &op) {
  return op.getNumRegions() == 0 && isMemoryEffectFree(&op);
}

/// The only op of `block` (terminator aside) that is not pure, if it is
/// of type `T`.
template <typename T> T soleEffectfulOp(Block *block) {
  T found;
  for (Operation &op : block->without_terminator()) {
    if (isPure(op))
      continue;
    if (found || !isa<T>(op))
      return T();
    found = cast<T>(op);
  }
  return found;
}

/// Whether `value` depends on `iv` through ops nested in `scope`.
bool dependsOn(Value value, Value iv, Operation *scope, int depth = 0) {
  if (value == iv)
    return true;
  Operation *def = value.getDefiningOp();
  if (!def || !scope->isAncestor(def) || depth > 32)
    return false;
  return llvm::any_of(def->getOperands(), [&](Value operand) {
    return dependsOn(operand, iv, scope, depth + 1);
  });
}

/// The bounds and steps of `loop`.
SmallVector<Value> boundsOf(scf::ParallelOp loop) {
  SmallVector<Value> bounds(loop.getLowerBound());
  llvm::append_range(bounds, loop.getUpperBound());
  llvm::append_range(bounds, loop.getStep());
  return bounds;
}

/// Whether `inner`'s iterations may run in any order of `loop`'s
/// iterations (see ColumnLoops.h).
bool isColumnLoop(scf::ForOp loop, scf::ParallelOp inner) {
  if (loop.getNumResults() != 0 || inner.getNumResults() != 0)
    return false;
  for (Value bound : boundsOf(inner))
    if (!definedOutside(bound, loop))
      return false;
  SmallVector<memref::LoadOp> loads;
  SmallVector<memref::StoreOp> stores;
  for (Operation &op : inner.getBody()->without_terminator()) {
    if (auto load = dyn_cast<memref::LoadOp>(op))
      loads.push_back(load);
    else if (auto store = dyn_cast<memref::StoreOp>(op))
      stores.push_back(store);
    else if (!isPure(op))
      return false;
  }
  if (stores.empty())
    return false;
  Value iv = loop.getInductionVar();
  for (memref::StoreOp store : stores) {
    Value root = rootBuffer(store.getMemRef());
    if (llvm::any_of(store.getIndices(),
                     [&](Value index) { return dependsOn(index, iv, loop); }))
      return false;
    auto sameAccess = [&](Value memref, ValueRange indices) {
      return rootBuffer(memref) != root ||
             (memref == store.getMemRef() &&
              llvm::equal(indices, store.getIndices()));
    };
    for (memref::LoadOp load : loads)
      if (!sameAccess(load.getMemRef(), load.getIndices()))
        return false;
    for (memref::StoreOp other : stores)
      if (!sameAccess(other.getMemRef(), other.getIndices()))
        return false;
  }
  return true;
}

/// The per-thread loop of an interchanged column nest keeps each element
/// it updates in memory: a load and a store per iteration, whose latency
/// (a store, then a load of it from L2) the loop waits for every time.
/// Where every store of the body is an accumulator, `store combine(load
/// e, x), e` at an element `e` computed outside the loop with the load
/// used by nothing else, the element is carried as an iteration argument
/// instead: loaded before the loop, stored after it. Float sums and
/// products are marked reassociable, as disc-promote-accumulators marks
/// the accumulators it carries (a reduction's order is the compiler's to
/// choose), which lets the nest split its rows (splitColumnNest). Returns
/// whether it did.
bool carryAccumulators(scf::ForOp &loop) {
  // The elements' index arithmetic, cloned into the loop, moves out.
  moveLoopInvariantCode(cast<LoopLikeOpInterface>(loop.getOperation()));
  Block *body = loop.getBody();
  SmallVector<std::pair<memref::LoadOp, memref::StoreOp>> accumulators;
  for (auto store : body->getOps<memref::StoreOp>()) {
    if (!loop.isDefinedOutsideOfLoop(store.getMemRef()) ||
        llvm::any_of(store.getIndices(), [&](Value index) {
          return !loop.isDefinedOutsideOfLoop(index);
        }))
      return false;
    memref::LoadOp load;
    for (auto candidate : body->getOps<memref::LoadOp>())
      if (candidate.getMemRef() == store.getMemRef() &&
          candidate.getIndices() == store.getIndices()) {
        if (load)
          return false;
        load = candidate;
      }
    Operation *combine = store.getValue().getDefiningOp();
    if (!load || !load->isBeforeInBlock(store) || !load->hasOneUse() ||
        !combine || *load->getUsers().begin() != combine ||
        // A reduction step (a float sum or product before it is marked
        // reassociable below).
        !(isa<arith::AddFOp, arith::MulFOp>(combine) ||
          reductionIdentity(combine)) ||
        !store.getValue().hasOneUse() ||
        combine->getOperand(0) == combine->getOperand(1))
      return false;
    accumulators.push_back({load, store});
  }
  if (accumulators.empty())
    return false;
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  SmallVector<Value> inits;
  for (auto [load, store] : accumulators)
    inits.push_back(memref::LoadOp::create(b, load.getLoc(), load.getMemRef(),
                                           load.getIndices()));
  auto carried = scf::ForOp::create(b, loc, loop.getLowerBound(),
                                    loop.getUpperBound(), loop.getStep(),
                                    inits);
  Block *newBody = carried.getBody();
  if (!newBody->empty())
    newBody->getTerminator()->erase();
  newBody->getOperations().splice(newBody->end(), body->getOperations(),
                                  body->begin(), std::prev(body->end()));
  loop.getInductionVar().replaceAllUsesWith(carried.getInductionVar());
  SmallVector<Value> yielded;
  OpBuilder after(carried->getContext());
  after.setInsertionPointAfter(carried);
  for (auto [k, pair] : llvm::enumerate(accumulators)) {
    auto [load, store] = pair;
    load.getResult().replaceAllUsesWith(carried.getRegionIterArgs()[k]);
    Value value = store.getValue();
    if (auto fmf = dyn_cast<arith::ArithFastMathInterface>(
            value.getDefiningOp()))
      if (isa<arith::AddFOp, arith::MulFOp>(value.getDefiningOp()))
        value.getDefiningOp()->setAttr(
            fmf.getFastMathAttrName(),
            arith::FastMathFlagsAttr::get(
                loop.getContext(), fmf.getFastMathFlagsAttr().getValue() |
                                       arith::FastMathFlags::reassoc));
    yielded.push_back(value);
    memref::StoreOp::create(after, store.getLoc(), carried.getResult(k),
                            store.getMemRef(), store.getIndices());
    load.erase();
    store.erase();
  }
  OpBuilder end = OpBuilder::atBlockEnd(newBody);
  scf::YieldOp::create(end, loc, yielded);
  loop.erase();
  loop = carried;
  return true;
}

/// Rewrites [outer] { loop { inner } } into one parallel loop over
/// (outer's dims, inner's dims) around `loop`.
void interchange(scf::ParallelOp outer, scf::ForOp loop,
                 scf::ParallelOp inner) {
  Operation *anchor = outer ? outer.getOperation() : loop.getOperation();
  OpBuilder b(anchor);
  Location loc = loop.getLoc();
  SmallVector<Value> lbs, ubs, steps;
  if (outer) {
    llvm::append_range(lbs, outer.getLowerBound());
    llvm::append_range(ubs, outer.getUpperBound());
    llvm::append_range(steps, outer.getStep());
  }
  llvm::append_range(lbs, inner.getLowerBound());
  llvm::append_range(ubs, inner.getUpperBound());
  llvm::append_range(steps, inner.getStep());
  auto merged = scf::ParallelOp::create(b, loc, lbs, ubs, steps);
  SmallVector<Value> ivs(merged.getInductionVars());
  IRMapping mapping;
  size_t outerDims = outer ? outer.getNumLoops() : 0;
  if (outer)
    mapping.map(outer.getInductionVars(),
                ArrayRef<Value>(ivs).take_front(outerDims));
  mapping.map(inner.getInductionVars(),
              ArrayRef<Value>(ivs).drop_front(outerDims));
  b.setInsertionPoint(merged.getBody()->getTerminator());
  if (outer)
    for (Operation &op : outer.getBody()->without_terminator())
      if (&op != loop.getOperation())
        b.clone(op, mapping); // pure ops; the loop is cloned below
  auto sequential = scf::ForOp::create(
      b, loc, mapping.lookupOrDefault(loop.getLowerBound()),
      mapping.lookupOrDefault(loop.getUpperBound()),
      mapping.lookupOrDefault(loop.getStep()));
  mapping.map(loop.getInductionVar(), sequential.getInductionVar());
  b.setInsertionPoint(sequential.getBody()->getTerminator());
  for (Operation &op : loop.getBody()->without_terminator())
    if (&op != inner.getOperation())
      b.clone(op, mapping);
  for (Operation &op : inner.getBody()->without_terminator())
    b.clone(op, mapping);
  anchor->erase();
  if (carryAccumulators(sequential))
    merged->setAttr(kColumnNestAttr, b.getUnitAttr());
}

} // namespace

unsigned interchangeColumnLoops(func::FuncOp func) {
  SmallVector<std::tuple<scf::ParallelOp, scf::ForOp, scf::ParallelOp>> nests;
  for (Operation &op : func.getBody().getOps()) {
    scf::ParallelOp outer;
    scf::ForOp loop = dyn_cast<scf::ForOp>(op);
    if (auto parallel = dyn_cast<scf::ParallelOp>(op)) {
      if (parallel.getNumResults() != 0)
        continue;
      outer = parallel;
      loop = soleEffectfulOp<scf::ForOp>(parallel.getBody());
    }
    if (!loop)
      continue;
    auto inner = soleEffectfulOp<scf::ParallelOp>(loop.getBody());
    if (!inner || !isColumnLoop(loop, inner))
      continue;
    // The inner dims join the outer ones: their bounds cannot depend on
    // an outer iteration.
    if (outer && !llvm::all_of(boundsOf(inner), [&](Value bound) {
                                 return definedOutside(bound, outer);
                               }))
      continue;
    nests.push_back({outer, loop, inner});
  }
  for (auto [outer, loop, inner] : nests)
    interchange(outer, loop, inner);
  return nests.size();
}

namespace {

/// The parts of a reduction that keeps a middle dim (see
/// collapseOuterReductionLoops): the host loop %n, the parallel loop %c,
/// its row loop %hw, and the accumulators' loads and stores.
struct OuterReduction {
  scf::ForOp outer;
  scf::ParallelOp columns;
  scf::ForOp rows;
  SmallVector<memref::LoadOp> inits;
  SmallVector<memref::StoreOp> results;
  /// Values of the nest (outside the row loop) that move with %n.
  DenseSet<Value> moving;
};

/// The values of `outer`'s body and `columns`' body (outside the row loop)
/// that depend on %n: %n itself and every result of an op using one.
DenseSet<Value> valuesMovingWithOuter(scf::ForOp outer,
                                      scf::ParallelOp columns) {
  DenseSet<Value> moving{outer.getInductionVar()};
  auto visit = [&](Operation &op) {
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return moving.contains(v); }))
      for (Value result : op.getResults())
        moving.insert(result);
  };
  for (Operation &op : outer.getBody()->without_terminator())
    if (&op != columns.getOperation())
      visit(op);
  for (Operation &op : columns.getBody()->without_terminator())
    visit(op);
  return moving;
}

std::optional<OuterReduction> matchOuterReduction(scf::ForOp outer) {
  if (outer.getNumResults() != 0)
    return std::nullopt;
  auto columns = soleEffectfulOp<scf::ParallelOp>(outer.getBody());
  if (!columns || columns.getNumResults() != 0 ||
      !llvm::all_of(boundsOf(columns),
                    [&](Value v) { return definedOutside(v, outer); }))
    return std::nullopt;
  OuterReduction match{outer, columns, {}, {}, {}, {}};
  for (Operation &op : columns.getBody()->without_terminator()) {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      if (match.rows)
        return std::nullopt;
      match.rows = loop;
    } else if (auto load = dyn_cast<memref::LoadOp>(op)) {
      match.inits.push_back(load);
    } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
      match.results.push_back(store);
    } else if (!isPure(op)) {
      return std::nullopt;
    }
  }
  scf::ForOp rows = match.rows;
  if (!rows || rows.getNumResults() == 0 ||
      rows.getNumResults() != match.inits.size() ||
      rows.getNumResults() != match.results.size() || writesMemory(rows) ||
      !definedOutside(rows.getLowerBound(), outer) ||
      !definedOutside(rows.getUpperBound(), outer) ||
      !definedOutside(rows.getStep(), outer))
    return std::nullopt;
  // Accumulator k: loaded into the row loop's init k, its result k stored
  // back to the same element, which does not move with %n; nothing else
  // in the nest reads or writes that buffer.
  match.moving = valuesMovingWithOuter(outer, columns);
  const DenseSet<Value> &moving = match.moving;
  SmallVector<Value> roots;
  for (unsigned k = 0; k < rows.getNumResults(); ++k) {
    memref::LoadOp load = match.inits[k];
    auto init = rows.getInitArgs()[k].getDefiningOp<memref::LoadOp>();
    if (init != load || !load->hasOneUse() ||
        !rows.getResult(k).hasOneUse())
      return std::nullopt;
    auto store =
        dyn_cast<memref::StoreOp>(*rows.getResult(k).getUsers().begin());
    if (!store || store.getMemRef() != load.getMemRef() ||
        store.getIndices() != load.getIndices() ||
        moving.contains(load.getMemRef()) ||
        llvm::any_of(load.getIndices(),
                     [&](Value i) { return moving.contains(i); }))
      return std::nullopt;
    match.results[k] = store;
    roots.push_back(rootBuffer(load.getMemRef()));
  }
  WalkResult touched = rows.getBody()->walk([&](Operation *op) {
    for (Value operand : op->getOperands())
      if (isa<BaseMemRefType>(operand.getType()) &&
          llvm::is_contained(roots, rootBuffer(operand)))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (touched.wasInterrupted())
    return std::nullopt;
  // The outer loop's other ops are pure (soleEffectfulOp).
  return match;
}

/// Rewrites a matched nest (see collapseOuterReductionLoops).
void collapseOuterReduction(const OuterReduction &match) {
  scf::ForOp outer = match.outer, rows = match.rows;
  scf::ParallelOp columns = match.columns;
  Value n = outer.getInductionVar();
  OpBuilder b(outer);
  Location loc = rows.getLoc();
  Value outerCount = tripCount(b, loc, outer.getLowerBound(),
                               outer.getUpperBound(), outer.getStep());
  Value rowCount = tripCount(b, loc, rows.getLowerBound(),
                             rows.getUpperBound(), rows.getStep());
  Value total = b.createOrFold<arith::MulIOp>(loc, outerCount, rowCount);
  auto collapsed =
      scf::ParallelOp::create(b, loc, columns.getLowerBound(),
                              columns.getUpperBound(), columns.getStep());
  OpBuilder cb = OpBuilder::atBlockBegin(collapsed.getBody());
  IRMapping before;
  before.map(columns.getInductionVars(), collapsed.getInductionVars());
  // What the accumulators' elements need, cloned ahead of the loop (pure
  // ops that do not move with %n).
  auto pureOps = [&]() {
    SmallVector<Operation *> ops;
    for (Operation &op : outer.getBody()->without_terminator())
      if (&op != columns.getOperation())
        ops.push_back(&op);
    for (Operation &op : columns.getBody()->without_terminator())
      if (isPure(op))
        ops.push_back(&op);
    return ops;
  }();
  for (Operation *op : pureOps)
    if (llvm::none_of(op->getResults(),
                      [&](Value r) { return match.moving.contains(r); }))
      cb.clone(*op, before);
  SmallVector<Value> inits;
  for (memref::LoadOp load : match.inits)
    inits.push_back(cb.clone(*load, before)->getResult(0));
  Value zero = arith::ConstantIndexOp::create(cb, loc, 0);
  Value one = arith::ConstantIndexOp::create(cb, loc, 1);
  auto loop = scf::ForOp::create(
      cb, loc, zero, total, one, inits,
      [&](OpBuilder &fb, Location floc, Value k, ValueRange args) {
        // Iteration k is (%n, %hw) = (k / rows, k % rows): the order of
        // the original loops, so the same sequence of combines.
        SmallVector<Value> ivs = delinearize(
            fb, floc, k, {outerCount, rowCount},
            {outer.getLowerBound(), rows.getLowerBound()},
            {outer.getStep(), rows.getStep()});
        IRMapping inside = before;
        inside.map(n, ivs[0]);
        inside.map(rows.getInductionVar(), ivs[1]);
        inside.map(rows.getRegionIterArgs(), args);
        for (Operation *op : pureOps)
          fb.clone(*op, inside);
        for (Operation &op : rows.getBody()->getOperations())
          fb.clone(op, inside);
      });
  for (auto [k, store] : llvm::enumerate(match.results)) {
    IRMapping after = before;
    after.map(rows.getResult(k), loop.getResult(k));
    cb.clone(*store, after);
  }
  outer.erase();
}

} // namespace

unsigned collapseOuterReductionLoops(func::FuncOp func) {
  SmallVector<OuterReduction> matches;
  for (Block &block : func.getBody())
    for (auto outer : block.getOps<scf::ForOp>())
      if (auto match = matchOuterReduction(outer))
        matches.push_back(*match);
  for (const OuterReduction &match : matches)
    collapseOuterReduction(match);
  return matches.size();
}

scf::ForOp splittableColumnLoop(scf::ParallelOp nest) {
  for (auto [lb, step] : llvm::zip(nest.getLowerBound(), nest.getStep()))
    if (getConstantIntValue(lb) != 0 || getConstantIntValue(step) != 1)
      return {};
  if (!llvm::all_of(nest.getUpperBound(),
                    [&](Value ub) { return definedOutside(ub, nest); }))
    return {};
  auto loop = onlyRegionOp<scf::ForOp>(*nest.getBody());
  if (!loop || loop.getNumResults() == 0 ||
      !definedOutside(loop.getLowerBound(), nest) ||
      !definedOutside(loop.getUpperBound(), nest) ||
      !definedOutside(loop.getStep(), nest))
    return {};
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (unsigned k = 0; k < loop.getNumResults(); ++k) {
    // carryAccumulators' form: loaded before, stored after, combined once.
    auto init = loop.getInitArgs()[k].getDefiningOp<memref::LoadOp>();
    Value result = loop.getResult(k);
    Operation *combine = yield.getOperand(k).getDefiningOp();
    if (!init || init->getBlock() != nest.getBody() || !init->hasOneUse() ||
        !result.hasOneUse() ||
        !isa<memref::StoreOp>(*result.getUsers().begin()) ||
        (*result.getUsers().begin())->getBlock() != nest.getBody() ||
        !combine || !reductionIdentity(combine))
      return {};
  }
  return loop;
}

Value columnParts(OpBuilder &b, Location loc, scf::ParallelOp nest,
                  scf::ForOp loop, int64_t threads) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value columns = one;
  for (Value ub : nest.getUpperBound())
    columns = b.createOrFold<arith::MulIOp>(loc, columns, ub);
  columns = b.createOrFold<arith::MaxSIOp>(loc, columns, one);
  Value byThreads = b.createOrFold<arith::CeilDivUIOp>(
      loc, arith::ConstantIndexOp::create(b, loc, threads), columns);
  Value rows = tripCount(b, loc, loop.getLowerBound(), loop.getUpperBound(),
                         loop.getStep());
  Value byRows = b.createOrFold<arith::CeilDivUIOp>(
      loc, rows, arith::ConstantIndexOp::create(b, loc, kMinRowsPerPart));
  Value parts = b.createOrFold<arith::MinUIOp>(loc, byThreads, byRows);
  return b.createOrFold<arith::MinUIOp>(
      loc, parts, arith::ConstantIndexOp::create(b, loc, kMaxColumnParts));
}

std::pair<scf::ParallelOp, scf::ParallelOp>
splitColumnNest(OpBuilder &b, scf::ParallelOp nest, scf::ForOp loop,
                Value parts) {
  Location loc = nest.getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound(),
        step = loop.getStep();
  Value rows = tripCount(b, loc, lb, ub, step);
  Value partRows = b.createOrFold<arith::CeilDivUIOp>(loc, rows, parts);
  Value partSpan = b.createOrFold<arith::MulIOp>(loc, partRows, step);
  SmallVector<Value> partialSizes{parts};
  llvm::append_range(partialSizes, nest.getUpperBound());
  SmallVector<int64_t> shape(partialSizes.size(), ShapedType::kDynamic);
  SmallVector<Value> partials;
  for (Type type : loop.getResultTypes())
    partials.push_back(memref::AllocOp::create(
        b, loc, MemRefType::get(shape, type), partialSizes));
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  auto isInit = [&](Operation &op) {
    return llvm::any_of(loop.getInitArgs(), [&](Value init) {
      return init.getDefiningOp() == &op;
    });
  };

  // Part p of every column: rows [p * partRows, (p + 1) * partRows) from
  // the identities, into partials[k][p, column].
  SmallVector<Value> lbs(partialSizes.size(), zero),
      steps(partialSizes.size(), one);
  auto partial = scf::ParallelOp::create(b, loc, lbs, partialSizes, steps);
  {
    OpBuilder pb = OpBuilder::atBlockBegin(partial.getBody());
    SmallVector<Value> ivs(partial.getInductionVars());
    IRMapping mapping;
    mapping.map(nest.getInductionVars(), ArrayRef<Value>(ivs).drop_front());
    for (Operation &op : nest.getBody()->without_terminator()) {
      if (isInit(op))
        continue;
      if (auto store = dyn_cast<memref::StoreOp>(op);
          store && store.getValue().getDefiningOp() == loop.getOperation()) {
        unsigned k = cast<OpResult>(store.getValue()).getResultNumber();
        memref::StoreOp::create(pb, store.getLoc(),
                                mapping.lookup(store.getValue()), partials[k],
                                ivs);
        continue;
      }
      if (&op != loop.getOperation()) {
        pb.clone(op, mapping);
        continue;
      }
      Value start = pb.createOrFold<arith::AddIOp>(
          loc, lb, pb.createOrFold<arith::MulIOp>(loc, ivs[0], partSpan));
      Value end = pb.createOrFold<arith::MinSIOp>(
          loc, ub, pb.createOrFold<arith::AddIOp>(loc, start, partSpan));
      SmallVector<Value> identities;
      for (Value yielded : yield.getOperands())
        identities.push_back(arith::ConstantOp::create(
            pb, loc, reductionIdentity(yielded.getDefiningOp())));
      auto part = scf::ForOp::create(
          pb, loc, start, end, step, identities,
          [&](OpBuilder &fb, Location, Value iv, ValueRange args) {
            IRMapping inner = mapping;
            inner.map(loop.getInductionVar(), iv);
            inner.map(loop.getRegionIterArgs(), args);
            for (Operation &bodyOp : loop.getBody()->getOperations())
              fb.clone(bodyOp, inner);
          });
      mapping.map(loop.getResults(), part.getResults());
    }
  }

  // Each column's initial value combined with its parts, in order.
  auto combine = scf::ParallelOp::create(b, loc, nest.getLowerBound(),
                                         nest.getUpperBound(), nest.getStep());
  {
    OpBuilder cb = OpBuilder::atBlockBegin(combine.getBody());
    IRMapping mapping;
    mapping.map(nest.getInductionVars(), combine.getInductionVars());
    for (Operation &op : nest.getBody()->without_terminator()) {
      if (&op != loop.getOperation()) {
        cb.clone(op, mapping);
        continue;
      }
      SmallVector<Value> inits;
      for (Value init : loop.getInitArgs())
        inits.push_back(mapping.lookup(init));
      auto gather = scf::ForOp::create(
          cb, loc, zero, parts, one, inits,
          [&](OpBuilder &fb, Location floc, Value p, ValueRange args) {
            SmallVector<Value> combined;
            for (auto [k, yielded] : llvm::enumerate(yield.getOperands())) {
              Operation *step = yielded.getDefiningOp();
              SmallVector<Value> indices{p};
              llvm::append_range(indices, combine.getInductionVars());
              Value part =
                  memref::LoadOp::create(fb, floc, partials[k], indices);
              Value carried = loop.getRegionIterArgs()[k];
              IRMapping operands;
              operands.map(carried, args[k]);
              operands.map(step->getOperand(0) == carried
                               ? step->getOperand(1)
                               : step->getOperand(0),
                           part);
              combined.push_back(fb.clone(*step, operands)->getResult(0));
            }
            scf::YieldOp::create(fb, floc, combined);
          });
      mapping.map(loop.getResults(), gather.getResults());
    }
  }
  for (Value buffer : partials)
    memref::DeallocOp::create(b, loc, buffer);
  return {partial, combine};
}

} // namespace disc::cuda
