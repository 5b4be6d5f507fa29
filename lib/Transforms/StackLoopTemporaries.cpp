//===- StackLoopTemporaries.cpp - small in-loop buffers on the stack ------===//
#include "LoopTemporaries.h"
#include "disc/Transforms/Passes.h"

namespace disc {
#define GEN_PASS_DEF_DISCSTACKLOOPTEMPORARIES
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

constexpr int64_t kMaxStackBytes = 256;

struct StackLoopTemporariesPass
    : public disc::impl::DiscStackLoopTemporariesBase<
          StackLoopTemporariesPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocOp> candidates;
    getOperation().walk([&](memref::AllocOp alloc) {
      MemRefType type = alloc.getType();
      // isLoopTemporary first: it admits only int and float elements,
      // whose bit width is defined (an index buffer, a shape built for a
      // library call, has none).
      if (disc::isLoopTemporary(alloc) && type.hasStaticShape() &&
          type.getNumElements() * type.getElementTypeBitWidth() <=
              kMaxStackBytes * 8)
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
