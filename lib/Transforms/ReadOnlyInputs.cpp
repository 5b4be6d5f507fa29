//===- ReadOnlyInputs.cpp - entry tensor arguments are never written ------===//
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace disc {
#define GEN_PASS_DEF_DISCREADONLYINPUTS
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {
struct ReadOnlyInputsPass
    : public disc::impl::DiscReadOnlyInputsBase<ReadOnlyInputsPass> {
  void runOnOperation() override {
    auto readOnly = BoolAttr::get(&getContext(), false);
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func->hasAttr(disc::kEntryAttr))
        continue;
      for (BlockArgument arg : func.getArguments())
        if (isa<TensorType>(arg.getType()) &&
            !func.getArgAttr(arg.getArgNumber(),
                             bufferization::BufferizationDialect::
                                 kWritableAttrName))
          func.setArgAttr(
              arg.getArgNumber(),
              bufferization::BufferizationDialect::kWritableAttrName,
              readOnly);
    }
  }
};
} // namespace
