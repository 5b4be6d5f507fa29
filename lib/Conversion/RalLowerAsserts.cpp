//===- RalLowerAsserts.cpp - cf.assert -> disc_ral_fail -------------------===//
#include "RuntimeFunctions.h"
#include "disc/Conversion/Passes.h"
#include "disc/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace disc {
#define GEN_PASS_DEF_DISCRALLOWERASSERTS
#include "disc/Conversion/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

LLVM::LLVMFuncOp declareFail(ModuleOp module) {
  auto ptr = LLVM::LLVMPointerType::get(module.getContext());
  auto type = LLVM::LLVMFunctionType::get(
      LLVM::LLVMVoidType::get(module.getContext()), {ptr, ptr});
  return disc::declareRuntimeFunction(module, "disc_ral_fail", type);
}

struct RalLowerAssertsPass
    : public disc::impl::DiscRalLowerAssertsBase<RalLowerAssertsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    unsigned counter = 0;
    for (auto func : module.getOps<func::FuncOp>()) {
      SmallVector<cf::AssertOp> asserts;
      func.walk([&](cf::AssertOp op) { asserts.push_back(op); });
      if (asserts.empty())
        continue;
      if (func.getNumArguments() == 0 ||
          !func.getArgAttr(0, disc::kRalContextAttr)) {
        asserts.front().emitOpError(
            "run-time check in a function without a RAL context argument");
        return signalPassFailure();
      }
      Value ctx = func.getArgument(0);
      LLVM::LLVMFuncOp fail = declareFail(module);
      for (cf::AssertOp op : asserts) {
        if (op->getParentRegion() != &func.getBody()) {
          op.emitOpError("run-time checks must be in the function's CFG; "
                         "run convert-scf-to-cf first");
          return signalPassFailure();
        }
        Block *before = op->getBlock();
        Block *after = before->splitBlock(op->getNextNode());
        Block *failBlock = new Block();
        func.getBody().getBlocks().insertAfter(before->getIterator(),
                                               failBlock);
        OpBuilder b(failBlock, failBlock->begin());
        Location loc = op.getLoc();
        std::string message = op.getMsg().str();
        Value text = LLVM::createGlobalString(
            loc, b, ("disc_assert_msg_" + Twine(counter++)).str(),
            StringRef(message.c_str(), message.size() + 1),
            LLVM::Linkage::Internal);
        LLVM::CallOp::create(b, loc, fail, ValueRange{ctx, text});
        LLVM::UnreachableOp::create(b, loc);
        b.setInsertionPoint(op);
        cf::CondBranchOp::create(b, loc, op.getArg(), after, ValueRange{},
                                 failBlock, ValueRange{});
        op.erase();
      }
    }
  }
};

} // namespace
