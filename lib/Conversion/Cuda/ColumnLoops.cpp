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
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

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

} // namespace disc::cuda
