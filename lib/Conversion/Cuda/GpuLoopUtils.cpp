//===- GpuLoopUtils.cpp - helpers of the cuda loop-mapping code -----------===//
#include "GpuLoopUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace disc::cuda {

Value tripCount(OpBuilder &b, Location loc, Value lb, Value ub, Value step) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value extent = b.createOrFold<arith::SubIOp>(loc, ub, lb);
  extent = b.createOrFold<arith::MaxSIOp>(loc, extent, zero);
  return b.createOrFold<arith::CeilDivUIOp>(loc, extent, step);
}

Attribute mappingFor(MLIRContext *ctx, gpu::Processor processor) {
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, ctx);
  return gpu::ParallelLoopDimMappingAttr::get(ctx, processor, identity,
                                              identity);
}

SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                               ValueRange counts, ValueRange lbs,
                               ValueRange steps) {
  size_t rank = counts.size();
  SmallVector<Value> ivs(rank);
  Value remaining = linear;
  for (size_t i = rank; i-- > 0;) {
    Value index = remaining;
    if (i > 0) {
      index = arith::RemUIOp::create(b, loc, remaining, counts[i]);
      remaining = arith::DivUIOp::create(b, loc, remaining, counts[i]);
    }
    Value scaled = b.createOrFold<arith::MulIOp>(loc, index, steps[i]);
    ivs[i] = b.createOrFold<arith::AddIOp>(loc, lbs[i], scaled);
  }
  return ivs;
}

bool writesMemory(Operation *op) {
  WalkResult result = op->walk([](Operation *nested) {
    if (isa<memref::StoreOp, memref::AtomicRMWOp, memref::GenericAtomicRMWOp,
            memref::CopyOp>(nested))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

Value rootBuffer(Value memref) {
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
    memref = view.getViewSource();
  return memref;
}

bool definedOutside(Value value, Operation *op) {
  Operation *owner = isa<BlockArgument>(value)
                         ? cast<BlockArgument>(value).getOwner()->getParentOp()
                         : value.getDefiningOp();
  return !op->isAncestor(owner);
}

std::optional<arith::AtomicRMWKind> atomicKindOf(Operation *op) {
  if (op->getNumOperands() != 2 || op->getNumResults() != 1)
    return std::nullopt;
  Type type = op->getResult(0).getType();
  if (!type.isIntOrFloat() || (type.getIntOrFloatBitWidth() != 32 &&
                               type.getIntOrFloatBitWidth() != 64))
    return std::nullopt;
  using K = arith::AtomicRMWKind;
  return llvm::TypeSwitch<Operation *, std::optional<K>>(op)
      .Case([](arith::AddFOp) { return K::addf; })
      .Case([](arith::MaximumFOp) { return K::maximumf; })
      .Case([](arith::MinimumFOp) { return K::minimumf; })
      .Case([](arith::MaxNumFOp) { return K::maxnumf; })
      .Case([](arith::MinNumFOp) { return K::minnumf; })
      .Case([](arith::AddIOp) { return K::addi; })
      .Case([](arith::AndIOp) { return K::andi; })
      .Case([](arith::OrIOp) { return K::ori; })
      .Case([](arith::XOrIOp) { return K::xori; })
      .Case([](arith::MaxSIOp) { return K::maxs; })
      .Case([](arith::MinSIOp) { return K::mins; })
      .Case([](arith::MaxUIOp) { return K::maxu; })
      .Case([](arith::MinUIOp) { return K::minu; })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace disc::cuda
