//===- ThreadScratchTemporaries.cpp - loop temporaries from thread scratch ===//
#include "LoopTemporaries.h"
#include "disc/Dialect/Disc/DiscDialect.h"
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace disc {
#define GEN_PASS_DEF_DISCTHREADSCRATCHTEMPORARIES
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

struct ThreadScratchTemporariesPass
    : public disc::impl::DiscThreadScratchTemporariesBase<
          ThreadScratchTemporariesPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocOp> candidates;
    getOperation().walk([&](memref::AllocOp alloc) {
      if (disc::isLoopTemporary(alloc))
        candidates.push_back(alloc);
    });
    // One slot per temporary of the function: two temporaries can be alive
    // at once (nested loops, two row buffers of one stitch kernel).
    int64_t slot = 0;
    for (memref::AllocOp alloc : candidates) {
      OpBuilder b(alloc);
      Location loc = alloc.getLoc();
      MemRefType type = alloc.getType();
      Value bytes = disc::loopTemporaryBytes(b, alloc);
      auto bufferType =
          MemRefType::get({ShapedType::kDynamic}, b.getIntegerType(8));
      Value buffer = disc::ThreadScratchOp::create(b, loc, bufferType, bytes,
                                                   b.getI64IntegerAttr(slot++));
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      auto view = memref::ViewOp::create(b, loc, type, buffer, zero,
                                         alloc.getDynamicSizes());
      alloc.replaceAllUsesWith(view.getResult());
      alloc.erase();
    }
  }
};

} // namespace
