//===- RalLowerParallelFor.cpp - parallel bodies -> disc_ral_parallel_for -===//
#include "RuntimeFunctions.h"
#include "disc/Conversion/Passes.h"
#include "disc/Transforms/Passes.h"

namespace disc {
#define GEN_PASS_DEF_DISCRALLOWERPARALLELFOR
#include "disc/Conversion/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

/// void disc_ral_parallel_for(void (*fn)(void *, int64_t, int64_t),
///                            void *args, int64_t units, int64_t work)
LLVM::LLVMFuncOp declareParallelFor(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                          {ptr, ptr, i64, i64});
  return disc::declareRuntimeFunction(module, "disc_ral_parallel_for", type);
}

/// The struct the captures (the body's arguments after lo, hi, work) are
/// stored in.
LLVM::LLVMStructType captureStruct(LLVM::LLVMFuncOp body) {
  return LLVM::LLVMStructType::getLiteral(
      body.getContext(), body.getFunctionType().getParams().drop_front(3));
}

/// @<body>_packed(args, lo, hi): body(lo, hi, 0, args->field0, ...).
LLVM::LLVMFuncOp createPackedEntry(LLVM::LLVMFuncOp body) {
  MLIRContext *ctx = body.getContext();
  Location loc = body.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  OpBuilder b(body);
  b.setInsertionPointAfter(body);
  auto packed = LLVM::LLVMFuncOp::create(
      b, loc, (body.getName() + "_packed").str(),
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                  {ptr, i64, i64}),
      LLVM::Linkage::Internal);
  Block *entry = packed.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  Value args = entry->getArgument(0);
  LLVM::LLVMStructType captures = captureStruct(body);
  SmallVector<Value> values{
      entry->getArgument(1), entry->getArgument(2),
      LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(0))};
  for (auto [i, type] : llvm::enumerate(captures.getBody())) {
    Value field = LLVM::GEPOp::create(
        b, loc, ptr, captures, args,
        ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
    values.push_back(LLVM::LoadOp::create(b, loc, type, field));
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
    SmallVector<LLVM::LLVMFuncOp> bodies;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>())
      if (func->hasAttr(disc::kParallelBodyAttr) && !func.isExternal())
        bodies.push_back(func);
    if (bodies.empty())
      return;
    for (LLVM::LLVMFuncOp body : bodies) {
      if (body.getNumArguments() < 3) {
        body.emitError("parallel body needs (lo, hi, work, ...) arguments");
        return signalPassFailure();
      }
      packedEntries[body.getName()] = createPackedEntry(body);
    }
    LLVM::LLVMFuncOp parallelFor = declareParallelFor(module);

    SmallVector<LLVM::CallOp> calls;
    module.walk([&](LLVM::CallOp call) {
      std::optional<StringRef> callee = call.getCallee();
      if (callee && packedEntries.count(*callee) &&
          call->getParentOfType<LLVM::LLVMFuncOp>() !=
              packedEntries[*callee])
        calls.push_back(call);
    });
    MLIRContext *ctx = module.getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    for (LLVM::CallOp call : calls) {
      Location loc = call.getLoc();
      auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
      auto body = module.lookupSymbol<LLVM::LLVMFuncOp>(*call.getCallee());
      LLVM::LLVMStructType captures = captureStruct(body);
      // The struct lives in the caller's frame (allocated at its start,
      // not in a loop); threads only read it during the call.
      OpBuilder allocas = OpBuilder::atBlockBegin(&caller.front());
      Value one = LLVM::ConstantOp::create(allocas, loc, i64,
                                           allocas.getI64IntegerAttr(1));
      Value args = LLVM::AllocaOp::create(allocas, loc, ptr, captures, one);
      OpBuilder b(call);
      for (auto [i, arg] : llvm::enumerate(call.getOperands().drop_front(3))) {
        Value field = LLVM::GEPOp::create(
            b, loc, ptr, captures, args,
            ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
        LLVM::StoreOp::create(b, loc, arg, field);
      }
      Value fn = LLVM::AddressOfOp::create(
          b, loc, ptr, packedEntries[*call.getCallee()].getName());
      // Arguments 1 and 2 of the body: hi (= the unit count, lo is 0) and
      // the work per unit.
      LLVM::CallOp::create(
          b, loc, parallelFor,
          ValueRange{fn, args, call.getOperand(1), call.getOperand(2)});
      call.erase();
    }
  }
};

} // namespace
