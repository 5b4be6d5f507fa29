//===- HoistStaticAllocas.cpp - fixed-size stack buffers to the entry -----===//
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace disc {
#define GEN_PASS_DEF_DISCHOISTSTATICALLOCAS
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

struct HoistStaticAllocasPass
    : public disc::impl::DiscHoistStaticAllocasBase<HoistStaticAllocasPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &entry = func.front();
    SmallVector<memref::AllocaOp> allocas;
    func.walk([&](memref::AllocaOp alloca) {
      if (alloca->getBlock() != &entry && alloca.getType().hasStaticShape() &&
          alloca.getOperands().empty())
        allocas.push_back(alloca);
    });
    for (memref::AllocaOp alloca : allocas)
      alloca->moveBefore(&entry, entry.begin());
  }
};

} // namespace
