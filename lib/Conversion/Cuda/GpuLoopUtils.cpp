//===- GpuLoopUtils.cpp - helpers of the cuda loop-mapping code -----------===//
#include "GpuLoopUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;

namespace disc::cuda {

Value tripCount(OpBuilder &b, Location loc, Value lb, Value ub, Value step) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value extent = b.createOrFold<arith::SubIOp>(loc, ub, lb);
  extent = b.createOrFold<arith::MaxSIOp>(loc, extent, zero);
  return b.createOrFold<arith::CeilDivUIOp>(loc, extent, step);
}

void printForComparison(Operation *op, llvm::raw_ostream &os) {
  OpPrintingFlags flags;
  flags.useLocalScope()
      .enableDebugInfo(false)
      .elideLargeElementsAttrs(std::numeric_limits<int64_t>::max())
      .elideLargeResourceString(std::numeric_limits<int64_t>::max());
  op->print(os, flags);
}

Value productOf(OpBuilder &b, Location loc, ValueRange counts) {
  Value product = arith::ConstantIndexOp::create(b, loc, 1);
  for (Value count : counts)
    product = b.createOrFold<arith::MulIOp>(loc, product, count);
  return product;
}

/// The identity of the reduction step `combine(acc, x)` when it is one
/// associative, commutative op (float sums and products only when marked
/// reassociable), else null.
TypedAttr reductionIdentity(Operation *combine) {
  Type type = combine->getResult(0).getType();
  Builder b(combine->getContext());
  if (auto floatType = dyn_cast<FloatType>(type)) {
    const llvm::fltSemantics &semantics = floatType.getFloatSemantics();
    auto reassociable = [&](auto op) {
      return bitEnumContainsAll(op.getFastmath(),
                                arith::FastMathFlags::reassoc);
    };
    if (auto add = dyn_cast<arith::AddFOp>(combine))
      return reassociable(add)
                 ? b.getFloatAttr(type, APFloat::getZero(semantics, true))
                 : TypedAttr();
    if (auto mul = dyn_cast<arith::MulFOp>(combine))
      return reassociable(mul) ? b.getFloatAttr(type, 1.0) : TypedAttr();
    // max/min from -inf/+inf: a NaN-ignoring max of an all-NaN part then
    // leaves the initial value, as the sequential loop does.
    if (isa<arith::MaxNumFOp, arith::MaximumFOp>(combine))
      return b.getFloatAttr(type, APFloat::getInf(semantics, true));
    if (isa<arith::MinNumFOp, arith::MinimumFOp>(combine))
      return b.getFloatAttr(type, APFloat::getInf(semantics, false));
    return {};
  }
  auto intType = dyn_cast<IntegerType>(type);
  if (!intType)
    return {};
  unsigned w = intType.getWidth();
  auto value = [&](APInt v) { return (TypedAttr)b.getIntegerAttr(type, v); };
  if (isa<arith::AddIOp, arith::OrIOp, arith::XOrIOp, arith::MaxUIOp>(combine))
    return value(APInt(w, 0));
  if (isa<arith::MulIOp>(combine))
    return value(APInt(w, 1));
  if (isa<arith::AndIOp, arith::MinUIOp>(combine))
    return value(APInt::getAllOnes(w));
  if (isa<arith::MaxSIOp>(combine))
    return value(APInt::getSignedMinValue(w));
  if (isa<arith::MinSIOp>(combine))
    return value(APInt::getSignedMaxValue(w));
  return {};
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
  Type type = linear.getType();
  const bool narrow = !type.isIndex();
  Value remaining = linear;
  for (size_t i = rank; i-- > 0;) {
    Value index = remaining;
    if (i > 0) {
      Value count =
          narrow ? b.createOrFold<arith::IndexCastUIOp>(loc, type, counts[i])
                 : counts[i];
      index = arith::RemUIOp::create(b, loc, remaining, count);
      remaining = arith::DivUIOp::create(b, loc, remaining, count);
    }
    if (narrow)
      index = arith::IndexCastUIOp::create(b, loc, b.getIndexType(), index);
    Value scaled = b.createOrFold<arith::MulIOp>(loc, index, steps[i]);
    ivs[i] = b.createOrFold<arith::AddIOp>(loc, lbs[i], scaled);
  }
  return ivs;
}

Value linearize(OpBuilder &b, Location loc, ValueRange ivs, ValueRange counts,
                ValueRange lbs, ValueRange steps) {
  Value linear = arith::ConstantIndexOp::create(b, loc, 0);
  for (auto [iv, count, lb, step] : llvm::zip_equal(ivs, counts, lbs, steps)) {
    Value index = b.createOrFold<arith::DivUIOp>(
        loc, b.createOrFold<arith::SubIOp>(loc, iv, lb), step);
    linear = b.createOrFold<arith::AddIOp>(
        loc, b.createOrFold<arith::MulIOp>(loc, linear, count), index);
  }
  return linear;
}

bool writesMemory(Operation *op, function_ref<bool(Value)> exempt) {
  WalkResult result = op->walk([&](Operation *nested) {
    Value stored;
    if (auto store = dyn_cast<memref::StoreOp>(nested))
      stored = store.getMemRef();
    else if (auto store = dyn_cast<vector::StoreOp>(nested))
      stored = store.getBase();
    else if (!isa<memref::AtomicRMWOp, memref::GenericAtomicRMWOp,
                  memref::CopyOp>(nested))
      return WalkResult::advance();
    if (stored && exempt && exempt(stored))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return result.wasInterrupted();
}

Value rootBuffer(Value memref) {
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
    memref = view.getViewSource();
  return memref;
}

Value accessedMemref(Operation *op) {
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return load.getMemRef();
  return cast<memref::StoreOp>(op).getMemRef();
}

ValueRange accessedIndices(Operation *op) {
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return load.getIndices();
  return cast<memref::StoreOp>(op).getIndices();
}

bool definedOutside(Value value, Operation *op) {
  Operation *owner = isa<BlockArgument>(value)
                         ? cast<BlockArgument>(value).getOwner()->getParentOp()
                         : value.getDefiningOp();
  return !op->isAncestor(owner);
}

FailureOr<int64_t> smVersionOfChip(StringRef chip) {
  if (!chip.consume_front("sm_"))
    return failure();
  chip = chip.take_while([](char c) { return llvm::isDigit(c); });
  int64_t version;
  if (chip.getAsInteger(10, version))
    return failure();
  return version;
}

bool isOneElementMemRef(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && memref.hasStaticShape() && memref.getNumElements() == 1;
}

bool hostComputable(Value value, Block &body, DenseMap<Value, bool> &memo) {
  // A memref operand is its descriptor (memref.dim reads only that).
  if (isa<MemRefType>(value.getType()))
    return true;
  if (!value.getType().isIntOrIndexOrFloat())
    return false;
  auto it = memo.find(value);
  if (it != memo.end())
    return it->second;
  bool result = false;
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    result = arg.getOwner() == &body;
  } else {
    Operation *def = value.getDefiningOp();
    result = def->getBlock() == &body && def->getNumRegions() == 0 &&
             isMemoryEffectFree(def) &&
             llvm::all_of(def->getOperands(), [&](Value operand) {
               return hostComputable(operand, body, memo);
             });
  }
  memo[value] = result;
  return result;
}

scf::ParallelOp createMappedLoop(OpBuilder &b, Location loc, Value count,
                                 gpu::Processor processor, ValueRange inits) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                      ValueRange{count}, ValueRange{one},
                                      inits, nullptr);
  MLIRContext *ctx = b.getContext();
  loop->setAttr(gpu::getMappingAttrName(),
                ArrayAttr::get(ctx, {mappingFor(ctx, processor)}));
  return loop;
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
