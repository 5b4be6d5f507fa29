//===- RalInjectContext.cpp - malloc/free -> the RAL allocator ------------===//
#include "RuntimeFunctions.h"
#include "disc/Conversion/Passes.h"
#include "disc/Transforms/Passes.h"

namespace disc {
#define GEN_PASS_DEF_DISCRALINJECTCONTEXT
#include "disc/Conversion/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

struct RalInjectContextPass
    : public disc::impl::DiscRalInjectContextBase<RalInjectContextPass> {
  using DiscRalInjectContextBase::DiscRalInjectContextBase;
  void runOnOperation() override {
    if (device != "cpu" && device != "cuda") {
      getOperation().emitError() << "disc-ral-inject-context: device must be "
                                    "cpu or cuda, got '"
                                 << device << "'";
      return signalPassFailure();
    }
    const std::string allocName =
        device == "cuda" ? "disc_ral_cuda_alloc" : "disc_ral_alloc";
    const std::string freeName =
        device == "cuda" ? "disc_ral_cuda_free" : "disc_ral_free";
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    auto voidType = LLVM::LLVMVoidType::get(ctx);
    LLVM::LLVMFuncOp ralAlloc, ralFree;
    WalkResult result = module.walk([&](LLVM::CallOp call) {
      auto callee = call.getCallee();
      if (!callee || (*callee != "malloc" && *callee != "aligned_alloc" &&
                      *callee != "free"))
        return WalkResult::advance();
      auto func = call->getParentOfType<LLVM::LLVMFuncOp>();
      bool hasContext = func && func.getNumArguments() > 0 &&
                        func.getArgAttr(0, disc::kRalContextAttr);
      if (!hasContext) {
        call.emitOpError() << "calls @" << *callee
                           << " in a function without a RAL context "
                              "argument; compiled code must allocate "
                              "through the runtime";
        return WalkResult::interrupt();
      }
      if (!ralAlloc) {
        ralAlloc = disc::declareRuntimeFunction(module, allocName,
                           LLVM::LLVMFunctionType::get(ptr, {ptr, i64}));
        ralFree = disc::declareRuntimeFunction(module, freeName,
                          LLVM::LLVMFunctionType::get(voidType, {ptr, ptr}));
      }
      OpBuilder b(call);
      Value context = func.getArgument(0);
      if (*callee == "free") {
        LLVM::CallOp::create(b, call.getLoc(), ralFree,
                             ValueRange{context, call.getOperand(0)});
        call.erase();
        return WalkResult::advance();
      }
      // aligned_alloc(alignment, size): the RAL aligns to 64 bytes.
      Value size = call.getOperands().back();
      if (*callee == "aligned_alloc") {
        auto alignment = getConstantIntValue(call.getOperand(0));
        if (!alignment || *alignment > 64) {
          call.emitOpError("alignment above 64 bytes is not supported");
          return WalkResult::interrupt();
        }
      }
      auto newCall = LLVM::CallOp::create(b, call.getLoc(), ralAlloc,
                                          ValueRange{context, size});
      call.getResult().replaceAllUsesWith(newCall.getResult());
      call.erase();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    // The libc declarations are now unused.
    for (StringRef name : {"malloc", "aligned_alloc", "free"})
      if (auto f = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
        if (f.symbolKnownUseEmpty(module))
          f.erase();
  }
};

} // namespace
