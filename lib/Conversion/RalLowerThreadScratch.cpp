//===- RalLowerThreadScratch.cpp - disc.thread_scratch -> runtime call ----===//
#include "RuntimeFunctions.h"
#include "disc/Conversion/Passes.h"
#include "disc/Dialect/Disc/DiscDialect.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"

namespace disc {
#define GEN_PASS_DEF_DISCRALLOWERTHREADSCRATCH
#include "disc/Conversion/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

struct RalLowerThreadScratchPass
    : public disc::impl::DiscRalLowerThreadScratchBase<
          RalLowerThreadScratchPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<disc::ThreadScratchOp> scratches;
    module.walk([&](disc::ThreadScratchOp op) { scratches.push_back(op); });
    if (scratches.empty())
      return;
    MLIRContext *context = module.getContext();
    auto ptr = LLVM::LLVMPointerType::get(context);
    auto i64 = IntegerType::get(context, 64);
    LLVM::LLVMFuncOp scratchFn = disc::declareRuntimeFunction(
        module, "disc_ral_thread_scratch",
        LLVM::LLVMFunctionType::get(ptr, {i64, i64}));
    // The descriptor of memref<?xi8> as finalize-memref-to-llvm lays it out
    // (allocated, aligned, offset, sizes, strides), with 64-bit indices.
    auto sizes = LLVM::LLVMArrayType::get(i64, 1);
    auto descriptorType =
        LLVM::LLVMStructType::getLiteral(context, {ptr, ptr, i64, sizes, sizes});
    for (disc::ThreadScratchOp op : scratches) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value slot = LLVM::ConstantOp::create(b, loc, i64,
                                              op.getSlotAttr().getInt());
      Value bytes = arith::IndexCastOp::create(b, loc, i64, op.getBytes());
      Value data = LLVM::CallOp::create(b, loc, scratchFn,
                                        ValueRange{slot, bytes})
                       .getResult();
      auto descriptor = MemRefDescriptor::poison(b, loc, descriptorType);
      descriptor.setAllocatedPtr(b, loc, data);
      descriptor.setAlignedPtr(b, loc, data);
      descriptor.setConstantOffset(b, loc, 0);
      descriptor.setSize(b, loc, 0, bytes);
      descriptor.setConstantStride(b, loc, 0, 1);
      Value buffer = UnrealizedConversionCastOp::create(
                         b, loc, op.getBuffer().getType(),
                         static_cast<Value>(descriptor))
                         .getResult(0);
      op.getBuffer().replaceAllUsesWith(buffer);
      op.erase();
    }
  }
};

} // namespace
