//===- FreeAfterLastUse.cpp - free buffers right after their last use -----===//
//
// Memory planning for dynamic shapes: each memref.alloc gets a
// memref.dealloc after its last use in the allocating block, so that the
// runtime's caching allocator can hand the block to a later allocation of
// the same call. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace disc {
#define GEN_PASS_DEF_DISCFREEAFTERLASTUSE
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

/// The op in `block` after which `buffer` (an allocation in `block`) is dead;
/// failure when the buffer escapes the analysis (see Passes.td).
FailureOr<Operation *> findLastUse(Value buffer, Block *block) {
  Operation *last = buffer.getDefiningOp();
  SmallVector<Value> aliases{buffer};
  DenseSet<Value> seen{buffer};
  while (!aliases.empty()) {
    Value value = aliases.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (isa<memref::DeallocOp, memref::ExtractAlignedPointerAsIndexOp,
              UnrealizedConversionCastOp>(user) ||
          user->hasTrait<OpTrait::IsTerminator>())
        return failure();
      for (Value result : user->getResults()) {
        if (isa<LLVM::LLVMPointerType>(result.getType()))
          return failure();
        if (isa<BaseMemRefType>(result.getType()) && seen.insert(result).second)
          aliases.push_back(result);
      }
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (!ancestor)
        return failure();
      if (last->isBeforeInBlock(ancestor))
        last = ancestor;
    }
  }
  return last;
}

struct FreeAfterLastUsePass
    : public disc::impl::DiscFreeAfterLastUseBase<FreeAfterLastUsePass> {
  void runOnOperation() override {
    SmallVector<std::pair<memref::AllocOp, Operation *>> frees;
    getOperation().walk([&](memref::AllocOp alloc) {
      FailureOr<Operation *> last =
          findLastUse(alloc.getResult(), alloc->getBlock());
      if (succeeded(last))
        frees.emplace_back(alloc, *last);
    });
    for (auto [alloc, last] : frees) {
      OpBuilder builder(last->getContext());
      builder.setInsertionPointAfter(last);
      memref::DeallocOp::create(builder, alloc.getLoc(), alloc.getResult());
    }
  }
};

} // namespace
