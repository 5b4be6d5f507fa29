//===- AddRalContext.cpp - the runtime context argument -------------------===//
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace disc {
#define GEN_PASS_DEF_DISCADDRALCONTEXT
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {
struct AddRalContextPass
    : public disc::impl::DiscAddRalContextBase<AddRalContextPass> {
  void runOnOperation() override {
    bool found = false;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func->hasAttr(disc::kEntryAttr))
        continue;
      found = true;
      if (func.getNumArguments() > 0 &&
          func.getArgAttr(0, disc::kRalContextAttr))
        continue; // already done
      auto ptrType = LLVM::LLVMPointerType::get(&getContext());
      if (failed(func.insertArgument(
              0, ptrType,
              DictionaryAttr::get(&getContext(),
                                  {NamedAttribute(
                                      StringAttr::get(&getContext(),
                                                      disc::kRalContextAttr),
                                      UnitAttr::get(&getContext()))}),
              func.getLoc())))
        return signalPassFailure();
    }
    if (!found) {
      getOperation().emitError("no function is marked disc.entry; run "
                               "disc-select-entry first");
      signalPassFailure();
    }
  }
};
} // namespace
