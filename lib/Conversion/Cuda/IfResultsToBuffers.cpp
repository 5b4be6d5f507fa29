//===- IfResultsToBuffers.cpp - host ifs write buffers, not yield them ----===//
//
// See DiscIfResultsToBuffers in include/disc/Conversion/Cuda/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "disc/Conversion/Cuda/Passes.h"

#include "GpuLoopUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace disc {
#define GEN_PASS_DEF_DISCIFRESULTSTOBUFFERS
#include "disc/Conversion/Cuda/Passes.h.inc"
} // namespace disc

using namespace mlir;
using disc::cuda::definedOutside;

namespace {

/// Whether `size` is dim `d` of `buffer`.
bool isDimOf(Value size, Value buffer, int64_t d) {
  auto dim = size.getDefiningOp<memref::DimOp>();
  return dim && dim.getSource() == buffer && dim.getConstantIndex() == d;
}

/// Whether two sizes are provably equal: the same value, or the same dim
/// of one buffer.
bool sameSize(Value a, Value b) {
  if (a == b)
    return true;
  auto dim = a.getDefiningOp<memref::DimOp>();
  std::optional<int64_t> d = dim ? dim.getConstantIndex() : std::nullopt;
  return d && isDimOf(b, dim.getSource(), *d);
}

/// The allocation `block` yields as `value` when the buffer may become the
/// result's: made in `block`, of the result's type, and yielded once.
memref::AllocOp ownableAlloc(Block *block, Value value, MemRefType type) {
  auto alloc = value.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != block || alloc.getType() != type ||
      !alloc.getSymbolOperands().empty() ||
      llvm::count(block->getTerminator()->getOperands(), value) != 1)
    return nullptr;
  return alloc;
}

/// Allocations a branch yields, with the result each becomes.
using OwnedAllocs = SmallVectorImpl<std::pair<memref::AllocOp, unsigned>>;

/// The buffer for result `index` of `ifOp` that each branch can write,
/// allocated before the if; `owned` gets the allocations the branches
/// yield as that result, with the index (the buffer replaces them). A
/// dynamic size is that of an allocation a branch yields (a size defined
/// before the if) or of a buffer defined before the if that a branch
/// yields, and must be provably the same for both branches. Null when the
/// result has a layout or its sizes are not known that way. `created` gets
/// the ops made (the caller erases them if the if stays as it is).
Value resultBuffer(scf::IfOp ifOp, unsigned index, OwnedAllocs &owned,
                   SmallVectorImpl<Operation *> &created) {
  auto type = dyn_cast<MemRefType>(ifOp.getResult(index).getType());
  if (!type || !type.getLayout().isIdentity())
    return nullptr;
  // Per branch: the allocation it yields, or the buffer from before the if
  // (else null: a static type only).
  SmallVector<memref::AllocOp, 2> allocs;
  SmallVector<Value, 2> outside;
  for (Block *block : {ifOp.thenBlock(), ifOp.elseBlock()}) {
    Value yielded = block->getTerminator()->getOperand(index);
    allocs.push_back(ownableAlloc(block, yielded, type));
    outside.push_back(definedOutside(yielded, ifOp) ? yielded : nullptr);
  }
  OpBuilder b(ifOp);
  SmallVector<Value> sizes;
  if (!type.hasStaticShape()) {
    for (auto [alloc, value] : llvm::zip(allocs, outside)) {
      if (alloc && llvm::all_of(alloc.getDynamicSizes(), [&](Value size) {
            return definedOutside(size, ifOp);
          })) {
        llvm::append_range(sizes, alloc.getDynamicSizes());
        break;
      }
      if (value) {
        for (int64_t d = 0; d < type.getRank(); ++d)
          if (type.isDynamicDim(d)) {
            auto index = arith::ConstantIndexOp::create(b, ifOp.getLoc(), d);
            auto dim = memref::DimOp::create(b, ifOp.getLoc(), value, index);
            created.append({index, dim});
            sizes.push_back(dim);
          }
        break;
      }
    }
    // Each branch's sizes must be provably those chosen.
    auto known = [&](memref::AllocOp alloc, Value value) {
      unsigned k = 0;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        if (!type.isDynamicDim(d))
          continue;
        Value size = sizes[k];
        if (!(alloc ? sameSize(alloc.getDynamicSizes()[k], size)
                    : value && isDimOf(size, value, d)))
          return false;
        ++k;
      }
      return true;
    };
    if (sizes.empty() || !known(allocs[0], outside[0]) ||
        !known(allocs[1], outside[1]))
      return nullptr;
  }
  for (memref::AllocOp alloc : allocs)
    if (alloc)
      owned.push_back({alloc, index});
  auto buffer = memref::AllocOp::create(b, ifOp.getLoc(), type, sizes,
                                        b.getI64IntegerAttr(64));
  created.push_back(buffer);
  return buffer;
}

/// Whether every allocation in `ifOp` is one a branch yields as a buffer
/// result, of that result's type (the only ones that can become buffers
/// made before the if; any other would allocate inside a kernel).
bool allocatesOnlyResults(scf::IfOp ifOp) {
  SmallPtrSet<Operation *, 4> results;
  for (Block *block : {ifOp.thenBlock(), ifOp.elseBlock()})
    for (auto [value, result] : llvm::zip(
             block->getTerminator()->getOperands(), ifOp.getResults()))
      if (auto type = dyn_cast<MemRefType>(result.getType()))
        if (memref::AllocOp alloc = ownableAlloc(block, value, type))
          results.insert(alloc);
  return !ifOp->walk([&](Operation *op) {
                bool allocates = isa<memref::AllocOp, memref::AllocaOp>(op);
                return allocates && !results.contains(op)
                           ? WalkResult::interrupt()
                           : WalkResult::advance();
              }).wasInterrupted();
}

/// Rewrites `ifOp` when every buffer result gets a buffer and the
/// branches allocate nothing else.
void rewrite(scf::IfOp ifOp) {
  if (!allocatesOnlyResults(ifOp))
    return;
  SmallVector<Value> buffers(ifOp.getNumResults());
  SmallVector<std::pair<memref::AllocOp, unsigned>> owned;
  SmallVector<Operation *> created;
  for (unsigned i = 0; i < ifOp.getNumResults(); ++i) {
    if (!isa<MemRefType>(ifOp.getResult(i).getType()))
      continue;
    buffers[i] = resultBuffer(ifOp, i, owned, created);
    if (!buffers[i]) {
      for (Operation *op : llvm::reverse(created))
        op->erase();
      return;
    }
  }
  auto isOwned = [&](Operation *op) {
    return llvm::any_of(
        owned, [&](auto entry) { return entry.first.getOperation() == op; });
  };
  // Each branch writes the buffers and yields the other results.
  SmallVector<Type> keptTypes;
  for (auto [i, result] : llvm::enumerate(ifOp.getResults()))
    if (!buffers[i])
      keptTypes.push_back(result.getType());
  for (Block *block : {ifOp.thenBlock(), ifOp.elseBlock()}) {
    Operation *yield = block->getTerminator();
    OpBuilder b(yield);
    SmallVector<Value> kept;
    for (auto [i, value] : llvm::enumerate(yield->getOperands())) {
      if (!buffers[i])
        kept.push_back(value);
      else if (!isOwned(value.getDefiningOp()))
        memref::CopyOp::create(b, yield->getLoc(), value, buffers[i]);
    }
    scf::YieldOp::create(b, yield->getLoc(), kept);
    yield->erase();
  }
  for (auto [alloc, index] : owned) {
    alloc.getResult().replaceAllUsesWith(buffers[index]);
    alloc.erase();
  }
  OpBuilder b(ifOp);
  auto rewritten =
      scf::IfOp::create(b, ifOp.getLoc(), keptTypes, ifOp.getCondition(),
                        /*withElseRegion=*/true);
  rewritten.getThenRegion().takeBody(ifOp.getThenRegion());
  rewritten.getElseRegion().takeBody(ifOp.getElseRegion());
  unsigned next = 0;
  for (auto [i, result] : llvm::enumerate(ifOp.getResults()))
    result.replaceAllUsesWith(buffers[i] ? buffers[i]
                                         : rewritten.getResult(next++));
  ifOp.erase();
}

struct IfResultsToBuffersPass
    : public disc::impl::DiscIfResultsToBuffersBase<IfResultsToBuffersPass> {
  void runOnOperation() override {
    if (getOperation().isExternal())
      return;
    SmallVector<scf::IfOp> candidates;
    for (Operation &op : getOperation().getBody().front())
      if (auto ifOp = dyn_cast<scf::IfOp>(op))
        if (ifOp.elseBlock() &&
            llvm::any_of(ifOp.getResultTypes(), llvm::IsaPred<MemRefType>))
          candidates.push_back(ifOp);
    for (scf::IfOp ifOp : candidates)
      rewrite(ifOp);
  }
};

} // namespace
