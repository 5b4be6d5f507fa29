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

std::optional<VectorPlan> planVectorGrid(scf::ParallelOp loop) {
  Block *body = loop.getBody();
  if (loop.getNumResults() != 0 ||
      !isConstantIntValue(loop.getLowerBound().back(), 0) ||
      !isConstantIntValue(loop.getStep().back(), 1))
    return std::nullopt;
  if (std::optional<int64_t> extent =
          getConstantIntValue(loop.getUpperBound().back());
      extent && *extent % kVectorWidth != 0)
    return std::nullopt;
  llvm::DenseSet<Value> read, written;
  for (Operation &op : body->without_terminator()) {
    if (op.getNumRegions() != 0)
      return std::nullopt; // straight-line bodies only
    if (auto load = dyn_cast<memref::LoadOp>(op))
      read.insert(rootBuffer(load.getMemRef()));
    else if (auto store = dyn_cast<memref::StoreOp>(op))
      written.insert(rootBuffer(store.getMemRef()));
    else if (!isMemoryEffectFree(&op))
      return std::nullopt; // atomics, copies, calls: not reordered
  }
  VectorPlan plan;
  llvm::SetVector<Value> buffers;
  for (Operation &op : body->without_terminator()) {
    if (!isa<memref::LoadOp, memref::StoreOp>(op) || !vectorizable(&op, loop))
      continue;
    Value root = rootBuffer(accessedMemref(&op));
    if (read.contains(root) && written.contains(root))
      continue;
    plan.accesses.push_back(&op);
    buffers.insert(accessedMemref(&op));
  }
  if (plan.accesses.empty())
    return std::nullopt;
  plan.buffers.assign(buffers.begin(), buffers.end());
  return plan;
}

Value vectorAccessCondition(OpBuilder &b, Location loc, ValueRange counts,
                            ValueRange buffers) {
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
    if (type.getRank() > 1) {
      Value last = b.createOrFold<memref::DimOp>(loc, buffer,
                                                 type.getRank() - 1);
      ok = b.createOrFold<arith::AndIOp>(loc, ok, multipleOf(last, width));
    }
  }
  return ok;
}

Value vectorGridCondition(OpBuilder &b, Location loc, Value innerCount,
                          const VectorPlan &plan) {
  return vectorAccessCondition(b, loc, innerCount, plan.buffers);
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

void cloneLanesVectorized(OpBuilder &b, Location loc, Block &body,
                          MutableArrayRef<IRMapping> mappings,
                          const llvm::DenseSet<Operation *> &planned) {
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
    OpBuilder::InsertionGuard keep(b);
    if (auto load = dyn_cast<memref::LoadOp>(first)) {
      b.setInsertionPoint(first);
      Value vector = vector::LoadOp::create(
          b, loc, vectorType, load.getMemRef(), load.getIndices(),
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
      auto store = cast<memref::StoreOp>(first);
      vector::StoreOp::create(b, loc, vector, store.getMemRef(),
                              store.getIndices(), /*nontemporal=*/false,
                              alignment);
    }
    for (Operation *clone : clones)
      clone->erase();
  }
}

} // namespace disc::cuda
