//===- SelectEntry.cpp - pick the function to compile ---------------------===//
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace disc {
#define GEN_PASS_DEF_DISCSELECTENTRY
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {
struct SelectEntryPass
    : public disc::impl::DiscSelectEntryBase<SelectEntryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> publicFuncs;
    for (auto func : module.getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal())
        publicFuncs.push_back(func);
    func::FuncOp entry;
    if (publicFuncs.size() == 1) {
      entry = publicFuncs.front();
    } else {
      for (auto func : publicFuncs)
        if (func.getSymName() == "main")
          entry = func;
    }
    if (!entry) {
      InFlightDiagnostic diag =
          module.emitError()
          << (publicFuncs.empty()
                  ? "no public function with a body to compile"
                  : "several public functions and none is named 'main'");
      for (auto func : publicFuncs)
        diag.attachNote(func.getLoc()) << "candidate: @" << func.getSymName();
      return signalPassFailure();
    }
    entry->setAttr(disc::kEntryAttr, UnitAttr::get(&getContext()));
    for (auto func : module.getOps<func::FuncOp>())
      if (func != entry && !func.isExternal())
        func.setPrivate();
  }
};
} // namespace
