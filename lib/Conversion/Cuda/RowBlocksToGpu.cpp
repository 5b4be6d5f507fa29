//===- RowBlocksToGpu.cpp - block- and warp-per-row nests -> gpu.launch ---===//
//
// See DiscRowBlocksToGpu in include/disc/Conversion/Cuda/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "disc/Conversion/Cuda/Passes.h"

#include "GpuLoopUtils.h"
#include "RowKernels.h"

#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
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

/// Combines `value` (of the combiner's type `type`) across the threads
/// that reduce it: the block (gpu.all_reduce: shuffles within each warp,
/// then shared memory) or the warp (a butterfly of xor shuffles, every
/// lane left with the total). `combiner` is the scf.reduce region's block.
Value combineAcrossThreads(OpBuilder &b, Location loc, Value value,
                           Block &combiner, bool warp) {
  Type type = value.getType();
  Type wide = shuffleType(type);
  auto ret = cast<scf::ReduceReturnOp>(combiner.getTerminator());
  // combine(lhs, rhs) in `wide`, the combiner computing in `type`.
  auto combine = [&](OpBuilder &at, Value lhs, Value rhs) {
    IRMapping inner;
    inner.map(combiner.getArgument(0), convert(at, loc, lhs, type));
    inner.map(combiner.getArgument(1), convert(at, loc, rhs, type));
    for (Operation &step : combiner.without_terminator())
      at.clone(step, inner);
    return convert(at, loc, inner.lookupOrDefault(ret.getResult()), wide);
  };
  Value partial = convert(b, loc, value, wide);
  if (warp) {
    // Each step combines lanes `offset` apart; every lane combines the same
    // two values (in the other order: the combiners are commutative), so
    // all lanes end with the same result.
    for (int32_t offset = disc::cuda::kWarpSize / 2; offset >= 1;
         offset /= 2) {
      auto shuffle =
          gpu::ShuffleOp::create(b, loc, partial, offset,
                                 disc::cuda::kWarpSize, gpu::ShuffleMode::XOR);
      partial = combine(b, partial, shuffle.getShuffleResult());
    }
    return convert(b, loc, partial, type);
  }
  auto allReduce = gpu::AllReduceOp::create(
      b, loc, partial, gpu::AllReduceOperationAttr(), /*uniform=*/true);
  Block *body = new Block();
  allReduce.getBody().push_back(body);
  Value lhs = body->addArgument(wide, loc);
  Value rhs = body->addArgument(wide, loc);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(body);
    gpu::YieldOp::create(b, loc, combine(b, lhs, rhs));
  }
  return convert(b, loc, allReduce.getResult(), type);
}

/// Where a block's row caches (kRowCacheAttr) go in its dynamic shared
/// memory: cache by cache in the order the row's body allocates them, each
/// `rowsPerBlock` slices (one per row of the block) of rowCacheBytes.
struct RowCacheLayout {
  int64_t rowsPerBlock = 1;
  /// The block's row: 0, or the warp (thread_y) of a warp-per-row block.
  Value slot;
  /// The block's dynamic shared memory (created at the first cache) and
  /// the bytes of it the caches so far take.
  Value shared;
  Value used;
};

/// The row caches of `nest`, in order.
SmallVector<memref::AllocOp> rowCachesIn(Operation *nest) {
  SmallVector<memref::AllocOp> caches;
  nest->walk([&](memref::AllocOp alloc) {
    if (disc::cuda::isRowCache(alloc))
      caches.push_back(alloc);
  });
  return caches;
}

/// Host code: the dynamic shared memory a block of `nest` needs for its
/// row caches (an i32 for gpu.launch), or null without caches. Their
/// sizes are host values (planRowCache).
Value rowCacheSharedBytes(OpBuilder &b, Location loc, Operation *nest,
                          int64_t rowsPerBlock) {
  SmallVector<memref::AllocOp> caches = rowCachesIn(nest);
  if (caches.empty())
    return nullptr;
  Value total = arith::ConstantIndexOp::create(b, loc, 0);
  for (memref::AllocOp cache : caches)
    total = arith::AddIOp::create(
        b, loc, total,
        disc::cuda::rowCacheBytes(b, loc, cache, cache.getDynamicSizes()[0]));
  total = arith::MulIOp::create(
      b, loc, total, arith::ConstantIndexOp::create(b, loc, rowsPerBlock));
  return arith::IndexCastOp::create(b, loc, b.getI32Type(), total);
}

/// The slice of the block's dynamic shared memory that row cache `cache`
/// becomes for this row (RowCacheLayout).
Value lowerRowCache(OpBuilder &b, Location loc, memref::AllocOp cache,
                    RowCacheLayout &layout) {
  MLIRContext *ctx = b.getContext();
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  if (!layout.shared) {
    layout.shared = gpu::DynamicSharedMemoryOp::create(
        b, loc,
        MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                        MemRefLayoutAttrInterface(), workgroup));
    layout.used = arith::ConstantIndexOp::create(b, loc, 0);
  }
  Value count = cache.getDynamicSizes()[0];
  Value bytes = disc::cuda::rowCacheBytes(b, loc, cache, count);
  Value offset = arith::AddIOp::create(
      b, loc, layout.used, arith::MulIOp::create(b, loc, layout.slot, bytes));
  layout.used = arith::AddIOp::create(
      b, loc, layout.used,
      arith::MulIOp::create(
          b, loc, bytes,
          arith::ConstantIndexOp::create(b, loc, layout.rowsPerBlock)));
  auto type = MemRefType::get({ShapedType::kDynamic},
                              cache.getType().getElementType(),
                              MemRefLayoutAttrInterface(), workgroup);
  return memref::ViewOp::create(b, loc, type, layout.shared, offset,
                                ValueRange{count});
}

/// A step loop of a row's body: `scf.for` without results whose body holds
/// thread loops (and row-level ops, and step loops), every thread running
/// its iterations (disc-cuda-sort-loops: the stages of a bitonic sort).
bool isStepLoop(Operation *op) {
  auto loop = dyn_cast<scf::ForOp>(op);
  return loop && loop.getNumResults() == 0;
}

/// Lowers the ops of one row's body (`body`, without its terminator) at
/// `b`: row-level ops as they are (a row cache: its slice of shared
/// memory, `layout`; its dealloc dropped), each thread loop as its body
/// with the loop's thread the given `thread` and its reductions combined
/// across the block or the warp. Memory written before a thread loop, or
/// by one, is made visible to the threads of the next: a block barrier, or
/// a warp barrier (bar.warp.sync, which also orders the lanes' memory
/// accesses). A step loop stays a loop, its body lowered the same way.
/// Returns whether row-level stores are pending at the end of `body` (a
/// step loop's body synchronizes before its next iteration then).
bool lowerRowBody(OpBuilder &b, Location loc, Block &body, IRMapping &mapping,
                  Value thread, bool warp, RowCacheLayout &layout) {
  auto synchronize = [&]() {
    if (!warp) {
      gpu::BarrierOp::create(b, loc);
      return;
    }
    Value allLanes = arith::ConstantIntOp::create(b, loc, b.getI32Type(), -1);
    NVVM::SyncWarpOp::create(b, loc, allLanes);
  };
  // Row-level stores since the last barrier: the next thread loop may
  // read what they wrote.
  bool pendingStores = false;
  for (Operation &op : body.without_terminator()) {
    if (auto alloc = dyn_cast<memref::AllocOp>(op);
        alloc && disc::cuda::isRowCache(alloc)) {
      mapping.map(alloc.getResult(), lowerRowCache(b, loc, alloc, layout));
      continue;
    }
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op);
        dealloc && disc::cuda::isRowCache(dealloc.getMemref()))
      continue; // shared memory lives as long as the block
    if (isStepLoop(&op)) {
      auto loop = cast<scf::ForOp>(op);
      if (pendingStores)
        synchronize();
      pendingStores = false;
      auto steps = scf::ForOp::create(
          b, loc, mapping.lookupOrDefault(loop.getLowerBound()),
          mapping.lookupOrDefault(loop.getUpperBound()),
          mapping.lookupOrDefault(loop.getStep()));
      mapping.map(loop.getInductionVar(), steps.getInductionVar());
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(steps.getBody()->getTerminator());
      if (lowerRowBody(b, loc, *loop.getBody(), mapping, thread, warp,
                       layout))
        synchronize();
      continue;
    }
    if (!isThreadLoop(&op)) {
      b.clone(op, mapping);
      pendingStores |= disc::cuda::writesMemory(&op);
      continue;
    }
    auto loop = cast<scf::ParallelOp>(op);
    if (pendingStores)
      synchronize();
    pendingStores = false;
    mapping.map(loop.getInductionVars()[0], thread);
    for (Operation &inner : loop.getBody()->without_terminator())
      b.clone(inner, mapping);
    auto reduce = cast<scf::ReduceOp>(loop.getBody()->getTerminator());
    for (auto [i, operand] : llvm::enumerate(reduce.getOperands()))
      mapping.map(loop.getResult(i),
                  combineAcrossThreads(b, loc, mapping.lookup(operand),
                                       reduce.getReductions()[i].front(),
                                       warp));
    // What this loop wrote may be read by other threads next.
    if (disc::cuda::writesMemory(loop))
      synchronize();
  }
  return pendingStores;
}

/// Checks that the region-holding ops of `body` (in a nest marked `mark`)
/// are thread loops running 0 to `threads` step 1 (one `threads` for all;
/// null: any, returned), or step loops holding such.
LogicalResult checkThreadLoops(Block &body, StringRef mark, Value &threads) {
  for (Operation &op : body.without_terminator()) {
    if (op.getNumRegions() == 0)
      continue;
    if (isStepLoop(&op)) {
      if (failed(checkThreadLoops(*cast<scf::ForOp>(op).getBody(), mark,
                                  threads)))
        return failure();
      continue;
    }
    if (!isThreadLoop(&op))
      return op.emitOpError("in a ")
             << mark
             << " nest must be a thread loop (scf.parallel mapped to "
                "thread_x)";
    auto loop = cast<scf::ParallelOp>(op);
    if (!isConstantIntValue(loop.getLowerBound()[0], 0) ||
        !isConstantIntValue(loop.getStep()[0], 1) ||
        (threads && loop.getUpperBound()[0] != threads))
      return op.emitOpError("thread loops of a ")
             << mark << " nest must all run 0 to the same thread count step 1";
    threads = loop.getUpperBound()[0];
  }
  return success();
}

/// A gpu.launch in place of `nest` (one block per iteration) with blocks
/// of `threadsX` x `threadsY` threads; `b` is left inside it, before its
/// terminator, and `mapping` maps the nest's induction variable to the
/// block id.
gpu::LaunchOp createLaunch(OpBuilder &b, scf::ParallelOp nest, Value threadsX,
                           int64_t threadsY, IRMapping &mapping) {
  Location loc = nest.getLoc();
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value y = threadsY == 1 ? one
                          : arith::ConstantIndexOp::create(b, loc, threadsY);
  Value shared = rowCacheSharedBytes(b, loc, nest, threadsY);
  auto launch = gpu::LaunchOp::create(b, loc, nest.getUpperBound()[0], one,
                                      one, threadsX, y, one, shared);
  b.setInsertionPointToEnd(&launch.getBody().front());
  auto terminator = gpu::TerminatorOp::create(b, loc);
  b.setInsertionPoint(terminator);
  mapping.map(nest.getInductionVars()[0], launch.getBlockIds().x);
  return launch;
}

struct RowBlocksToGpuPass
    : public disc::impl::DiscRowBlocksToGpuBase<RowBlocksToGpuPass> {
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> nests;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (loop->hasAttr(disc::cuda::kRowBlockAttr) ||
          loop->hasAttr(disc::cuda::kRowWarpAttr))
        nests.push_back(loop);
    });
    for (scf::ParallelOp nest : nests)
      if (failed(nest->hasAttr(disc::cuda::kRowWarpAttr) ? lowerWarps(nest)
                                                          : lower(nest)))
        return signalPassFailure();
  }

  LogicalResult lower(scf::ParallelOp nest) {
    if (nest.getNumLoops() != 1 || !isConstantIntValue(nest.getLowerBound()[0], 0) ||
        !isConstantIntValue(nest.getStep()[0], 1))
      return nest.emitOpError("marked disc.row_block must run 0 to rows "
                              "step 1");
    Value threads;
    if (failed(checkThreadLoops(*nest.getBody(), disc::cuda::kRowBlockAttr,
                                threads)))
      return failure();
    if (!threads)
      return nest.emitOpError("marked disc.row_block has no thread loop");

    OpBuilder b(nest);
    IRMapping mapping;
    gpu::LaunchOp launch = createLaunch(b, nest, threads, 1, mapping);
    RowCacheLayout layout;
    layout.slot = arith::ConstantIndexOp::create(b, nest.getLoc(), 0);
    lowerRowBody(b, nest.getLoc(), *nest.getBody(), mapping,
                 launch.getThreadIds().x, /*warp=*/false, layout);
    nest.erase();
    return success();
  }

  /// A warp-per-row nest (RowKernels.h, buildRowWarpNest): blocks of
  /// 32 x R threads, thread_y the warp (row) and thread_x its lane. The
  /// row guard is the same for the 32 lanes of a warp, so each warp's
  /// shuffles and barriers run with all its lanes.
  LogicalResult lowerWarps(scf::ParallelOp nest) {
    auto malformed = [&]() {
      return nest.emitOpError(
          "marked disc.row_warp must run 0 to blocks step 1 around one "
          "scf.parallel over its warps (thread_y, 0 to a constant, step 1) "
          "around one scf.if whose then block holds thread loops of 32 "
          "threads");
    };
    if (nest.getNumLoops() != 1 ||
        !isConstantIntValue(nest.getLowerBound()[0], 0) ||
        !isConstantIntValue(nest.getStep()[0], 1))
      return malformed();
    auto warps = disc::cuda::onlyRegionOp<scf::ParallelOp>(*nest.getBody());
    if (!warps || warps.getNumLoops() != 1 || warps.getNumResults() != 0 ||
        !isConstantIntValue(warps.getLowerBound()[0], 0) ||
        !isConstantIntValue(warps.getStep()[0], 1))
      return malformed();
    std::optional<int64_t> perBlock =
        getConstantIntValue(warps.getUpperBound()[0]);
    if (!perBlock || *perBlock < 1 ||
        *perBlock * disc::cuda::kWarpSize > 1024)
      return malformed();
    auto guard = disc::cuda::onlyRegionOp<scf::IfOp>(*warps.getBody());
    if (!guard || guard.getNumResults() != 0 ||
        !guard.getElseRegion().empty())
      return malformed();
    Value threads;
    if (failed(checkThreadLoops(*guard.thenBlock(), disc::cuda::kRowWarpAttr,
                                threads)))
      return failure();
    if (!threads || !isConstantIntValue(threads, disc::cuda::kWarpSize))
      return malformed();

    OpBuilder b(nest);
    Location loc = nest.getLoc();
    IRMapping mapping;
    gpu::LaunchOp launch = createLaunch(
        b, nest,
        arith::ConstantIndexOp::create(b, loc, disc::cuda::kWarpSize),
        *perBlock, mapping);
    mapping.map(warps.getInductionVars()[0], launch.getThreadIds().y);
    for (Operation &op : nest.getBody()->without_terminator())
      if (&op != warps.getOperation())
        b.clone(op, mapping);
    for (Operation &op : warps.getBody()->without_terminator()) {
      if (&op != guard.getOperation()) {
        b.clone(op, mapping);
        continue;
      }
      auto row = scf::IfOp::create(b, loc, mapping.lookup(guard.getCondition()),
                                   /*withElse=*/false);
      OpBuilder::InsertionGuard inside(b);
      b.setInsertionPoint(row.thenBlock()->getTerminator());
      RowCacheLayout layout;
      layout.rowsPerBlock = *perBlock;
      layout.slot = launch.getThreadIds().y;
      lowerRowBody(b, loc, *guard.thenBlock(), mapping,
                   launch.getThreadIds().x, /*warp=*/true, layout);
    }
    nest.erase();
    return success();
  }
};

} // namespace
