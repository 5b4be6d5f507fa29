//===- HoistLoopTemporaries.cpp - row temporaries as slices of one buffer -===//
//
// See DiscHoistLoopTemporaries in include/disc/Conversion/Cuda/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "disc/Conversion/Cuda/Passes.h"

#include "GpuLoopUtils.h"
#include "RowKernels.h"

#include "../../Transforms/LoopTemporaries.h"

namespace disc {
#define GEN_PASS_DEF_DISCHOISTLOOPTEMPORARIES
#include "disc/Conversion/Cuda/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

/// Slices start this many bytes apart at least (the alignment of the
/// allocations bufferization makes).
constexpr int64_t kSliceAlignment = 64;

/// The enclosing parallel loops of `alloc`, outermost first, and the
/// outermost enclosing loop; failure when an op between `alloc` and the
/// function is not an scf.parallel or scf.for, or when a size of `alloc` or
/// a bound of a parallel loop is defined inside the outermost loop.
LogicalResult enclosingLoops(memref::AllocOp alloc,
                             SmallVector<scf::ParallelOp> &parallels,
                             Operation *&outermost) {
  outermost = nullptr;
  for (Operation *op = alloc->getParentOp(); !isa<func::FuncOp>(op);
       op = op->getParentOp()) {
    if (!isa<scf::ParallelOp, scf::ForOp>(op))
      return failure();
    if (auto parallel = dyn_cast<scf::ParallelOp>(op))
      parallels.insert(parallels.begin(), parallel);
    outermost = op;
  }
  if (!outermost)
    return failure();
  auto outside = [&](Value value) {
    return disc::cuda::definedOutside(value, outermost);
  };
  if (!llvm::all_of(alloc.getDynamicSizes(), outside))
    return failure();
  for (scf::ParallelOp loop : parallels)
    if (!llvm::all_of(loop.getLowerBound(), outside) ||
        !llvm::all_of(loop.getUpperBound(), outside) ||
        !llvm::all_of(loop.getStep(), outside))
      return failure();
  return success();
}

struct HoistLoopTemporariesPass
    : public disc::impl::DiscHoistLoopTemporariesBase<
          HoistLoopTemporariesPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocOp> candidates;
    getOperation().walk([&](memref::AllocOp alloc) {
      if (disc::isLoopTemporary(alloc) &&
          !alloc->hasAttr(disc::cuda::kRowCacheAttr))
        candidates.push_back(alloc);
    });
    for (memref::AllocOp alloc : candidates) {
      SmallVector<scf::ParallelOp> parallels;
      Operation *outermost;
      if (failed(enclosingLoops(alloc, parallels, outermost)))
        continue;
      hoist(alloc, parallels, outermost);
    }
  }

  static void hoist(memref::AllocOp alloc, ArrayRef<scf::ParallelOp> parallels,
                    Operation *outermost) {
    Location loc = alloc.getLoc();
    MemRefType type = alloc.getType();
    OpBuilder host(outermost);
    auto c = [&](OpBuilder &b, int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    // A slice: the temporary's bytes, rounded up to kSliceAlignment.
    Value sliceBytes = host.createOrFold<arith::MulIOp>(
        loc,
        host.createOrFold<arith::CeilDivUIOp>(
            loc, disc::loopTemporaryBytes(host, alloc),
            c(host, kSliceAlignment)),
        c(host, kSliceAlignment));
    // One slice per iteration of the enclosing parallel loops.
    SmallVector<Value> counts;
    for (scf::ParallelOp loop : parallels)
      for (auto [lb, ub, step] : llvm::zip(
               loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
        counts.push_back(disc::cuda::tripCount(host, loc, lb, ub, step));
    Value slices = disc::cuda::productOf(host, loc, counts);
    Value bytes = host.createOrFold<arith::MulIOp>(loc, slices, sliceBytes);
    auto bufferType =
        MemRefType::get({ShapedType::kDynamic}, host.getIntegerType(8));
    auto buffer = memref::AllocOp::create(
        host, loc, bufferType, ValueRange{bytes},
        host.getI64IntegerAttr(kSliceAlignment));
    buffer->setAttr(disc::cuda::kLoopTemporariesAttr, host.getUnitAttr());

    // The iteration's slice: its linear index, outer loops first.
    OpBuilder b(alloc);
    SmallVector<Value> ivs, lbs, steps;
    for (scf::ParallelOp loop : parallels) {
      llvm::append_range(ivs, loop.getInductionVars());
      llvm::append_range(lbs, loop.getLowerBound());
      llvm::append_range(steps, loop.getStep());
    }
    Value linear = disc::cuda::linearize(b, loc, ivs, counts, lbs, steps);
    Value shift = b.createOrFold<arith::MulIOp>(loc, linear, sliceBytes);
    auto view = memref::ViewOp::create(b, loc, type, buffer, shift,
                                       alloc.getDynamicSizes());
    alloc.replaceAllUsesWith(view.getResult());
    alloc.erase();
  }
};

} // namespace
