//===- StackLoopTemporaries.cpp - small in-loop buffers on the stack ------===//
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace disc {
#define GEN_PASS_DEF_DISCSTACKLOOPTEMPORARIES
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

constexpr int64_t kMaxStackBytes = 256;

/// Whether every use of `buffer` and of its views stays in `region` and
/// none hands it to a call or a return.
bool staysIn(Value buffer, Region *region) {
  SmallVector<Value> worklist{buffer};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (!region->isAncestor(user->getParentRegion()) ||
          user->hasTrait<OpTrait::ReturnLike>() || isa<CallOpInterface>(user))
        return false;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user))
        if (view.getViewSource() == value)
          worklist.append(user->result_begin(), user->result_end());
    }
  }
  return true;
}

struct StackLoopTemporariesPass
    : public disc::impl::DiscStackLoopTemporariesBase<
          StackLoopTemporariesPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocOp> candidates;
    getOperation().walk([&](memref::AllocOp alloc) {
      MemRefType type = alloc.getType();
      if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
          !alloc.getOperands().empty() ||
          !type.getElementType().isIntOrFloat() ||
          type.getNumElements() * type.getElementTypeBitWidth() >
              kMaxStackBytes * 8)
        return;
      if (!alloc->getParentOfType<LoopLikeOpInterface>())
        return;
      if (!staysIn(alloc.getResult(), alloc->getParentRegion()))
        return;
      candidates.push_back(alloc);
    });
    for (memref::AllocOp alloc : candidates) {
      OpBuilder b(alloc);
      auto alloca = memref::AllocaOp::create(b, alloc.getLoc(), alloc.getType(),
                                             alloc.getAlignmentAttr());
      alloc.replaceAllUsesWith(alloca.getResult());
      alloc.erase();
    }
  }
};

} // namespace
