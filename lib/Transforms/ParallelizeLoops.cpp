//===- ParallelizeLoops.cpp - kernel loops onto the runtime's threads -----===//
#include "Outlining.h"
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/Transforms/Transforms.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace disc {
#define GEN_PASS_DEF_DISCPARALLELIZELOOPS
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

/// The innermost dim is cut into blocks of this many iterations, each a
/// unit of the shared range: a [1, 1, N] tensor still splits across
/// threads, and each block stays a long contiguous (vectorised) loop.
constexpr int64_t kInnerBlock = 1024;

bool isConstant(Value value, int64_t expected) {
  std::optional<int64_t> constant = getConstantIntValue(value);
  return constant && *constant == expected;
}

/// `value` (an index: a loop bound inside `outer`) as a value computed
/// before `outer` runs, or null. A bound defined above is itself; one
/// computed in the body (a row length read as `memref.dim` of a subview
/// or a collapse_shape, as stitch kernels' row loops are) is reified by
/// upstream value-bounds analysis in terms of values defined above.
Value boundAbove(OpBuilder &b, Location loc, Value value,
                 scf::ParallelOp outer) {
  auto definedAbove = [&](Value v) {
    return v.getParentRegion()->isProperAncestor(&outer.getRegion());
  };
  if (definedAbove(value))
    return value;
  if (std::optional<int64_t> constant = getConstantIntValue(value))
    return arith::ConstantIndexOp::create(b, loc, *constant);
  auto stopAbove = [&](Value v, std::optional<int64_t>,
                       ValueBoundsConstraintSet &) { return definedAbove(v); };
  FailureOr<OpFoldResult> bound = affine::reifyIndexValueBound(
      b, loc, presburger::BoundType::EQ, value, stopAbove);
  if (failed(bound))
    return nullptr;
  return getValueOrCreateConstantIndexOp(b, loc, *bound);
}

/// Iterations of the loops in `region`, nested loops multiplied and
/// sibling loops added: sum over the region's loops of trip count x the
/// work of its body (at least 1 per region). A trip count that cannot be
/// known before `outer` runs (boundAbove) counts as one iteration.
Value regionWork(OpBuilder &b, Location loc, Region &region,
                 scf::ParallelOp outer) {
  Value total;
  for (Operation &op : region.getOps()) {
    Value trips;
    Region *body = nullptr;
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      body = &loop.getRegion();
      if (isConstant(loop.getStep(), 1)) {
        Value lb = boundAbove(b, loc, loop.getLowerBound(), outer);
        Value ub = lb ? boundAbove(b, loc, loop.getUpperBound(), outer)
                      : nullptr;
        if (ub)
          trips = arith::SubIOp::create(b, loc, ub, lb);
      }
    } else if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
      body = &loop.getRegion();
      for (auto [lb, ub, step] : llvm::zip(loop.getLowerBound(),
                                           loop.getUpperBound(),
                                           loop.getStep())) {
        if (!isConstant(step, 1))
          continue;
        Value lbAbove = boundAbove(b, loc, lb, outer);
        Value ubAbove = lbAbove ? boundAbove(b, loc, ub, outer) : nullptr;
        if (!ubAbove)
          continue;
        Value extent = arith::SubIOp::create(b, loc, ubAbove, lbAbove);
        trips = trips ? arith::MulIOp::create(b, loc, trips, extent) : extent;
      }
    } else {
      // Loops nested in other ops (scf.if, ...) count as if inline.
      for (Region &nested : op.getRegions()) {
        Value inner = regionWork(b, loc, nested, outer);
        if (!isConstant(inner, 1))
          total = total ? arith::AddIOp::create(b, loc, total, inner) : inner;
      }
      continue;
    }
    Value work = regionWork(b, loc, *body, outer);
    if (trips)
      work = isConstant(work, 1)
                 ? trips
                 : arith::MulIOp::create(b, loc, trips, work).getResult();
    total = total ? arith::AddIOp::create(b, loc, total, work) : work;
  }
  return total ? total : arith::ConstantIndexOp::create(b, loc, 1).getResult();
}

/// Elements one unit of the range does: the innermost block (if the
/// innermost dim stays a loop in the body) times the work of the loops
/// inside (reductions, and the row loops of stitch kernels). An estimate
/// for the runtime's "is this worth a parallel launch" decision.
Value workPerUnit(OpBuilder &b, scf::ParallelOp loop, Value innerBlock) {
  Location loc = loop.getLoc();
  Value blockLength;
  if (innerBlock)
    blockLength = arith::MinUIOp::create(b, loc, loop.getUpperBound().back(),
                                         innerBlock);
  Value work = regionWork(b, loc, loop.getRegion(), loop);
  if (!blockLength)
    return work;
  if (isConstant(work, 1))
    return blockLength;
  return arith::MulIOp::create(b, loc, blockLength, work);
}

struct ParallelizeLoopsPass
    : public disc::impl::DiscParallelizeLoopsBase<ParallelizeLoopsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> kernels;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(disc::kKernelAttr) && !func.isExternal())
        kernels.push_back(func);
    for (func::FuncOp kernel : kernels) {
      unsigned counter = 0;
      SmallVector<scf::ParallelOp> loops;
      for (auto loop : kernel.front().getOps<scf::ParallelOp>())
        loops.push_back(loop);
      for (scf::ParallelOp loop : loops)
        if (parallelizable(loop))
          outline(loop, kernel, symbols, counter);
    }
  }

  /// Whether the body calls the runtime (allocation, free, a call, a
  /// run-time check that fails by unwinding to invoke): the runtime's
  /// per-call state is not made for several threads, and a failure must
  /// unwind on the calling thread.
  static bool callsRuntime(scf::ParallelOp loop) {
    return loop
        .walk([](Operation *op) {
          return isa<memref::AllocOp, memref::DeallocOp, CallOpInterface,
                     cf::AssertOp>(op)
                     ? WalkResult::interrupt()
                     : WalkResult::advance();
        })
        .wasInterrupted();
  }

  static bool parallelizable(scf::ParallelOp loop) {
    return loop.getNumResults() == 0 && !callsRuntime(loop) &&
           llvm::all_of(loop.getLowerBound(),
                        [](Value v) { return isConstant(v, 0); }) &&
           llvm::all_of(loop.getStep(),
                        [](Value v) { return isConstant(v, 1); });
  }

  void outline(scf::ParallelOp loop, func::FuncOp kernel, SymbolTable &symbols,
               unsigned &counter) {
    MLIRContext *ctx = &getContext();
    Location loc = loop.getLoc();
    unsigned numDims = loop.getNumLoops();
    // All dims but the innermost form the shared range; a 1-d loop is the
    // range itself.
    unsigned numOuter = numDims == 1 ? 1 : numDims - 1;
    bool innerLoop = numDims > 1;

    // Values the body needs: the upper bounds and whatever the loop body
    // uses from above. Constants are cloned into the body instead.
    llvm::SetVector<Value> used;
    used.insert(loop.getUpperBound().begin(), loop.getUpperBound().end());
    getUsedValuesDefinedAbove(loop.getRegion(), used);
    SmallVector<Value> captures;
    SmallVector<Operation *> constants;
    disc::splitCaptures(used, captures, constants);

    // The call: units [0, count), and the work per unit. With an inner
    // loop, count = outer units x blocks of the innermost dim.
    OpBuilder b(loop);
    Value count = loop.getUpperBound().front();
    for (unsigned d = 1; d < numOuter; ++d)
      count = arith::MulIOp::create(b, loc, count, loop.getUpperBound()[d]);
    Value block, numBlocks;
    if (innerLoop) {
      block = arith::ConstantIndexOp::create(b, loc, kInnerBlock);
      numBlocks = arith::CeilDivUIOp::create(
          b, loc, loop.getUpperBound().back(), block);
      count = arith::MulIOp::create(b, loc, count, numBlocks);
    }
    Value work = workPerUnit(b, loop, block);

    Type index = b.getIndexType();
    SmallVector<Type> argTypes{index, index, index};
    for (Value value : captures)
      argTypes.push_back(value.getType());
    OpBuilder moduleBuilder(kernel);
    moduleBuilder.setInsertionPointAfter(kernel);
    auto body = disc::createOutlinedFunction(
        moduleBuilder, loc, symbols, (kernel.getSymName() + "_par").str(),
        counter, FunctionType::get(ctx, argTypes, {}),
        disc::kParallelBodyAttr);

    Block *entry = body.addEntryBlock();
    OpBuilder bb = OpBuilder::atBlockBegin(entry);
    IRMapping mapping;
    for (auto [value, argument] :
         llvm::zip(captures, entry->getArguments().drop_front(3)))
      mapping.map(value, argument);
    for (Operation *constant : constants)
      bb.clone(*constant, mapping);
    Value one = arith::ConstantIndexOp::create(bb, loc, 1);
    auto unitLoop = scf::ForOp::create(bb, loc, entry->getArgument(0),
                                       entry->getArgument(1), one);
    bb.setInsertionPointToStart(unitLoop.getBody());
    // Delinearise the unit index into the inner block and the outer
    // induction variables.
    Value rest = unitLoop.getInductionVar();
    SmallVector<Value> ivs(numDims);
    Value blockBegin, blockEnd;
    if (innerLoop) {
      Value extent = mapping.lookup(loop.getUpperBound().back());
      Value blockSize = arith::ConstantIndexOp::create(bb, loc, kInnerBlock);
      Value blocks = arith::CeilDivUIOp::create(bb, loc, extent, blockSize);
      Value blockIndex = arith::RemUIOp::create(bb, loc, rest, blocks);
      rest = arith::DivUIOp::create(bb, loc, rest, blocks);
      blockBegin = arith::MulIOp::create(bb, loc, blockIndex, blockSize);
      blockEnd = arith::MinUIOp::create(
          bb, loc, extent,
          arith::AddIOp::create(bb, loc, blockBegin, blockSize));
    }
    for (int d = numOuter - 1; d > 0; --d) {
      Value extent = mapping.lookup(loop.getUpperBound()[d]);
      ivs[d] = arith::RemUIOp::create(bb, loc, rest, extent);
      rest = arith::DivUIOp::create(bb, loc, rest, extent);
    }
    ivs[0] = rest;
    if (innerLoop) {
      auto inner = scf::ForOp::create(bb, loc, blockBegin, blockEnd, one);
      ivs.back() = inner.getInductionVar();
      bb.setInsertionPointToStart(inner.getBody());
    }
    for (auto [iv, value] : llvm::zip(loop.getInductionVars(), ivs))
      mapping.map(iv, value);
    for (Operation &op : loop.getBody()->without_terminator())
      bb.clone(op, mapping);
    bb.setInsertionPointToEnd(entry);
    func::ReturnOp::create(bb, loc);

    SmallVector<Value> operands{arith::ConstantIndexOp::create(b, loc, 0),
                                count, work};
    operands.append(captures);
    func::CallOp::create(b, loc, body, operands);
    loop.erase();
  }
};

} // namespace
