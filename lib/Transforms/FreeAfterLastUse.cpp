//===- FreeAfterLastUse.cpp - free buffers right after their last use -----===//
//
// Memory planning for dynamic shapes: each memref.alloc gets a
// memref.dealloc after its last use in the allocating block, so that the
// runtime's caching allocator can hand the block to a later allocation of
// the same call. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace disc {
#define GEN_PASS_DEF_DISCFREEAFTERLASTUSE
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

/// Whether an address taken from a buffer only feeds arithmetic and the
/// conditions computed from it (the vector grids' alignment check: address
/// % 16 == 0 picks the variant): nothing can read the buffer through it, so
/// the address does not keep the buffer alive.
bool addressOnlyTested(memref::ExtractAlignedPointerAsIndexOp address) {
  SmallVector<Value> values{address.getResult()};
  DenseSet<Value> seen;
  while (!values.empty()) {
    Value value = values.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    for (Operation *user : value.getUsers()) {
      if (isa<arith::ArithDialect>(user->getDialect())) {
        for (Value result : user->getResults())
          values.push_back(result);
        continue;
      }
      // A condition (scf.if, a branch, an assert) reads the test's result.
      if (!value.getType().isInteger(1))
        return false;
    }
  }
  return true;
}

/// The op in `block` after which `buffer` (an allocation in `block`) is dead;
/// failure when the buffer escapes the analysis (see Passes.td).
FailureOr<Operation *> findLastUse(Value buffer, Block *block) {
  Operation *last = buffer.getDefiningOp();
  SmallVector<Value> aliases{buffer};
  DenseSet<Value> seen{buffer};
  while (!aliases.empty()) {
    Value value = aliases.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (auto address = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(user))
        if (!addressOnlyTested(address))
          return failure();
      if (isa<memref::DeallocOp, UnrealizedConversionCastOp>(user) ||
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
