//===- ApplyNoAliasArgs.cpp - recorded noalias marks -> llvm.noalias ------===//
#include "disc/Conversion/Passes.h"
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace disc {
#define GEN_PASS_DEF_DISCAPPLYNOALIASARGS
#include "disc/Conversion/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

struct ApplyNoAliasArgsPass
    : public disc::impl::DiscApplyNoAliasArgsBase<ApplyNoAliasArgsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<LLVM::LLVMFuncOp>()) {
      auto positions =
          func->getAttrOfType<DenseI64ArrayAttr>(disc::kNoAliasLlvmArgsAttr);
      if (!positions)
        continue;
      auto count = func->getAttrOfType<IntegerAttr>(disc::kLlvmArgCountAttr);
      if (!count || count.getInt() != func.getNumArguments()) {
        func.emitError() << "has " << func.getNumArguments()
                         << " arguments, but disc-mark-noalias-args recorded "
                         << (count ? count.getInt() : -1)
                         << ": its signature changed after the marks";
        return signalPassFailure();
      }
      for (int64_t position : positions.asArrayRef()) {
        if (position < 0 || position >= count.getInt() ||
            !isa<LLVM::LLVMPointerType>(
                func.getArgument(position).getType())) {
          func.emitError() << "argument " << position
                           << " recorded as an aligned pointer is not a "
                              "pointer";
          return signalPassFailure();
        }
        func.setArgAttr(position, LLVM::LLVMDialect::getNoAliasAttrName(),
                        UnitAttr::get(&getContext()));
      }
      func->removeAttr(disc::kNoAliasLlvmArgsAttr);
      func->removeAttr(disc::kLlvmArgCountAttr);
    }
  }
};

} // namespace
