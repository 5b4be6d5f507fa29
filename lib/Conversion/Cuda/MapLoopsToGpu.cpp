//===- MapLoopsToGpu.cpp - host loop nests -> block/thread grids ----------===//
//
// See DiscMapLoopsToGpu in include/disc/Conversion/Cuda/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "disc/Conversion/Cuda/Passes.h"

#include "ColumnLoops.h"
#include "GpuLoopUtils.h"
#include "RowKernels.h"
#include "ScatterLoops.h"
#include "VectorGrids.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace disc {
#define GEN_PASS_DEF_DISCMAPLOOPSTOGPU
#include "disc/Conversion/Cuda/Passes.h.inc"
} // namespace disc

using namespace mlir;
using disc::cuda::mappingFor;
using disc::cuda::tripCount;

namespace {

/// Whether `op` reads or writes memref contents (itself or nested ops).
bool touchesMemory(Operation *op) {
  if (isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp>(op))
    return false;
  WalkResult result = op->walk([](Operation *nested) {
    if (isa<memref::LoadOp, memref::StoreOp, memref::AtomicRMWOp,
            memref::CopyOp, memref::GenericAtomicRMWOp>(nested))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

struct MapLoopsToGpuPass
    : public disc::impl::DiscMapLoopsToGpuBase<MapLoopsToGpuPass> {
  using DiscMapLoopsToGpuBase::DiscMapLoopsToGpuBase;

  void runOnOperation() override {
    // A module pass: row kernels declare the variant counter hook.
    for (auto func : llvm::to_vector(getOperation().getOps<func::FuncOp>()))
      if (!func.isExternal() && failed(mapFunction(func)))
        return signalPassFailure();
  }

  LogicalResult mapFunction(func::FuncOp func) {
    if (reductionSlots < 0 || reductionSlots > 65536) {
      func.emitError() << "disc-map-loops-to-gpu: reduction-slots must be in "
                          "[0, 65536], got "
                       << static_cast<int64_t>(reductionSlots);
      return failure();
    }
    if (columnThreads < 0 || columnThreads > (int64_t{1} << 24)) {
      func.emitError() << "disc-map-loops-to-gpu: column-threads must be in "
                          "[0, 16777216], got "
                       << static_cast<int64_t>(columnThreads);
      return failure();
    }
    if (rowCacheBytes < 0 || rowCacheBytes > kMaxRowCacheBytes) {
      func.emitError() << "disc-map-loops-to-gpu: row-cache-bytes must be "
                          "in [0, 45056], got "
                       << static_cast<int64_t>(rowCacheBytes);
      return failure();
    }
    if (index32Limit != 0 &&
        (index32Limit < blockSize || index32Limit > kMaxIndex32)) {
      func.emitError() << "disc-map-loops-to-gpu: index32-limit must be 0 "
                          "or in [block-size, 2147483647], got "
                       << static_cast<int64_t>(index32Limit);
      return failure();
    }
    if (blockSize < 1 || blockSize > 1024) {
      func.emitError() << "disc-map-loops-to-gpu: block-size must be in "
                          "[1, 1024], got "
                       << blockSize;
      return failure();
    }
    parallelizeWholeReductions(func);
    disc::cuda::parallelizeScatterLoops(func);
    disc::cuda::collapseOuterReductionLoops(func);
    disc::cuda::interchangeColumnLoops(func);
    if (failed(checkSupported(func)))
      return failure();
    hostAllocasToAllocs(func);
    globalsToDeviceBuffers(func);
    copiesToLoops(func);
    if (failed(wrapHostMemoryAccesses(func)))
      return failure();
    SmallVector<scf::ParallelOp> outermost;
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (auto parallel = dyn_cast<scf::ParallelOp>(op)) {
        outermost.push_back(parallel);
        return WalkResult::skip();
      }
      return WalkResult::advance();
    });
    for (scf::ParallelOp loop : outermost)
      if (failed(mapNest(loop)))
        return failure();
    return success();
  }

  /// One outermost parallel loop -> grids. A row kernel (RowKernels.h)
  /// runs one row per thread, per warp or per block, chosen per call from
  /// the row length and the number of rows (rowVariantCondition);
  /// `row-variant` forces one (tests, A/B runs).
  LogicalResult mapNest(scf::ParallelOp loop) {
    if (rowUnroll < 1 || rowUnroll > 16)
      return loop.emitError() << "disc-map-loops-to-gpu: row-unroll must be "
                                 "1 to 16, got "
                              << static_cast<int64_t>(rowUnroll);
    if (rowVariant != "auto" && rowVariant != "thread" &&
        rowVariant != "warp" && rowVariant != "block")
      return loop.emitError() << "disc-map-loops-to-gpu: row-variant must be "
                                 "auto, thread, warp or block, got '"
                              << rowVariant << "'";
    if (loop->hasAttr(disc::cuda::kColumnNestAttr)) {
      loop->removeAttr(disc::cuda::kColumnNestAttr);
      return mapColumnNest(loop);
    }
    std::string why;
    std::optional<disc::cuda::RowKernel> rows =
        disc::cuda::analyzeRowKernel(loop, why);
    if (!rows) {
      disc::cuda::sequentializeParallelLoopsIn(loop);
      return mapToGrid(loop, /*logNoVector=*/log);
    }
    for (Operation *phase : rows->phases)
      disc::cuda::sequentializeParallelLoopsIn(phase);
    OpBuilder b(loop);
    Location loc = loop.getLoc();
    Value rowLength = rowVariant == "thread"
                          ? Value()
                          : disc::cuda::hostRowLength(b, *rows);
    using disc::cuda::RowVariant;
    // Row caches (RowKernels.h, RowCachePlan) in the block and warp
    // variants: a kernel of their own, taken per call when one block's
    // caches fit in `row-cache-bytes` of shared memory.
    std::optional<disc::cuda::RowCachePlan> cache;
    if (rowCacheBytes > 0 && rowVariant != "thread") {
      FailureOr<std::optional<disc::cuda::RowCachePlan>> planned =
          disc::cuda::planRowCache(b, *rows);
      if (failed(planned))
        return failure();
      cache = std::move(*planned);
    }
    // Vector phases (RowKernels.h, RowVectorPlan) in the block and warp
    // variants, chosen per call by the host: a uniform branch in each
    // planned phase, not a kernel of its own. Planned for the kernel and
    // for its cached clone (whose accesses differ).
    struct Vectors {
      std::optional<disc::cuda::RowVectorPlan> plan;
      Value ok;
    } vectors, cachedVectors;
    auto planVectors = [&](const disc::cuda::RowKernel &kernel,
                           Vectors &into) {
      if (!rowVectors || rowVariant == "thread")
        return;
      into.plan = disc::cuda::planRowVectors(b, kernel);
      if (into.plan)
        into.ok = disc::cuda::rowVectorCondition(b, loc, *into.plan);
    };
    planVectors(*rows, vectors);
    if (cache)
      planVectors(cache->kernel, cachedVectors);
    if (log && rowVariant != "thread") {
      size_t cached = 0;
      if (cache)
        cache->kernel.loop.walk([&](memref::AllocOp alloc) {
          cached += disc::cuda::isRowCache(alloc);
        });
      llvm::errs() << "[disc] cuda: row kernel at " << loop.getLoc() << ": "
                   << "loops over the row: " << rows->phases.size()
                   << ", with a vector path: "
                   << (vectors.plan ? vectors.plan->accesses.size() : 0)
                   << ", rows kept in shared memory: " << cached << "\n";
    }
    auto vectorChoice = [&](OpBuilder &at,
                            Vectors &from) -> disc::cuda::RowVectorChoice {
      if (!from.plan)
        return {};
      return {&*from.plan, flagNoted(at, loc, from.ok, RowVariant::VectorRows,
                                     RowVariant::ScalarRows)};
    };
    // Whether a block of `rowsPerBlock` rows' caches fit (host code).
    auto cacheFits = [&](OpBuilder &at, int64_t rowsPerBlock) -> Value {
      Value bytes = arith::MulIOp::create(
          at, loc, cache->hostBytesPerRow,
          arith::ConstantIndexOp::create(at, loc, rowsPerBlock));
      return arith::CmpIOp::create(
          at, loc, arith::CmpIPredicate::ule, bytes,
          arith::ConstantIndexOp::create(at, loc, rowCacheBytes));
    };
    // `build(at, kernel, vectors)` with the row caches when they fit,
    // `rowsPerBlock` rows a block, else without. The uncached kernel then
    // runs only rows too long for the caches (thousands of elements), and
    // has no vector path: a quarter less code to compile for a kernel that
    // rarely runs.
    Vectors none;
    auto withCache = [&](OpBuilder &at, int64_t rowsPerBlock, auto build) {
      if (!cache) {
        build(at, *rows, vectors);
        return;
      }
      scf::IfOp choice =
          variantChoice(at, loc, cacheFits(at, rowsPerBlock),
                        RowVariant::CachedRows, RowVariant::UncachedRows);
      OpBuilder cachedBuilder(choice.thenBlock()->getTerminator());
      build(cachedBuilder, cache->kernel, cachedVectors);
      OpBuilder plainBuilder(choice.elseBlock()->getTerminator());
      build(plainBuilder, *rows, none);
    };
    auto perBlock = [&](OpBuilder &at) {
      withCache(at, 1,
                [&](OpBuilder &in, const disc::cuda::RowKernel &kernel,
                    Vectors &phases) {
                  Value threads =
                      disc::cuda::threadsForRow(in, loc, rowLength);
                  disc::cuda::buildRowBlockNest(in, kernel, threads,
                                                rowUnroll,
                                                vectorChoice(in, phases));
                });
    };
    auto buildWarp = [&](OpBuilder &in, const disc::cuda::RowKernel &kernel,
                         Vectors &phases) {
      disc::cuda::buildRowWarpNest(in, kernel, rowUnroll,
                                   vectorChoice(in, phases));
    };
    auto perWarp = [&](OpBuilder &at) {
      withCache(at, disc::cuda::kRowsPerWarpBlock, buildWarp);
    };
    // The cached clone is a template for the nests: gone once they are
    // built.
    auto eraseCacheClone = [&]() {
      if (cache)
        cache->kernel.loop.erase();
    };
    if (rowVariant == "block" || rowVariant == "warp") {
      const bool block = rowVariant == "block";
      noteVariant(b, loc, block ? RowVariant::PerBlock : RowVariant::PerWarp);
      if (block)
        perBlock(b);
      else
        perWarp(b);
      eraseCacheClone();
      loop.erase();
      return success();
    }
    if (rowVariant == "auto" && rowLength) {
      // Rows of 32 elements or more: a warp or a block per row.
      Value longRows = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::uge, rowLength,
          arith::ConstantIndexOp::create(b, loc, kMinRowPerWarp));
      scf::IfOp choice = variantChoice(b, loc, longRows, std::nullopt,
                                       RowVariant::PerThread);
      OpBuilder thenBuilder(choice.thenBlock()->getTerminator());
      // A warp per row: rows of up to kMaxRowPerWarp elements, or of up
      // to kMaxRowPerWarpWhenMany when there are enough rows to fill the
      // GPU a warp each.
      Value numRows = arith::ConstantIndexOp::create(thenBuilder, loc, 1);
      for (auto [lb, ub, step] :
           llvm::zip(loop.getLowerBound(), loop.getUpperBound(),
                     loop.getStep()))
        numRows = thenBuilder.createOrFold<arith::MulIOp>(
            loc, numRows, tripCount(thenBuilder, loc, lb, ub, step));
      auto cmp = [&](arith::CmpIPredicate predicate, Value lhs, int64_t rhs) {
        return arith::CmpIOp::create(
            thenBuilder, loc, predicate, lhs,
            arith::ConstantIndexOp::create(thenBuilder, loc, rhs));
      };
      Value shortRows =
          cmp(arith::CmpIPredicate::ule, rowLength, kMaxRowPerWarp);
      Value manyRows = arith::AndIOp::create(
          thenBuilder, loc,
          cmp(arith::CmpIPredicate::ule, rowLength, kMaxRowPerWarpWhenMany),
          cmp(arith::CmpIPredicate::uge, numRows, kManyRows));
      Value warpRows =
          arith::OrIOp::create(thenBuilder, loc, shortRows, manyRows);
      // With row caches, a warp block's 8 rows must fit them: rows that
      // do not go to the block variant (cached where one row fits), so
      // the warp variant needs no uncached kernel.
      if (cache)
        warpRows = arith::AndIOp::create(
            thenBuilder, loc, warpRows,
            cacheFits(thenBuilder, disc::cuda::kRowsPerWarpBlock));
      scf::IfOp warpOrBlock =
          variantChoice(thenBuilder, loc, warpRows, RowVariant::PerWarp,
                        RowVariant::PerBlock);
      OpBuilder warpBuilder(warpOrBlock.thenBlock()->getTerminator());
      if (cache) {
        noteVariant(warpBuilder, loc, RowVariant::CachedRows);
        buildWarp(warpBuilder, cache->kernel, cachedVectors);
      } else {
        perWarp(warpBuilder);
      }
      OpBuilder blockBuilder(warpOrBlock.elseBlock()->getTerminator());
      perBlock(blockBuilder);
      loop->moveBefore(choice.elseBlock()->getTerminator());
    } else {
      noteVariant(b, loc, RowVariant::PerThread);
    }
    eraseCacheClone();
    disc::cuda::sequentializeParallelLoopsIn(loop);
    return mapToGrid(loop);
  }

  /// A column nest (ColumnLoops.h: one thread per column, each over all
  /// the rows) with too few columns to fill the GPU also gets a variant
  /// that splits each column's rows into parts: one thread per part and
  /// column, partial results combined per column by a second grid. The
  /// host picks per call: the split where columnParts (about
  /// `column-threads` threads) is 2 or more. [4096, 768] summed over dim 0
  /// is 768 threads of 4096 rows each, 3 of an H100's 132
  /// multiprocessors; split, 64 parts of 64 rows: 49152 threads.
  LogicalResult mapColumnNest(scf::ParallelOp loop) {
    scf::ForOp rows = columnThreads > 0
                          ? disc::cuda::splittableColumnLoop(loop)
                          : scf::ForOp();
    if (!rows)
      return mapToGrid(loop);
    OpBuilder b(loop);
    Location loc = loop.getLoc();
    Value parts = disc::cuda::columnParts(b, loc, loop, rows, columnThreads);
    Value split = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::uge, parts,
        arith::ConstantIndexOp::create(b, loc, 2));
    scf::IfOp choice =
        variantChoice(b, loc, split, disc::cuda::RowVariant::ColumnSplit,
                      disc::cuda::RowVariant::ColumnPerThread);
    OpBuilder thenBuilder(choice.thenBlock()->getTerminator());
    auto [partial, combine] =
        disc::cuda::splitColumnNest(thenBuilder, loop, rows, parts);
    loop->moveBefore(choice.elseBlock()->getTerminator());
    if (failed(mapToGrid(partial)) || failed(mapToGrid(combine)))
      return failure();
    return mapToGrid(loop);
  }

  /// The most shared memory a block's row caches may take: 48 KiB (the
  /// most a launch gets without opting in per kernel) less 4 KiB for the
  /// block reductions' own shared memory.
  static constexpr int64_t kMaxRowCacheBytes = 45056;

  /// The largest linear index a 32-bit grid may compute.
  static constexpr int64_t kMaxIndex32 = (int64_t{1} << 31) - 1;

  /// Rows shorter than this run one per thread.
  static constexpr int64_t kMinRowPerWarp = 32;
  /// Rows up to this long run one per warp (a block per row would be one
  /// warp: 32 threads of about 4 elements each).
  static constexpr int64_t kMaxRowPerWarp = 128;
  /// Rows up to this long run one per warp when there are at least
  /// kManyRows of them (65536 threads, a warp each); fewer rows run one
  /// per block, where each row has more threads.
  static constexpr int64_t kMaxRowPerWarpWhenMany = 1024;
  static constexpr int64_t kManyRows = 2048;

  /// The host's per-call choice between variants of one kernel: `scf.if
  /// %condition` marked disc.row_variants (kernel counts take its else
  /// branch), each branch starting with its variant's note, if any.
  scf::IfOp variantChoice(OpBuilder &b, Location loc, Value condition,
                          std::optional<disc::cuda::RowVariant> thenNote,
                          std::optional<disc::cuda::RowVariant> elseNote) {
    auto choice = scf::IfOp::create(b, loc, condition, /*withElse=*/true);
    choice->setAttr(disc::cuda::kRowVariantsAttr, b.getUnitAttr());
    for (auto [block, note] : {std::make_pair(choice.thenBlock(), thenNote),
                               std::make_pair(choice.elseBlock(), elseNote)})
      if (note) {
        OpBuilder at(block->getTerminator());
        noteVariant(at, loc, *note);
      }
    return choice;
  }

  /// `disc_ral_note_variant(id)`: counts the variant chosen for this call.
  void noteVariant(OpBuilder &b, Location loc, disc::cuda::RowVariant variant) {
    auto module = b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
    constexpr llvm::StringLiteral name = "disc_ral_note_variant";
    auto hook = module.lookupSymbol<func::FuncOp>(name);
    if (!hook) {
      OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
      hook = func::FuncOp::create(
          top, loc, name,
          FunctionType::get(b.getContext(), {b.getI64Type()}, {}));
      hook.setPrivate();
    }
    Value id = arith::ConstantIntOp::create(b, loc, b.getI64Type(),
                                            static_cast<int64_t>(variant));
    func::CallOp::create(b, loc, hook, ValueRange{id});
  }

  /// The atomic kind and identity of a reduction step `combine(acc, x)`,
  /// for the combiners a GPU has atomics for (floats: an addition marked
  /// reassociable; integers: add, or, and, min, max). None otherwise (float
  /// max/min: their NaN rule has no identity).
  static std::optional<std::pair<arith::AtomicRMWKind, TypedAttr>>
  atomicCombiner(Operation *combine) {
    std::optional<arith::AtomicRMWKind> kind =
        disc::cuda::atomicKindOf(combine);
    if (!kind)
      return std::nullopt;
    Type type = combine->getResult(0).getType();
    Builder b(combine->getContext());
    unsigned w = type.getIntOrFloatBitWidth();
    auto value = [&](APInt v) { return (TypedAttr)b.getIntegerAttr(type, v); };
    using K = arith::AtomicRMWKind;
    switch (*kind) {
    case K::addf:
      if (!bitEnumContainsAll(cast<arith::AddFOp>(combine).getFastmath(),
                              arith::FastMathFlags::reassoc))
        return std::nullopt;
      // -0.0: the identity of addition for every x, -0.0 included.
      return std::make_pair(*kind, (TypedAttr)b.getFloatAttr(type, -0.0));
    case K::addi:
    case K::ori:
    case K::maxu:
      return std::make_pair(*kind, value(APInt(w, 0)));
    case K::andi:
      return std::make_pair(*kind, value(APInt::getAllOnes(w)));
    case K::maxs:
      return std::make_pair(*kind, value(APInt::getSignedMinValue(w)));
    case K::mins:
      return std::make_pair(*kind, value(APInt::getSignedMaxValue(w)));
    case K::minu:
      return std::make_pair(*kind, value(APInt::getMaxValue(w)));
    default:
      return std::nullopt;
    }
  }

  /// A reduction of a whole range into one element in the host code
  ///   %init = memref.load %acc[]   (or a value the host computes)
  ///   %r = scf.for %i = lb to ub step s iter_args(%x = %init) {
  ///     ... reads only ...; scf.yield combine(%x, ...)
  ///   }
  ///   memref.store %r, %acc[]
  /// would run on one GPU thread. A range known to be at most 2048 long
  /// becomes a row kernel of one row (one block reduces it). Longer ones
  /// are cut into parts of `chunk` consecutive iterations (at least
  /// kMinPartLength; at most reduction-slots parts, default 4096), all
  /// sized on the host: a row kernel of `parts` rows reduces each part
  /// from the identity into a slot of its own (a block per row: coalesced
  /// reads, the block's threads combined in shared memory), then a one-row
  /// row kernel combines %init, the slots and the last iterations (fewer
  /// than a chunk) into %acc. Two launches at most (one when the range is
  /// shorter than a chunk: the parts' grid is empty), no fill, no atomics,
  /// the same result on every call. Until 2026-11-29 threads of 64 strided
  /// elements each combined their part with an atomic into one of 128
  /// slots filled with the identity first (three launches; convtasnet's
  /// global layer norms make 147 such sums of 2M elements per call).
  /// With reduction-slots=0 (DISC_CUDA_REDUCTION_SLOTS, to compare on a
  /// GPU) atomic combiners put every thread's atomic on %acc, as before
  /// the slots. Float sums add in another order than on the CPU (the
  /// addition is marked reassociable; PyTorch's own GPU sums differ from
  /// its CPU ones the same way). Last, finishOneRowKernels.
  void parallelizeWholeReductions(func::FuncOp func) {
    for (Block &block : func.getBody())
      for (auto loop : llvm::to_vector(block.getOps<scf::ForOp>())) {
        while (scf::ForOp collapsed = collapseNestedReduction(loop))
          loop = collapsed;
        parallelizeWholeReduction(loop);
      }
    finishOneRowKernels(func);
  }

  /// A reduction over a strided 2-d view (a sum of x[:, :, 1:-1]) is two
  /// nested loops carrying one value:
  ///   scf.for %i iter_args(%a = %init) {
  ///     %r = scf.for %j iter_args(%b = %a) { ... }; scf.yield %r }
  /// With the inner bounds independent of %i and nothing but pure ops
  /// around the inner loop, it becomes one loop over k in [0, I * J),
  /// (%i, %j) = (k / J, k % J): the same combines in the same order, a
  /// range parallelizeWholeReduction takes. Returns the new loop, or null.
  static scf::ForOp collapseNestedReduction(scf::ForOp outer) {
    if (outer.getNumRegionIterArgs() != 1)
      return {};
    auto inner = disc::cuda::onlyRegionOp<scf::ForOp>(*outer.getBody());
    for (Operation &op : outer.getBody()->without_terminator())
      if (&op != inner.getOperation() && !isMemoryEffectFree(&op))
        return {};
    auto yield = cast<scf::YieldOp>(outer.getBody()->getTerminator());
    if (!inner || inner.getNumRegionIterArgs() != 1 ||
        inner.getInitArgs()[0] != outer.getRegionIterArgs()[0] ||
        yield.getOperand(0) != inner.getResult(0) ||
        !outer.getRegionIterArgs()[0].hasOneUse() ||
        !disc::cuda::definedOutside(inner.getLowerBound(), outer) ||
        !disc::cuda::definedOutside(inner.getUpperBound(), outer) ||
        !disc::cuda::definedOutside(inner.getStep(), outer))
      return {};
    OpBuilder b(outer);
    Location loc = outer.getLoc();
    Value outerCount = tripCount(b, loc, outer.getLowerBound(),
                                 outer.getUpperBound(), outer.getStep());
    Value innerCount = tripCount(b, loc, inner.getLowerBound(),
                                 inner.getUpperBound(), inner.getStep());
    Value total = b.createOrFold<arith::MulIOp>(loc, outerCount, innerCount);
    auto collapsed = scf::ForOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, 0), total,
        arith::ConstantIndexOp::create(b, loc, 1), outer.getInitArgs(),
        [&](OpBuilder &fb, Location floc, Value k, ValueRange args) {
          SmallVector<Value> ivs = disc::cuda::delinearize(
              fb, floc, k, {outerCount, innerCount},
              {outer.getLowerBound(), inner.getLowerBound()},
              {outer.getStep(), inner.getStep()});
          IRMapping mapping;
          mapping.map(outer.getInductionVar(), ivs[0]);
          mapping.map(inner.getInductionVar(), ivs[1]);
          mapping.map(inner.getRegionIterArgs()[0], args[0]);
          for (Operation &op : outer.getBody()->without_terminator())
            if (&op != inner.getOperation())
              fb.clone(op, mapping);
          for (Operation &op : inner.getBody()->getOperations())
            fb.clone(op, mapping);
        });
    outer.getResult(0).replaceAllUsesWith(collapsed.getResult(0));
    outer.erase();
    return collapsed;
  }

  void parallelizeWholeReduction(scf::ForOp loop) {
    if (loop.getNumRegionIterArgs() != 1)
      return;
    Value result = loop.getResult(0);
    if (!result.hasOneUse())
      return;
    auto store = dyn_cast<memref::StoreOp>(*result.getUsers().begin());
    if (!store || store->getBlock() != loop->getBlock())
      return;
    Value acc = store.getMemRef();
    auto accType = cast<MemRefType>(acc.getType());
    if (!accType.hasStaticShape() || accType.getNumElements() != 1)
      return;
    // The initial value: the accumulator's own, loaded right before, or a
    // value the host computes (disc-forward-host-scalars forwards a
    // reduction's identity fill).
    Value init = loop.getInitArgs()[0];
    auto load = init.getDefiningOp<memref::LoadOp>();
    if (load) {
      if (!load->hasOneUse() || load->getBlock() != loop->getBlock() ||
          load.getMemRef() != acc || store.getIndices() != load.getIndices())
        return;
    } else {
      DenseMap<Value, bool> memo;
      if (loop->getBlock() != &loop->getParentRegion()->front() ||
          !isa<func::FuncOp>(loop->getParentOp()) ||
          !disc::cuda::hostComputable(init, *loop->getBlock(), memo))
        return;
    }
    BlockArgument iterArg = loop.getRegionIterArgs()[0];
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    Operation *combine = yield.getOperand(0).getDefiningOp();
    if (!combine || combine->getBlock() != loop.getBody() ||
        combine->getNumOperands() != 2 || !iterArg.hasOneUse() ||
        !llvm::is_contained(combine->getOperands(), iterArg))
      return;
    // A combiner without an atomic (float max/min, products) still splits:
    // each thread's partial result goes to a slot of its own.
    auto combiner = atomicCombiner(combine);
    TypedAttr identityAttr = combiner
                                 ? combiner->second
                                 : disc::cuda::reductionIdentity(combine);
    if (!identityAttr)
      return;
    const bool atomic = combiner.has_value();
    // Nothing in the loop, or between the load and the store, writes memory.
    auto writes = [](Operation *op) {
      return op
          ->walk([](Operation *nested) {
            if (isa<memref::StoreOp, memref::AtomicRMWOp,
                    memref::GenericAtomicRMWOp, memref::CopyOp,
                    CallOpInterface>(nested))
              return WalkResult::interrupt();
            return WalkResult::advance();
          })
          .wasInterrupted();
    };
    for (Operation *op = (load ? load.getOperation() : loop.getOperation())
                             ->getNextNode();
         op != store.getOperation(); op = op->getNextNode())
      if (writes(op))
        return;

    OpBuilder b(loop);
    Location loc = loop.getLoc();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value lb = loop.getLowerBound(), ub = loop.getUpperBound(),
          step = loop.getStep();
    Value count = tripCount(b, loc, lb, ub, step);
    // A range known to be at most 2048 long (an index tensor's bounds
    // check) is a row kernel of one row: one block reduces the range from
    // the initial value and stores the result, in one launch (no slots, no
    // atomics, no store of the initial value first). With
    // reduction-slots=0, atomic combiners keep their atomics.
    std::optional<int64_t> knownCount = getConstantIntValue(count);
    if (knownCount && *knownCount <= 32 * 64 &&
        (!atomic || reductionSlots > 0)) {
      auto row = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                         ValueRange{one}, ValueRange{one});
      Operation *terminator = row.getBody()->getTerminator();
      if (load)
        load->moveBefore(terminator);
      loop->moveBefore(terminator);
      store->moveBefore(terminator);
      row->setAttr(kOneRow, UnitAttr::get(row.getContext()));
      return;
    }
    Value identity =
        arith::ConstantOp::create(b, loc, identityAttr).getResult();
    SmallVector<Value> indices(store.getIndices());
    // The body of the original loop at iteration `iv`, combined into `acc`;
    // with `rowOf`, its loads of a buffer there read that buffer's part row
    // at `j` instead.
    auto cloneBody = [&](OpBuilder &fb, Location floc, Value iv, Value acc,
                         const DenseMap<Value, Value> *rowOf = nullptr,
                         Value j = {}) {
      IRMapping mapping;
      mapping.map(loop.getInductionVar(), iv);
      mapping.map(iterArg, acc);
      for (Operation &op : loop.getBody()->without_terminator()) {
        auto read = dyn_cast<memref::LoadOp>(op);
        Value row =
            read && rowOf ? rowOf->lookup(read.getMemRef()) : Value();
        if (row && read.getIndices().size() == 1 &&
            read.getIndices()[0] == loop.getInductionVar()) {
          mapping.map(read.getResult(),
                      memref::LoadOp::create(fb, floc, row, ValueRange{j})
                          .getResult());
          continue;
        }
        fb.clone(op, mapping);
      }
      return mapping.lookup(yield.getOperand(0));
    };
    if (atomic && reductionSlots == 0) {
      // reduction-slots=0: threads of 64 strided elements or more, every
      // thread's atomic straight into %acc, from its initial value.
      Value perThread = arith::ConstantIndexOp::create(b, loc, 64);
      Value threads =
          b.createOrFold<arith::CeilDivUIOp>(loc, count, perThread);
      threads = b.createOrFold<arith::MinUIOp>(
          loc, threads, arith::ConstantIndexOp::create(b, loc, 65536));
      if (!load)
        memref::StoreOp::create(b, loc, init, acc, indices);
      scf::ParallelOp::create(
          b, loc, ValueRange{zero}, ValueRange{threads}, ValueRange{one},
          [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
            Value offset = arith::MulIOp::create(pb, ploc, ivs[0], step);
            Value start = arith::AddIOp::create(pb, ploc, lb, offset);
            Value stride = arith::MulIOp::create(pb, ploc, step, threads);
            auto part = scf::ForOp::create(
                pb, ploc, start, ub, stride, ValueRange{identity},
                [&](OpBuilder &fb, Location floc, Value iv, ValueRange args) {
                  scf::YieldOp::create(fb, floc,
                                       cloneBody(fb, floc, iv, args[0]));
                });
            memref::AtomicRMWOp::create(pb, ploc, combiner->first,
                                        part.getResult(0), acc, indices);
          });
      store.erase();
      loop.erase();
      if (load)
        load.erase();
      return;
    }
    // Parts: the range's first parts * chunk iterations in `parts` rows of
    // `chunk` (at least kMinPartLength; at most reduction-slots parts, or
    // kPlainPartials without an atomic), each reduced by a row kernel
    // (one block per row for such lengths: coalesced reads, the block's
    // threads combined in shared memory) into a slot of its own. No fill,
    // no atomics, the same sum on every call. The row's bounds do not
    // depend on the row, so the host sizes the block from them.
    // The chunk a multiple of kVectorWidth, so that every part starts on
    // a vector boundary.
    const int64_t maxParts = reductionSlots > 0 ? reductionSlots
                                                : kPlainPartials;
    Value chunk = b.createOrFold<arith::MaxUIOp>(
        loc, arith::ConstantIndexOp::create(b, loc, kMinPartLength),
        b.createOrFold<arith::CeilDivUIOp>(
            loc, count, arith::ConstantIndexOp::create(b, loc, maxParts)));
    Value width =
        arith::ConstantIndexOp::create(b, loc, disc::cuda::kVectorWidth);
    chunk = b.createOrFold<arith::MulIOp>(
        loc, b.createOrFold<arith::CeilDivUIOp>(loc, chunk, width), width);
    Value parts = b.createOrFold<arith::DivUIOp>(loc, count, chunk);
    Value tailStart = b.createOrFold<arith::MulIOp>(loc, parts, chunk);
    Value slotBuffer = memref::AllocOp::create(
        b, loc,
        MemRefType::get({ShapedType::kDynamic}, accType.getElementType()),
        ValueRange{parts});
    // A range from 0 in steps of 1 reads its 1-d buffers at the induction
    // variable: each part reads them through a [parts, chunk] view's row
    // instead (its element j at j), the form the row kernel's vector path
    // takes (128-bit loads when the buffer is aligned).
    SmallVector<std::pair<Value, Value>> partViews; // buffer -> its view
    if (isConstantIntValue(lb, 0) && isConstantIntValue(step, 1))
      for (auto read : loop.getBody()->getOps<memref::LoadOp>()) {
        Value buffer = read.getMemRef();
        if (read.getIndices().size() != 1 ||
            read.getIndices()[0] != loop.getInductionVar() ||
            !disc::cuda::definedOutside(buffer, loop) ||
            llvm::any_of(partViews,
                         [&](auto &view) { return view.first == buffer; }))
          continue;
        OpFoldResult zeroIndex = b.getIndexAttr(0), unit = b.getIndexAttr(1);
        auto whole = memref::SubViewOp::create(
            b, loc, buffer, ArrayRef<OpFoldResult>{zeroIndex},
            ArrayRef<OpFoldResult>{tailStart}, ArrayRef<OpFoldResult>{unit});
        FailureOr<MemRefType> rowsType =
            memref::ExpandShapeOp::computeExpandedType(
                whole.getType(), {ShapedType::kDynamic, ShapedType::kDynamic},
                {ReassociationIndices{0, 1}});
        if (failed(rowsType)) {
          whole.erase();
          continue;
        }
        auto rows = memref::ExpandShapeOp::create(
            b, loc, *rowsType, whole, {ReassociationIndices{0, 1}},
            ArrayRef<OpFoldResult>{parts, chunk});
        partViews.push_back({buffer, rows});
      }
    scf::ParallelOp::create(
        b, loc, ValueRange{zero}, ValueRange{parts}, ValueRange{one},
        [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
          Value first = arith::MulIOp::create(pb, ploc, ivs[0], chunk);
          // Row `ivs[0]` of each [parts, chunk] view.
          DenseMap<Value, Value> rowOf;
          for (auto [buffer, rows] : partViews) {
            OpFoldResult zeroIndex = pb.getIndexAttr(0),
                         unit = pb.getIndexAttr(1);
            SmallVector<OpFoldResult> offsets{ivs[0], zeroIndex},
                sizes{unit, chunk}, strides{unit, unit};
            auto rowsType = cast<MemRefType>(rows.getType());
            MemRefType rowType =
                memref::SubViewOp::inferRankReducedResultType(
                    {ShapedType::kDynamic}, rowsType, offsets, sizes,
                    strides);
            rowOf[buffer] = memref::SubViewOp::create(
                pb, ploc, rowType, rows, offsets, sizes, strides);
          }
          auto part = scf::ForOp::create(
              pb, ploc, zero, chunk, one, ValueRange{identity},
              [&](OpBuilder &fb, Location floc, Value j, ValueRange args) {
                Value k = arith::AddIOp::create(fb, floc, first, j);
                Value offset = fb.createOrFold<arith::MulIOp>(floc, k, step);
                Value iv = fb.createOrFold<arith::AddIOp>(floc, lb, offset);
                scf::YieldOp::create(
                    fb, floc, cloneBody(fb, floc, iv, args[0], &rowOf, j));
              });
          memref::StoreOp::create(pb, ploc, part.getResult(0), slotBuffer,
                                  ValueRange{ivs[0]});
        });
    // %acc combined with the slots, then with the range's last iterations
    // (fewer than a chunk): a row kernel of one row, two phases, whose
    // block-per-row variant combines them with the block's threads.
    Value other = combine->getOperand(0) == iterArg ? combine->getOperand(1)
                                                    : combine->getOperand(0);
    auto row = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                       ValueRange{one}, ValueRange{one});
    OpBuilder rb(row.getBody()->getTerminator());
    if (load)
      load->moveBefore(row.getBody()->getTerminator());
    auto gather = scf::ForOp::create(
        rb, loc, zero, parts, one, ValueRange{load ? load.getResult() : init},
        [&](OpBuilder &fb, Location floc, Value k, ValueRange args) {
          Value partial =
              memref::LoadOp::create(fb, floc, slotBuffer, ValueRange{k});
          IRMapping mapping;
          mapping.map(iterArg, args[0]);
          mapping.map(other, partial);
          Operation *combined = fb.clone(*combine, mapping);
          scf::YieldOp::create(fb, floc, combined->getResults());
        });
    auto tail = scf::ForOp::create(
        rb, loc, tailStart, count, one, ValueRange{gather.getResult(0)},
        [&](OpBuilder &fb, Location floc, Value k, ValueRange args) {
          Value offset = fb.createOrFold<arith::MulIOp>(floc, k, step);
          Value iv = fb.createOrFold<arith::AddIOp>(floc, lb, offset);
          scf::YieldOp::create(fb, floc, cloneBody(fb, floc, iv, args[0]));
        });
    store->moveAfter(tail);
    store.getValueMutable().assign(tail.getResult(0));
    b.setInsertionPointAfter(row);
    memref::DeallocOp::create(b, loc, slotBuffer);
    loop.erase();
    row->setAttr(kOneRow, UnitAttr::get(row.getContext()));
  }

  /// Marks the one-row kernels of whole-range reductions, for
  /// finishOneRowKernels.
  static constexpr llvm::StringLiteral kOneRow = "disc.one_row";

  /// The one-row kernels of whole-range reductions, in the function's body:
  /// the scalar work right after each (loads and stores of one-element
  /// buffers, arithmetic, checks: a mean's division, an f64 sum's rounding
  /// to f32, an index tensor's bounds check on its min and max) moves into
  /// it, where it was a one-thread grid of its own; then consecutive ones
  /// (nothing but arithmetic, allocations and deallocs between) become one
  /// kernel (an
  /// index tensor's min, max and check: three launches, now one). Every
  /// thread of the row's block computes and stores the same values.
  void finishOneRowKernels(func::FuncOp func) {
    SmallVector<scf::ParallelOp> rows;
    for (Operation &op : func.getBody().front())
      if (op.hasAttr(kOneRow))
        rows.push_back(cast<scf::ParallelOp>(op));
    // One dominance analysis for all: the moves stay within the body's
    // block, where dominance is its (recomputed) op order.
    DominanceInfo dominance(func);
    for (scf::ParallelOp row : rows)
      sinkScalarWork(row, dominance);
    scf::ParallelOp current;
    SmallVector<Operation *> between;
    for (Operation &op : llvm::make_early_inc_range(func.getBody().front())) {
      if (!op.hasAttr(kOneRow)) {
        auto alloc = dyn_cast<memref::AllocOp>(op);
        if (current && op.getNumRegions() == 0 &&
            !op.hasTrait<OpTrait::IsTerminator>() &&
            (isMemoryEffectFree(&op) || isa<memref::DeallocOp>(op) ||
             (alloc && alloc->getNumOperands() == 0)))
          between.push_back(&op);
        else
          current = nullptr, between.clear();
        continue;
      }
      auto row = cast<scf::ParallelOp>(op);
      if (!current) {
        current = row;
        continue;
      }
      // Arithmetic and allocations the next row uses go before the merged
      // kernel; deallocs stay after it.
      for (Operation *pure : between)
        if (!isa<memref::DeallocOp>(pure))
          pure->moveBefore(current);
      between.clear();
      Operation *terminator = current.getBody()->getTerminator();
      for (Operation &inner :
           llvm::make_early_inc_range(row.getBody()->without_terminator()))
        inner.moveBefore(terminator);
      row->erase();
    }
    for (Operation &op : func.getBody().front())
      op.removeAttr(kOneRow);
  }

  /// Moves into `row` (a one-row kernel of the function's body) the scalar
  /// work on device values that follows it: loads and stores of
  /// one-element buffers at indices the host knows, and the memory-free ops
  /// and checks on what they load, up to the last store or check, when
  /// nothing else uses what they compute. On the way, host arithmetic and
  /// operand-free allocations move before the row, and host checks and
  /// deallocs stay where they are.
  static void sinkScalarWork(scf::ParallelOp row, DominanceInfo &dominance) {
    llvm::SetVector<Operation *> chain;
    SmallVector<Value> freed;
    Operation *last = nullptr;
    auto inChain = [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def && chain.contains(def);
    };
    auto available = [&](Value v) {
      return inChain(v) || dominance.properlyDominates(v, row);
    };
    for (Operation *op = row->getNextNode(), *next = nullptr; op; op = next) {
      next = op->getNextNode();
      if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        freed.push_back(dealloc.getMemref());
        continue;
      }
      if (auto alloc = dyn_cast<memref::AllocOp>(op);
          alloc && alloc->getNumOperands() == 0) {
        op->moveBefore(row);
        continue;
      }
      const bool usesChain = llvm::any_of(op->getOperands(), inChain);
      if (op->hasTrait<OpTrait::IsTerminator>() ||
          !llvm::all_of(op->getOperands(), available))
        break;
      if (isa<cf::AssertOp>(op)) {
        if (usesChain)
          chain.insert(op), last = op;
        continue; // a check of host values stays on the host
      }
      if (isMemoryEffectFree(op) && op->getNumRegions() == 0) {
        if (usesChain)
          chain.insert(op);
        else
          op->moveBefore(row); // host arithmetic
        continue;
      }
      if (!isa<memref::LoadOp, memref::StoreOp>(op))
        break;
      Value memref = disc::cuda::accessedMemref(op);
      if (!disc::cuda::isOneElementMemRef(memref.getType()) ||
          llvm::is_contained(freed, memref))
        break;
      chain.insert(op);
      if (isa<memref::StoreOp>(op))
        last = op;
    }
    if (!last)
      return;
    while (chain.back() != last)
      chain.pop_back();
    // Nothing else may use what the chain computes, but a later check of
    // it (CSE shares one flag between two identical index checks) moves
    // along: it checks the same value, earlier.
    for (size_t k = 0; k < chain.size(); ++k)
      for (Operation *user : chain[k]->getUsers()) {
        if (chain.contains(user))
          continue;
        if (!isa<cf::AssertOp>(user) || user->getBlock() != row->getBlock() ||
            !llvm::all_of(user->getOperands(), available))
          return;
        chain.insert(user);
      }
    Operation *terminator = row.getBody()->getTerminator();
    for (Operation *member : chain)
      member->moveBefore(terminator);
  }

  /// Whole-range reductions without an atomic combiner (and with
  /// reduction-slots=0): at most this many parts.
  static constexpr int64_t kPlainPartials = 4096;
  /// The fewest iterations a whole-range reduction's part reduces (a block
  /// of 256 threads, 16 each).
  static constexpr int64_t kMinPartLength = 4096;

  /// Loop nests that cannot run as a GPU kernel.
  LogicalResult checkSupported(func::FuncOp func) {
    WalkResult result = func.walk([&](Operation *op) {
      if (auto call = dyn_cast<func::CallOp>(op)) {
        bool inLoop = op->getParentOfType<LoopLikeOpInterface>() != nullptr;
        // A helper with a body (convert-math-to-funcs: integer powers) is
        // cloned into the kernel's module by outlining.
        auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            call, call.getCalleeAttr());
        if (callee && !callee.isExternal() && inLoop)
          return WalkResult::advance();
        // A library call of the host code (disc-cuda-library-calls kept
        // only those the target supports) runs on the host between grids.
        if (callee && callee.isExternal() && !inLoop &&
            call.getCallee().starts_with("disc_ral_"))
          return WalkResult::advance();
        op->emitOpError() << "calls @" << call.getCallee()
                          << " (a library or runtime call), which the cuda "
                             "target does not support yet";
        return WalkResult::interrupt();
      }
      bool inLoop = op->getParentOfType<LoopLikeOpInterface>() != nullptr;
      if (!inLoop)
        return WalkResult::advance();
      if (isa<memref::AllocOp, memref::DeallocOp, memref::ReallocOp>(op)) {
        op->emitOpError() << "inside a loop nest cannot run in a GPU kernel "
                             "(heap allocation per iteration)";
        return WalkResult::interrupt();
      }
      if (auto alloca = dyn_cast<memref::AllocaOp>(op))
        if (!alloca.getType().hasStaticShape()) {
          op->emitOpError() << "with a dynamic size inside a loop nest cannot "
                               "run in a GPU kernel";
          return WalkResult::interrupt();
        }
      if (isa<scf::ParallelOp>(op) &&
          cast<scf::ParallelOp>(op).getNumResults() != 0) {
        op->emitOpError() << "with reductions is not supported on the GPU";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }

  /// Stack buffers of the host code (outside every loop) become device
  /// allocations: the kernels that use them cannot see the host's stack.
  void hostAllocasToAllocs(func::FuncOp func) {
    SmallVector<memref::AllocaOp> allocas;
    func.walk([&](memref::AllocaOp alloca) {
      if (!alloca->getParentOfType<LoopLikeOpInterface>())
        allocas.push_back(alloca);
    });
    for (memref::AllocaOp alloca : allocas) {
      OpBuilder b(alloca);
      auto alloc = memref::AllocOp::create(
          b, alloca.getLoc(), alloca.getType(), alloca.getDynamicSizes(),
          alloca.getSymbolOperands(), alloca.getAlignmentAttr());
      // Freed after its last use by disc-free-after-last-use.
      alloca.replaceAllUsesWith(alloc.getResult());
      alloca.erase();
    }
  }

  /// Whether `use` is a load inside a loop nest of the function body (a
  /// future kernel), so that it can read a constant in place.
  static bool isLoadInLoopNest(OpOperand &use, func::FuncOp func) {
    Operation *user = use.getOwner();
    if (!isa<memref::LoadOp>(user))
      return false;
    for (Operation *parent = user->getParentOp(); parent && parent != func;
         parent = parent->getParentOp())
      if (isa<scf::ParallelOp, scf::ForOp>(parent) &&
          parent->getParentOp() == func)
        return true;
    return false;
  }

  /// A constant (`memref.get_global` of the host code) lives in host
  /// memory, which neither a kernel nor a library call nor the caller of a
  /// returned buffer can read on the device. A constant that only loops
  /// load is read in place by each of them: a `memref.get_global` inside
  /// the loop, which kernel outlining clones into the kernel's module, so
  /// the constant travels in the cubin. Any other becomes a device buffer
  /// filled by a copy grid that reads it that way: one small grid per
  /// constant and call, a launch's host cost on every call (constants of
  /// decomposed ops are common: a position table, an interpolation's
  /// weights).
  void globalsToDeviceBuffers(func::FuncOp func) {
    SmallVector<memref::GetGlobalOp> globals;
    for (Block &block : func.getBody())
      for (auto get : block.getOps<memref::GetGlobalOp>())
        globals.push_back(get);
    for (memref::GetGlobalOp get : globals) {
      auto type = cast<MemRefType>(get.getType());
      if (!type.hasStaticShape() || !type.getLayout().isIdentity())
        continue; // memref.global has neither; nothing to do for others
      if (!get->use_empty() &&
          llvm::all_of(get->getUses(), [&](OpOperand &use) {
            return isLoadInLoopNest(use, func);
          })) {
        for (OpOperand &use : llvm::make_early_inc_range(get->getUses())) {
          OpBuilder at(use.getOwner());
          use.set(memref::GetGlobalOp::create(at, get.getLoc(), type,
                                              get.getNameAttr()));
        }
        get.erase();
        continue;
      }
      OpBuilder b(get);
      Location loc = get.getLoc();
      auto alloc = memref::AllocOp::create(
          b, loc, MemRefType::get(type.getShape(), type.getElementType()));
      SmallVector<Value> lbs, ubs, steps;
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      // Rank 0: one iteration, read and written without indices.
      for (int64_t d = 0; d < std::max<int64_t>(type.getRank(), 1); ++d) {
        lbs.push_back(zero);
        steps.push_back(one);
        ubs.push_back(type.getRank() == 0
                          ? one
                          : arith::ConstantIndexOp::create(b, loc,
                                                           type.getDimSize(d))
                                .getResult());
      }
      scf::ParallelOp::create(
          b, loc, lbs, ubs, steps,
          [&](OpBuilder &nb, Location nloc, ValueRange ivs) {
            Value inKernel = memref::GetGlobalOp::create(
                nb, nloc, type, get.getNameAttr());
            ValueRange indices =
                type.getRank() == 0 ? ValueRange{} : ValueRange(ivs);
            Value v = memref::LoadOp::create(nb, nloc, inKernel, indices);
            memref::StoreOp::create(nb, nloc, v, alloc, indices);
          });
      get.replaceAllUsesWith(alloc.getResult());
      get.erase();
    }
  }

  /// `memref.copy` of the host code -> a parallel loop nest (rank > 0) or
  /// a load and store (rank 0).
  void copiesToLoops(func::FuncOp func) {
    SmallVector<memref::CopyOp> copies;
    func.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      OpBuilder b(copy);
      Location loc = copy.getLoc();
      Value source = copy.getSource(), target = copy.getTarget();
      auto type = cast<MemRefType>(target.getType());
      // One element (a row scalar on the stack, memref<1x1xf32>): a load
      // and a store. A parallel loop there would be a stage writing a
      // stack buffer, which keeps a row kernel (layer norm's) one row per
      // thread.
      if (type.hasStaticShape() && type.getNumElements() == 1) {
        SmallVector<Value> zeros(type.getRank(),
                                 arith::ConstantIndexOp::create(b, loc, 0));
        Value v = memref::LoadOp::create(b, loc, source, zeros);
        memref::StoreOp::create(b, loc, v, target, zeros);
        copy.erase();
        continue;
      }
      SmallVector<Value> lbs, ubs, steps;
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      for (int64_t d = 0; d < type.getRank(); ++d) {
        lbs.push_back(zero);
        steps.push_back(one);
        ubs.push_back(memref::DimOp::create(b, loc, target, d));
      }
      scf::ParallelOp::create(
          b, loc, lbs, ubs, steps,
          [&](OpBuilder &nb, Location nloc, ValueRange ivs) {
            Value v = memref::LoadOp::create(nb, nloc, source, ivs);
            memref::StoreOp::create(nb, nloc, v, target, ivs);
          });
      copy.erase();
    }
  }

  /// Runs of host-level ops that read or write memory outside parallel
  /// loops (with the ops that use their results) move into a
  /// single-iteration scf.parallel, which becomes a one-thread grid.
  LogicalResult wrapHostMemoryAccesses(func::FuncOp func) {
    for (Block &block : func.getBody()) {
      SmallVector<Operation *> run;
      llvm::SmallPtrSet<Operation *, 16> inRun;
      // Later checks that `wrap` moved into a grid or erased: the walk
      // below must not visit them (it runs over a snapshot of the block).
      llvm::SmallPtrSet<Operation *, 16> taken;
      auto close = [&]() -> LogicalResult {
        if (run.empty())
          return success();
        LogicalResult result = wrap(run, inRun, taken);
        run.clear();
        inRun.clear();
        return result;
      };
      SmallVector<Operation *> ops;
      for (Operation &op : block)
        ops.push_back(&op);
      for (Operation *opPtr : ops) {
        if (taken.contains(opPtr))
          continue;
        Operation &op = *opPtr;
        if (op.hasTrait<OpTrait::IsTerminator>())
          break;
        bool usesRun = llvm::any_of(op.getOperands(), [&](Value v) {
          Operation *def = v.getDefiningOp();
          return def && inRun.contains(def);
        });
        if (isa<scf::ParallelOp>(op)) {
          if (usesRun) // cannot happen: a parallel loop takes no loaded
                       // scalar but through memory
            return op.emitOpError("uses a value read from device memory by "
                                  "host code");
          if (failed(close()))
            return failure();
          continue;
        }
        bool pure = isMemoryEffectFree(&op) && op.getNumRegions() == 0;
        // A check of values read from memory (indices in bounds) runs on
        // the device with them: a failing one traps the kernel.
        if (usesRun && isa<cf::AssertOp>(op)) {
          run.push_back(&op);
          inRun.insert(&op);
          continue;
        }
        if (usesRun && !pure && !touchesMemory(&op))
          return op.emitOpError()
                 << "uses a value that host code reads from device memory "
                    "(a data-dependent shape or scalar), which the cuda "
                    "target does not support";
        if (usesRun || touchesMemory(&op)) {
          run.push_back(&op);
          inRun.insert(&op);
          continue;
        }
        // An allocation of host sizes does not end a run: the grid goes
        // after it, where the run ends (disc-if-results-to-buffers puts
        // the buffer an if writes after the loads its condition needs).
        if (isa<memref::AllocOp>(op))
          continue;
        if (!pure)
          if (failed(close()))
            return failure();
      }
      if (failed(close()))
        return failure();
    }
    return success();
  }

  LogicalResult wrap(SmallVector<Operation *> &run,
                     llvm::SmallPtrSetImpl<Operation *> &inRun,
                     llvm::SmallPtrSetImpl<Operation *> &taken) {
    // A later check of a condition the run computes (CSE shares one check
    // value between two ops) moves into the run: the condition cannot
    // change in between, and a failing check ends the call either way.
    llvm::SetVector<Operation *> laterChecks;
    for (Operation *op : run)
      for (Operation *user : op->getUsers())
        if (isa<cf::AssertOp>(user) && user->getBlock() == op->getBlock() &&
            !inRun.contains(user))
          laterChecks.insert(user);
    for (Operation *check : laterChecks) {
      bool duplicate = llvm::any_of(run, [&](Operation *op) {
        return isa<cf::AssertOp>(op) &&
               op->getOperand(0) == check->getOperand(0);
      });
      taken.insert(check);
      if (duplicate) {
        check->erase();
        continue;
      }
      run.push_back(check);
      inRun.insert(check);
    }
    for (Operation *op : run)
      for (Operation *user : op->getUsers()) {
        Operation *top = user;
        while (top->getBlock() != op->getBlock())
          top = top->getParentOp();
        if (!inRun.contains(top))
          return user->emitOpError()
                 << "uses a value that host code reads from device memory "
                    "(a data-dependent shape or scalar), which the cuda "
                    "target does not support";
      }
    // The grid goes where the last op of the run was (a moved check stays
    // where the run ended).
    Operation *last = nullptr;
    for (Operation *op : run)
      if (!laterChecks.contains(op))
        last = op;
    OpBuilder b(last);
    Location loc = last->getLoc();
    // A loop in a one-thread grid runs serially on the GPU: the fusion log
    // names it (the first run of batch norm's statistics on cuda was one).
    if (log)
      for (Operation *op : run)
        if (isa<LoopLikeOpInterface>(op))
          llvm::errs() << "[disc] cuda: a loop at " << op->getLoc()
                       << " runs in a one-thread grid (host code that "
                          "touches memory and is no pattern the grid "
                          "mapping parallelises)\n";
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto loop = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                        ValueRange{one}, ValueRange{one});
    Operation *terminator = loop.getBody()->getTerminator();
    for (Operation *op : run)
      op->moveBefore(terminator);
    return success();
  }

  /// One outermost parallel loop -> block loop around thread loop around a
  /// guarded, delinearised copy of the body. An elementwise nest whose
  /// innermost accesses are contiguous also gets the vector variant
  /// (VectorGrids.h), chosen per call by the host. A nest over two or more
  /// dims delinearises in 32 bits when the host finds that every thread's
  /// linear index fits (a uniform branch in the kernel, not a kernel of its
  /// own: the two differ only in a few divisions).
  /// With `logNoVector` (a loop nest that is no row kernel or column nest,
  /// with `log`), a grid without a vector variant says why on stderr.
  LogicalResult mapToGrid(scf::ParallelOp loop, bool logNoVector = false) {
    OpBuilder b(loop);
    Location loc = loop.getLoc();
    SmallVector<Value> tripCounts;
    for (auto [lb, ub, step] : llvm::zip(
             loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
      tripCounts.push_back(tripCount(b, loc, lb, ub, step));
    Value total = disc::cuda::productOf(b, loc, tripCounts);
    Value index32 = index32Flag(b, loc, tripCounts.size(), total);
    std::optional<disc::cuda::VectorPlan> plan;
    if (vectorize) {
      std::string whyNot;
      plan = disc::cuda::planVectorGrid(loop, linearLanes, &whyNot);
      if (!plan && logNoVector)
        llvm::errs() << "[disc] cuda: the grid at "
                     << loop.getLoc() << " has no vector variant (" << whyNot
                     << ")\n";
    }
    if (!plan) {
      buildGrid(b, loop, tripCounts, total, nullptr, index32);
      loop.erase();
      return success();
    }
    Value vectorOk =
        disc::cuda::vectorGridCondition(b, loc, tripCounts, total, *plan);
    scf::IfOp choice = variantChoice(
        b, loc, vectorOk,
        plan->linear ? disc::cuda::RowVariant::LinearVector
                     : disc::cuda::RowVariant::Vector,
        disc::cuda::RowVariant::Scalar);
    OpBuilder thenBuilder(choice.thenBlock()->getTerminator());
    buildGrid(thenBuilder, loop, tripCounts, total, &*plan, index32);
    OpBuilder elseBuilder(choice.elseBlock()->getTerminator());
    buildGrid(elseBuilder, loop, tripCounts, total, nullptr, index32);
    loop.erase();
    return success();
  }

  /// For a grid over two or more dims (`rank`; `total` iterations;
  /// `index32-limit` > 0): 1 when every
  /// thread's linear index is at most the limit, else 0 (an index value,
  /// which the kernel receives as an argument), the choice noted
  /// (disc_ral_note_variant(7 | 8)). Threads reach at most numBlocks *
  /// blockSize - 1 <= total + blockSize - 2, so a total of at most
  /// limit - blockSize + 1 keeps them within it. Null otherwise.
  Value index32Flag(OpBuilder &b, Location loc, size_t rank, Value total) {
    if (index32Limit == 0 || rank < 2)
      return Value();
    Value fits = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ule, total,
        arith::ConstantIndexOp::create(b, loc, index32Limit - blockSize + 1));
    return flagNoted(b, loc, fits, disc::cuda::RowVariant::Index32,
                     disc::cuda::RowVariant::Index64);
  }

  /// `condition` as an index for a kernel argument (1 or 0: a uniform
  /// branch in the kernel), the choice noted (`whenTrue` or `whenFalse`).
  Value flagNoted(OpBuilder &b, Location loc, Value condition,
                  disc::cuda::RowVariant whenTrue,
                  disc::cuda::RowVariant whenFalse) {
    auto note = scf::IfOp::create(b, loc, condition, /*withElse=*/true);
    OpBuilder thenBuilder(note.thenBlock()->getTerminator());
    noteVariant(thenBuilder, loc, whenTrue);
    OpBuilder elseBuilder(note.elseBlock()->getTerminator());
    noteVariant(elseBuilder, loc, whenFalse);
    return arith::SelectOp::create(b, loc, condition,
                                   arith::ConstantIndexOp::create(b, loc, 1),
                                   arith::ConstantIndexOp::create(b, loc, 0));
  }

  /// The grid of `loop` at `b`: one iteration per thread, or with `plan`
  /// kVectorWidth consecutive iterations of the innermost dim per thread
  /// (whose trip count the host checked is a multiple of it), or with a
  /// plan of linear lanes kVectorWidth consecutive iterations of the whole
  /// nest (whose total the host checked is a multiple of it). `total`:
  /// the product of `tripCounts`, the nest's iterations.
  /// `index32` (index32Flag, or null): where it is 1 the delinearisation's
  /// divisions and remainders run in i32.
  void buildGrid(OpBuilder &b, scf::ParallelOp loop,
                 SmallVector<Value> tripCounts, Value total,
                 const disc::cuda::VectorPlan *plan, Value index32) {
    Location loc = loop.getLoc();
    Value width =
        arith::ConstantIndexOp::create(b, loc, disc::cuda::kVectorWidth);
    // (Not the pass's `linearLanes` option: whether this plan has them.)
    const bool acrossRows = plan && plan->linear;
    SmallVector<Value> iterationCounts(tripCounts);
    if (plan && !acrossRows)
      tripCounts.back() =
          b.createOrFold<arith::DivUIOp>(loc, tripCounts.back(), width);
    // A thread per iteration, or per kVectorWidth of them (in rows of
    // four too: the innermost count, so the total, is a multiple of it).
    if (plan)
      total = b.createOrFold<arith::DivUIOp>(loc, total, width);
    llvm::DenseMap<Value, Value> views;
    if (acrossRows)
      views = disc::cuda::linearViews(b, loc, *plan);
    std::optional<int64_t> staticTotal = getConstantIntValue(total);
    int64_t threads =
        staticTotal
            ? std::max<int64_t>(1, std::min(*staticTotal, (int64_t)blockSize))
            : (int64_t)blockSize;
    Value blockDim = arith::ConstantIndexOp::create(b, loc, threads);
    Value numBlocks = arith::CeilDivUIOp::create(b, loc, total, blockDim);
    auto blocks = disc::cuda::createMappedLoop(b, loc, numBlocks,
                                               gpu::Processor::BlockX);
    OpBuilder::InsertionGuard keep(b);
    b.setInsertionPoint(blocks.getBody()->getTerminator());
    auto threadLoop = disc::cuda::createMappedLoop(b, loc, blockDim,
                                                   gpu::Processor::ThreadX);
    b.setInsertionPoint(threadLoop.getBody()->getTerminator());
    Value blockStart = arith::MulIOp::create(
        b, loc, blocks.getInductionVars()[0], blockDim);
    Value linear = arith::AddIOp::create(b, loc, blockStart,
                                         threadLoop.getInductionVars()[0]);
    Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          linear, total);
    auto guard = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
    b.setInsertionPoint(guard.thenBlock()->getTerminator());
    if (acrossRows) {
      Value first = arith::MulIOp::create(b, loc, linear, width);
      SmallVector<Value> ivs =
          index32 ? delinearizeEither(b, loc, index32, first, iterationCounts,
                                      loop)
                  : disc::cuda::delinearize(b, loc, first, iterationCounts,
                                            loop.getLowerBound(),
                                            loop.getStep());
      disc::cuda::cloneBodyLinearVectorized(b, loc, loop, first, ivs,
                                            iterationCounts, *plan, views);
      return;
    }
    // Innermost dim fastest: consecutive threads touch consecutive
    // elements of a row-major buffer.
    SmallVector<Value> ivs =
        index32 ? delinearizeEither(b, loc, index32, linear, tripCounts, loop)
                : disc::cuda::delinearize(b, loc, linear, tripCounts,
                                          loop.getLowerBound(),
                                          loop.getStep());
    if (plan) {
      // The innermost dim starts at 0 with step 1 (planVectorGrid): the
      // group's first iteration is kVectorWidth times its index.
      ivs.back() = arith::MulIOp::create(b, loc, ivs.back(), width);
      disc::cuda::cloneBodyVectorized(b, loc, loop, ivs, *plan);
      return;
    }
    IRMapping mapping;
    mapping.map(loop.getInductionVars(), ivs);
    for (Operation &op : loop.getBody()->without_terminator())
      b.clone(op, mapping);
  }

  /// `scf.if %index32 != 0` yielding the induction variables of `linear`,
  /// delinearised in i32 (the host found that it fits) or in index.
  SmallVector<Value> delinearizeEither(OpBuilder &b, Location loc,
                                       Value index32, Value linear,
                                       ValueRange tripCounts,
                                       scf::ParallelOp loop) {
    Value narrow = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne, index32,
        arith::ConstantIndexOp::create(b, loc, 0));
    SmallVector<Type> types(tripCounts.size(), b.getIndexType());
    auto either = scf::IfOp::create(b, loc, types, narrow, /*withElse=*/true);
    {
      OpBuilder at = either.getThenBodyBuilder();
      Value linear32 =
          arith::IndexCastUIOp::create(at, loc, at.getI32Type(), linear);
      scf::YieldOp::create(
          at, loc,
          disc::cuda::delinearize(at, loc, linear32, tripCounts,
                                  loop.getLowerBound(), loop.getStep()));
    }
    OpBuilder at = either.getElseBodyBuilder();
    scf::YieldOp::create(at, loc,
                         disc::cuda::delinearize(at, loc, linear, tripCounts,
                                                 loop.getLowerBound(),
                                                 loop.getStep()));
    return SmallVector<Value>(either.getResults());
  }
};

} // namespace
