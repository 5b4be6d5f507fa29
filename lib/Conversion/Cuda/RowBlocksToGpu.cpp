//===- RowBlocksToGpu.cpp - block-per-row nests -> gpu.launch -------------===//
//
// See DiscRowBlocksToGpu in include/disc/Conversion/Cuda/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "disc/Conversion/Cuda/Passes.h"

#include "GpuLoopUtils.h"
#include "RowKernels.h"

#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/IR/IRMapping.h"

namespace disc {
#define GEN_PASS_DEF_DISCROWBLOCKSTOGPU
#include "disc/Conversion/Cuda/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

bool isThreadLoop(Operation *op) {
  auto loop = dyn_cast<scf::ParallelOp>(op);
  if (!loop)
    return false;
  auto mapping = loop->getAttrOfType<ArrayAttr>(gpu::getMappingAttrName());
  if (!mapping || mapping.size() != 1)
    return false;
  auto dim = dyn_cast<gpu::ParallelLoopDimMappingAttr>(mapping[0]);
  return dim && dim.getProcessor() == gpu::Processor::ThreadX;
}

/// The type warp shuffles reduce `type` in: 32-bit for narrower integers
/// and floats.
Type shuffleType(Type type) {
  if (auto intType = dyn_cast<IntegerType>(type))
    return intType.getWidth() < 32 ? IntegerType::get(type.getContext(), 32)
                                   : type;
  if (type.isF16() || type.isBF16())
    return Float32Type::get(type.getContext());
  return type;
}

Value convert(OpBuilder &b, Location loc, Value value, Type to) {
  Type from = value.getType();
  if (from == to)
    return value;
  if (isa<IntegerType>(from))
    return cast<IntegerType>(to).getWidth() > from.getIntOrFloatBitWidth()
               ? (Value)arith::ExtUIOp::create(b, loc, to, value)
               : (Value)arith::TruncIOp::create(b, loc, to, value);
  return to.getIntOrFloatBitWidth() > from.getIntOrFloatBitWidth()
             ? (Value)arith::ExtFOp::create(b, loc, to, value)
             : (Value)arith::TruncFOp::create(b, loc, to, value);
}

struct RowBlocksToGpuPass
    : public disc::impl::DiscRowBlocksToGpuBase<RowBlocksToGpuPass> {
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> nests;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (loop->hasAttr(disc::cuda::kRowBlockAttr))
        nests.push_back(loop);
    });
    for (scf::ParallelOp nest : nests)
      if (failed(lower(nest)))
        return signalPassFailure();
  }

  LogicalResult lower(scf::ParallelOp nest) {
    if (nest.getNumLoops() != 1 || !isConstantIntValue(nest.getLowerBound()[0], 0) ||
        !isConstantIntValue(nest.getStep()[0], 1))
      return nest.emitOpError("marked disc.row_block must run 0 to rows "
                              "step 1");
    Value threads;
    for (Operation &op : nest.getBody()->without_terminator()) {
      if (op.getNumRegions() == 0)
        continue;
      if (!isThreadLoop(&op))
        return op.emitOpError("in a disc.row_block nest must be a thread "
                              "loop (scf.parallel mapped to thread_x)");
      auto loop = cast<scf::ParallelOp>(op);
      if (!isConstantIntValue(loop.getLowerBound()[0], 0) ||
          !isConstantIntValue(loop.getStep()[0], 1) ||
          (threads && loop.getUpperBound()[0] != threads))
        return op.emitOpError("thread loops of a disc.row_block nest must all "
                              "run 0 to the same thread count step 1");
      threads = loop.getUpperBound()[0];
    }
    if (!threads)
      return nest.emitOpError("marked disc.row_block has no thread loop");

    OpBuilder b(nest);
    Location loc = nest.getLoc();
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto launch = gpu::LaunchOp::create(b, loc, nest.getUpperBound()[0], one,
                                        one, threads, one, one);
    b.setInsertionPointToEnd(&launch.getBody().front());
    auto terminator = gpu::TerminatorOp::create(b, loc);
    b.setInsertionPoint(terminator);
    IRMapping mapping;
    mapping.map(nest.getInductionVars()[0], launch.getBlockIds().x);
    Value thread = launch.getThreadIds().x;
    // Row-level stores since the last barrier: the next thread loop may
    // read what they wrote.
    bool pendingStores = false;
    for (Operation &op : nest.getBody()->without_terminator()) {
      if (!isThreadLoop(&op)) {
        b.clone(op, mapping);
        pendingStores |= disc::cuda::writesMemory(&op);
        continue;
      }
      auto loop = cast<scf::ParallelOp>(op);
      if (pendingStores)
        gpu::BarrierOp::create(b, loc);
      pendingStores = false;
      mapping.map(loop.getInductionVars()[0], thread);
      for (Operation &inner : loop.getBody()->without_terminator())
        b.clone(inner, mapping);
      auto reduce = cast<scf::ReduceOp>(loop.getBody()->getTerminator());
      for (auto [i, operand] : llvm::enumerate(reduce.getOperands())) {
        Type type = operand.getType();
        Type wide = shuffleType(type);
        Value partial = convert(b, loc, mapping.lookup(operand), wide);
        auto allReduce = gpu::AllReduceOp::create(
            b, loc, partial, gpu::AllReduceOperationAttr(), /*uniform=*/true);
        Block *body = new Block();
        allReduce.getBody().push_back(body);
        Value lhs = body->addArgument(wide, loc);
        Value rhs = body->addArgument(wide, loc);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(body);
          Block &combiner = reduce.getReductions()[i].front();
          IRMapping inner;
          inner.map(combiner.getArgument(0), convert(b, loc, lhs, type));
          inner.map(combiner.getArgument(1), convert(b, loc, rhs, type));
          for (Operation &step : combiner.without_terminator())
            b.clone(step, inner);
          auto ret = cast<scf::ReduceReturnOp>(combiner.getTerminator());
          gpu::YieldOp::create(
              b, loc, convert(b, loc, inner.lookupOrDefault(ret.getResult()), wide));
        }
        mapping.map(loop.getResult(i),
                    convert(b, loc, allReduce.getResult(), type));
      }
      // What this loop wrote may be read by other threads next.
      if (disc::cuda::writesMemory(loop))
        gpu::BarrierOp::create(b, loc);
    }
    nest.erase();
    return success();
  }
};

} // namespace
