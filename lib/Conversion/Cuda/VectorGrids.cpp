//===- VectorGrids.cpp - the 4-wide variant of elementwise grids ----------===//
#include "VectorGrids.h"

#include "GpuLoopUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace disc::cuda {

namespace {

bool vectorizable(Operation *op, scf::ParallelOp loop) {
  Value buffer = accessedMemref(op);
  auto type = dyn_cast<MemRefType>(buffer.getType());
  if (!type || !type.getLayout().isIdentity() || type.getRank() < 1 ||
      vectorElementBytes(type) == 0 || !definedOutside(buffer, loop))
    return false;
  ValueRange indices = accessedIndices(op);
  Value inner = loop.getInductionVars().back();
  if (indices.back() != inner)
    return false;
  for (Value index : indices.drop_back())
    if (index == inner ||
        !(definedOutside(index, loop) ||
          llvm::is_contained(loop.getInductionVars(), index)))
      return false;
  return true;
}

} // namespace

int64_t vectorElementBytes(MemRefType type) {
  Type element = type.getElementType();
  if (!element.isIntOrFloat())
    return 0;
  unsigned bits = element.getIntOrFloatBitWidth();
  return bits == 8 || bits == 16 || bits == 32 ? bits / 8 : 0;
}

std::optional<VectorPlan> planVectorGrid(scf::ParallelOp loop,
                                         bool allowLinear,
                                         std::string *whyNot) {
  auto none = [&](const char *reason) -> std::optional<VectorPlan> {
    if (whyNot)
      *whyNot = reason;
    return std::nullopt;
  };
  Block *body = loop.getBody();
  if (loop.getNumResults() != 0)
    return none("it reduces");
  if (!isConstantIntValue(loop.getLowerBound().back(), 0) ||
      !isConstantIntValue(loop.getStep().back(), 1))
    return none("its innermost dim does not start at 0 with step 1");
  std::optional<int64_t> innerExtent =
      getConstantIntValue(loop.getUpperBound().back());
  const bool innerMultiple = innerExtent && *innerExtent % kVectorWidth == 0;
  // Linear lanes need a nest of two or more dims, each from 0 in steps of
  // 1, so that iteration (i0, ..., in) is the nest's linear iteration.
  const bool linearPossible =
      allowLinear && loop.getNumLoops() >= 2 &&
      llvm::all_of(loop.getLowerBound(),
                   [](Value lb) { return isConstantIntValue(lb, 0); }) &&
      llvm::all_of(loop.getStep(),
                   [](Value step) { return isConstantIntValue(step, 1); });
  if (innerExtent && !innerMultiple && !linearPossible)
    return none("its static innermost extent is not a multiple of 4 and "
                "it cannot have linear lanes");
  llvm::DenseSet<Value> read, written;
  for (Operation &op : body->without_terminator()) {
    if (op.getNumRegions() != 0)
      return none("its body has an op with regions"); // straight-line only
    if (auto load = dyn_cast<memref::LoadOp>(op))
      read.insert(rootBuffer(load.getMemRef()));
    else if (auto store = dyn_cast<memref::StoreOp>(op))
      written.insert(rootBuffer(store.getMemRef()));
    else if (!isMemoryEffectFree(&op)) // atomics, copies, calls: kept in order
      return none("its body has an op with memory effects other than loads "
                  "and stores");
  }
  // An access at exactly the nest's induction variables, in order, to a
  // buffer of the nest's rank.
  auto atLinearIteration = [&](Operation *op) {
    return linearPossible &&
           llvm::equal(accessedIndices(op), loop.getInductionVars());
  };
  VectorPlan plan;
  bool allLinear = true;
  for (Operation &op : body->without_terminator()) {
    if (!isa<memref::LoadOp, memref::StoreOp>(op) || !vectorizable(&op, loop))
      continue;
    Value root = rootBuffer(accessedMemref(&op));
    if (read.contains(root) && written.contains(root))
      continue;
    plan.accesses.push_back(&op);
    allLinear = allLinear && atLinearIteration(&op);
  }
  // Linear lanes where the innermost extent is known not to suit rows of
  // four (its contiguous accesses vectorised, the others once per lane),
  // or is not known and every planned access is contiguous across rows
  // too (a row-broadcast operand, which only rows of four vectorise,
  // keeps the row variant).
  if (innerExtent && !innerMultiple) {
    llvm::erase_if(plan.accesses,
                   [&](Operation *op) { return !atLinearIteration(op); });
    plan.linear = true;
  } else if (!innerExtent && linearPossible && allLinear) {
    plan.linear = true;
  }
  if (plan.accesses.empty())
    return none("no load or store of it can be a vector access");
  llvm::SetVector<Value> buffers;
  for (Operation *op : plan.accesses)
    buffers.insert(accessedMemref(op));
  plan.buffers.assign(buffers.begin(), buffers.end());
  return plan;
}

Value vectorAccessCondition(OpBuilder &b, Location loc, ValueRange counts,
                            ValueRange buffers, bool rows) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value width = arith::ConstantIndexOp::create(b, loc, kVectorWidth);
  auto multipleOf = [&](Value value, Value of) {
    Value rem = b.createOrFold<arith::RemUIOp>(loc, value, of);
    return b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, rem,
                                         zero);
  };
  Value ok = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  for (Value count : counts)
    ok = b.createOrFold<arith::AndIOp>(loc, ok, multipleOf(count, width));
  for (Value buffer : buffers) {
    auto type = cast<MemRefType>(buffer.getType());
    Value address =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
    Value bytes = arith::ConstantIndexOp::create(
        b, loc, kVectorWidth * vectorElementBytes(type));
    ok = b.createOrFold<arith::AndIOp>(loc, ok, multipleOf(address, bytes));
    if (rows && type.getRank() > 1) {
      Value last = b.createOrFold<memref::DimOp>(loc, buffer,
                                                 type.getRank() - 1);
      ok = b.createOrFold<arith::AndIOp>(loc, ok, multipleOf(last, width));
    }
  }
  return ok;
}

Value vectorGridCondition(OpBuilder &b, Location loc, ValueRange tripCounts,
                          Value total, const VectorPlan &plan) {
  if (!plan.linear)
    return vectorAccessCondition(b, loc, tripCounts.back(), plan.buffers);
  // Linear lanes: the total a multiple of 4, each buffer aligned and
  // shaped as the nest past its first dim (so that the nest's linear
  // iteration is the buffer's element offset).
  Value ok =
      vectorAccessCondition(b, loc, total, plan.buffers, /*rows=*/false);
  for (Value buffer : plan.buffers) {
    for (auto [dim, count] : llvm::enumerate(tripCounts))
      if (dim > 0)
        ok = b.createOrFold<arith::AndIOp>(
            loc, ok,
            b.createOrFold<arith::CmpIOp>(
                loc, arith::CmpIPredicate::eq,
                b.createOrFold<memref::DimOp>(loc, buffer, dim), count));
  }
  return ok;
}

void cloneBodyVectorized(OpBuilder &b, Location loc, scf::ParallelOp loop,
                         ValueRange ivs, const VectorPlan &plan) {
  // Iteration k: the innermost induction variable ivs.back() + k.
  SmallVector<IRMapping, kVectorWidth> mappings(kVectorWidth);
  for (int64_t k = 0; k < kVectorWidth; ++k) {
    SmallVector<Value> ivsK(ivs);
    if (k > 0)
      ivsK.back() = arith::AddIOp::create(
          b, loc, ivs.back(), arith::ConstantIndexOp::create(b, loc, k));
    mappings[k].map(loop.getInductionVars(), ivsK);
  }
  llvm::DenseSet<Operation *> planned(plan.accesses.begin(),
                                      plan.accesses.end());
  cloneLanesVectorized(b, loc, *loop.getBody(), mappings, planned);
}

llvm::DenseMap<Value, Value> linearViews(OpBuilder &b, Location loc,
                                         const VectorPlan &plan) {
  llvm::DenseMap<Value, Value> views;
  for (Value buffer : plan.buffers) {
    auto type = cast<MemRefType>(buffer.getType());
    ReassociationIndices all =
        llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
    views[buffer] = memref::CollapseShapeOp::create(
        b, loc, buffer, ArrayRef<ReassociationIndices>{all});
  }
  return views;
}

void cloneBodyLinearVectorized(OpBuilder &b, Location loc, scf::ParallelOp loop,
                               Value first, ValueRange ivs,
                               ValueRange tripCounts, const VectorPlan &plan,
                               const llvm::DenseMap<Value, Value> &views) {
  assert(plan.linear && "a plan for linear lanes");
  // Lane k's iteration is lane k-1's plus one: its innermost variable
  // bumped, a dim that reaches its trip count back to 0 and the next one
  // out bumped (no division; the last lane stays below the total).
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<IRMapping, kVectorWidth> mappings(kVectorWidth);
  SmallVector<Value> lane(ivs);
  for (int64_t k = 0; k < kVectorWidth; ++k) {
    if (k > 0) {
      Value bump = one;
      for (size_t d = lane.size(); d-- > 0;) {
        Value bumped = arith::AddIOp::create(b, loc, lane[d], bump);
        if (d == 0) {
          lane[d] = bumped;
          break;
        }
        Value wraps = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            bumped, tripCounts[d]);
        lane[d] = arith::SelectOp::create(b, loc, wraps, zero, bumped);
        bump = arith::SelectOp::create(b, loc, wraps, one, zero);
      }
    }
    mappings[k].map(loop.getInductionVars(), lane);
  }
  llvm::DenseSet<Operation *> planned(plan.accesses.begin(),
                                      plan.accesses.end());
  cloneLanesVectorized(
      b, loc, *loop.getBody(), mappings, planned,
      [&](Operation *op) {
        return std::make_pair(views.lookup(accessedMemref(op)),
                              SmallVector<Value>{first});
      });
}

void cloneLanesVectorized(OpBuilder &b, Location loc, Block &body,
                          MutableArrayRef<IRMapping> mappings,
                          const llvm::DenseSet<Operation *> &planned,
                          VectorPlace place) {
  assert(mappings.size() == kVectorWidth && "one mapping per lane");
  for (Operation &op : body.without_terminator()) {
    SmallVector<Operation *, kVectorWidth> clones;
    for (IRMapping &mapping : mappings)
      clones.push_back(b.clone(op, mapping));
    if (!planned.contains(&op))
      continue;
    auto type = cast<MemRefType>(accessedMemref(&op).getType());
    auto vectorType = VectorType::get({kVectorWidth}, type.getElementType());
    // The caller checked the address and row length on the host
    // (vectorAccessCondition): the vector's size in bytes is its alignment.
    llvm::MaybeAlign alignment(kVectorWidth * vectorElementBytes(type));
    Operation *first = clones.front();
    Value base = accessedMemref(first);
    SmallVector<Value> indices(accessedIndices(first));
    if (place)
      std::tie(base, indices) = place(&op);
    OpBuilder::InsertionGuard keep(b);
    if (isa<memref::LoadOp>(first)) {
      b.setInsertionPoint(first);
      Value vector =
          vector::LoadOp::create(b, loc, vectorType, base, indices,
                                 /*nontemporal=*/false, alignment);
      for (int64_t k = 0; k < kVectorWidth; ++k) {
        Value lane = vector::ExtractOp::create(b, loc, vector, k);
        clones[k]->getResult(0).replaceAllUsesWith(lane);
        mappings[k].map(op.getResult(0), lane); // for the ops cloned next
      }
    } else {
      // After the last clone: every lane's value is computed there.
      b.setInsertionPointAfter(clones.back());
      SmallVector<Value> lanes;
      for (Operation *clone : clones)
        lanes.push_back(cast<memref::StoreOp>(clone).getValueToStore());
      Value vector = vector::FromElementsOp::create(b, loc, vectorType, lanes);
      vector::StoreOp::create(b, loc, vector, base, indices,
                              /*nontemporal=*/false, alignment);
    }
    for (Operation *clone : clones)
      clone->erase();
  }
}

} // namespace disc::cuda
