//===- RalLowerParallelFor.cpp - parallel bodies -> disc_ral_parallel_for -===//
#include "disc/Conversion/Passes.h"
#include "disc/Transforms/Passes.h"

namespace disc {
#define GEN_PASS_DEF_DISCRALLOWERPARALLELFOR
#include "disc/Conversion/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

/// void disc_ral_parallel_for(void (*fn)(void **), void **args, int64_t
///                            count, int64_t units, int64_t work)
LLVM::LLVMFuncOp declareParallelFor(ModuleOp module) {
  if (auto f = module.lookupSymbol<LLVM::LLVMFuncOp>("disc_ral_parallel_for"))
    return f;
  MLIRContext *ctx = module.getContext();
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                          {ptr, ptr, i64, i64, i64});
  return LLVM::LLVMFuncOp::create(b, module.getLoc(), "disc_ral_parallel_for",
                                  type);
}

/// @<body>_packed(args): body(*args[0], *args[1], ...).
LLVM::LLVMFuncOp createPackedEntry(LLVM::LLVMFuncOp body) {
  MLIRContext *ctx = body.getContext();
  Location loc = body.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  OpBuilder b(body);
  b.setInsertionPointAfter(body);
  auto packed = LLVM::LLVMFuncOp::create(
      b, loc, (body.getName() + "_packed").str(),
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr}),
      LLVM::Linkage::Internal);
  Block *entry = packed.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  Value args = entry->getArgument(0);
  SmallVector<Value> values;
  for (auto [i, type] :
       llvm::enumerate(body.getFunctionType().getParams())) {
    Value slotAddress = LLVM::GEPOp::create(
        b, loc, ptr, ptr, args, ArrayRef<LLVM::GEPArg>{int32_t(i)});
    Value slot = LLVM::LoadOp::create(b, loc, ptr, slotAddress);
    values.push_back(LLVM::LoadOp::create(b, loc, type, slot));
  }
  LLVM::CallOp::create(b, loc, body, values);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  return packed;
}

struct RalLowerParallelForPass
    : public disc::impl::DiscRalLowerParallelForBase<RalLowerParallelForPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::DenseMap<StringRef, LLVM::LLVMFuncOp> packedEntries;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>())
      if (func->hasAttr(disc::kParallelBodyAttr) && !func.isExternal())
        packedEntries[func.getName()] = {};
    if (packedEntries.empty())
      return;
    for (auto &entry : packedEntries) {
      auto body = module.lookupSymbol<LLVM::LLVMFuncOp>(entry.first);
      if (body.getNumArguments() < 3) {
        body.emitError("parallel body needs (lo, hi, work, ...) arguments");
        return signalPassFailure();
      }
      entry.second = createPackedEntry(body);
    }
    LLVM::LLVMFuncOp parallelFor = declareParallelFor(module);

    SmallVector<LLVM::CallOp> calls;
    module.walk([&](LLVM::CallOp call) {
      std::optional<StringRef> callee = call.getCallee();
      if (callee && packedEntries.count(*callee) &&
          call->getParentOfType<LLVM::LLVMFuncOp>().getName() !=
              (*callee + "_packed").str())
        calls.push_back(call);
    });
    MLIRContext *ctx = module.getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    for (LLVM::CallOp call : calls) {
      Location loc = call.getLoc();
      auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
      // Stack slots at the start of the function (not in a loop).
      OpBuilder allocas = OpBuilder::atBlockBegin(&caller.front());
      Value one = LLVM::ConstantOp::create(allocas, loc, i64,
                                           allocas.getI64IntegerAttr(1));
      int64_t count = call.getNumOperands();
      Value array = LLVM::AllocaOp::create(
          allocas, loc, ptr, LLVM::LLVMArrayType::get(ptr, count), one);
      SmallVector<Value> slots;
      for (Value arg : call.getOperands())
        slots.push_back(
            LLVM::AllocaOp::create(allocas, loc, ptr, arg.getType(), one));

      OpBuilder b(call);
      for (auto [i, arg] : llvm::enumerate(call.getOperands())) {
        LLVM::StoreOp::create(b, loc, arg, slots[i]);
        Value element = LLVM::GEPOp::create(
            b, loc, ptr, ptr, array, ArrayRef<LLVM::GEPArg>{int32_t(i)});
        LLVM::StoreOp::create(b, loc, slots[i], element);
      }
      Value fn = LLVM::AddressOfOp::create(
          b, loc, ptr, packedEntries[*call.getCallee()].getName());
      Value countValue =
          LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(count));
      // Arguments 1 and 2 of the body: hi (= the unit count, lo is 0) and
      // the work per unit.
      LLVM::CallOp::create(b, loc, parallelFor,
                           ValueRange{fn, array, countValue,
                                      call.getOperand(1), call.getOperand(2)});
      call.erase();
    }
  }
};

} // namespace
