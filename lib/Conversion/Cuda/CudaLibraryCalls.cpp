//===- CudaLibraryCalls.cpp - library calls of the cuda target ------------===//
//
// See DiscCudaLibraryCalls in include/disc/Conversion/Cuda/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "disc/Conversion/Cuda/Passes.h"

namespace disc {
#define GEN_PASS_DEF_DISCCUDALIBRARYCALLS
#include "disc/Conversion/Cuda/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

struct CudaLibraryCallsPass
    : public disc::impl::DiscCudaLibraryCallsBase<CudaLibraryCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    WalkResult result = module.walk([&](func::CallOp call) {
      StringRef callee = call.getCallee();
      if (!callee.starts_with("disc_ral_") ||
          callee.starts_with("disc_ral_cuda_"))
        return WalkResult::advance();
      StringRef suffix;
      if (callee.consume_front("disc_ral_matmul_") &&
          (callee == "f32" || callee == "f16" || callee == "bf16"))
        suffix = callee;
      if (suffix.empty()) {
        call.emitOpError() << "calls @" << call.getCallee()
                           << " (a library call), which the cuda target "
                              "does not support yet";
        return WalkResult::interrupt();
      }
      std::string name = ("disc_ral_cuda_matmul_" + suffix).str();
      auto declaration = symbols.lookup<func::FuncOp>(name);
      if (!declaration) {
        auto original = symbols.lookup<func::FuncOp>(call.getCallee());
        OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
        declaration = cast<func::FuncOp>(b.clone(*original));
        declaration.setSymName(name);
        symbols.insert(declaration);
      }
      call.setCallee(name);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    // The CPU declarations left without callers.
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>()))
      if (func.isExternal() && func.getSymName().starts_with("disc_ral_") &&
          !func.getSymName().starts_with("disc_ral_cuda_") &&
          func.symbolKnownUseEmpty(module))
        func.erase();
  }
};

} // namespace
