//===- SortLoops.cpp - disc.sort -> a bitonic sort per line, block-wide ---===//
//
// See DiscCudaSortLoops in include/disc/Conversion/Cuda/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "disc/Conversion/Cuda/Passes.h"

#include "GpuLoopUtils.h"
#include "RowKernels.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace disc {
#define GEN_PASS_DEF_DISCCUDASORTLOOPS
#include "disc/Conversion/Cuda/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

/// The most threads of a block: as many as the row kernels take, so that a
/// kernel compiled without a register limit for 1024 threads (ptxas's
/// default allows 255 a thread; 1024 threads get at most 64) launches.
constexpr int64_t kMaxThreads = 256;

Value cIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// Whether element (a, aIndex) goes before (c, cIndex) in a sorted line:
/// by value (NaN above every number: last ascending, first descending),
/// equal values (and NaNs among themselves) by their index in the input,
/// which makes the network's result the stable sort's.
Value goesBefore(OpBuilder &b, Location loc, Value a, Value aIndex, Value c,
                 Value cIndex, bool descending, bool isUnsigned) {
  using FP = arith::CmpFPredicate;
  using IP = arith::CmpIPredicate;
  Value earlier = arith::CmpIOp::create(b, loc, IP::ult, aIndex, cIndex);
  if (isa<FloatType>(a.getType())) {
    Value aNan = arith::CmpFOp::create(b, loc, FP::UNO, a, a);
    Value cNan = arith::CmpFOp::create(b, loc, FP::UNO, c, c);
    Value yes = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
    // Ordered comparisons: false where either is NaN.
    Value ordered = arith::CmpFOp::create(
        b, loc, descending ? FP::OGT : FP::OLT, a, c);
    Value nanOrder =
        descending
            ? arith::AndIOp::create(b, loc, aNan,
                                    arith::XOrIOp::create(b, loc, cNan, yes))
            : arith::AndIOp::create(b, loc,
                                    arith::XOrIOp::create(b, loc, aNan, yes),
                                    cNan);
    Value tie = arith::OrIOp::create(
        b, loc, arith::CmpFOp::create(b, loc, FP::OEQ, a, c),
        arith::AndIOp::create(b, loc, aNan, cNan));
    return arith::OrIOp::create(
        b, loc, arith::OrIOp::create(b, loc, nanOrder, ordered),
        arith::AndIOp::create(b, loc, tie, earlier));
  }
  IP order = descending ? (isUnsigned ? IP::ugt : IP::sgt)
                        : (isUnsigned ? IP::ult : IP::slt);
  Value ordered = arith::CmpIOp::create(b, loc, order, a, c);
  Value tie = arith::CmpIOp::create(b, loc, IP::eq, a, c);
  return arith::OrIOp::create(b, loc, ordered,
                              arith::AndIOp::create(b, loc, tie, earlier));
}

/// The sort's line-level constants, host values.
struct Line {
  Value length;  // n
  Value pairs;   // P / 2, P the power of two at or above n
  Value stages;  // log2(P)
  Value threads; // per block
};

/// Host code: the line's power of two and stage count, and the threads of
/// a block: one per compare-exchange of a step (P / 2) in multiples of 32,
/// from 32 to kMaxThreads.
Line lineConstants(OpBuilder &b, Location loc, Value length) {
  Line line;
  line.length = length;
  Value one = cIndex(b, loc, 1);
  // log2(P) = 64 - clz(max(n, 1) - 1): 0 for n <= 1.
  Value atLeastOne = arith::MaxUIOp::create(b, loc, length, one);
  Value below = arith::IndexCastOp::create(
      b, loc, b.getI64Type(), arith::SubIOp::create(b, loc, atLeastOne, one));
  Value clz = math::CountLeadingZerosOp::create(b, loc, below);
  Value log2 = arith::SubIOp::create(
      b, loc, arith::ConstantIntOp::create(b, loc, b.getI64Type(), 64), clz);
  line.stages = arith::IndexCastOp::create(b, loc, b.getIndexType(), log2);
  Value power = arith::ShLIOp::create(b, loc, one, line.stages);
  line.pairs = arith::ShRUIOp::create(b, loc, power, one);
  // roundUp(P / 2, 32), clamped to [32, kMaxThreads].
  Value warp = cIndex(b, loc, disc::cuda::kWarpSize);
  Value rounded = arith::MulIOp::create(
      b, loc, arith::CeilDivUIOp::create(b, loc, line.pairs, warp), warp);
  line.threads = arith::MinUIOp::create(
      b, loc, arith::MaxUIOp::create(b, loc, rounded, warp),
      cIndex(b, loc, kMaxThreads));
  return line;
}

/// The element indices of position `k` of the line whose other coordinates
/// are `coords` (in dim order, `dim` left out).
SmallVector<Value> elementIndices(ArrayRef<Value> coords, int64_t dim,
                                  Value k) {
  SmallVector<Value> indices(coords.begin(), coords.end());
  indices.insert(indices.begin() + dim, k);
  return indices;
}

/// A thread loop (scf.parallel 0 to threads, thread_x) whose thread runs
/// `body(b, i)` for i = thread, thread + threads, ... below `count`.
void threadLoop(OpBuilder &b, Location loc, Value threads, Value count,
                function_ref<void(OpBuilder &, Value)> body) {
  scf::ParallelOp loop = disc::cuda::createMappedLoop(
      b, loc, threads, gpu::Processor::ThreadX);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  auto strided = scf::ForOp::create(b, loc, loop.getInductionVars()[0],
                                    count, threads);
  b.setInsertionPointToStart(strided.getBody());
  body(b, strided.getInductionVar());
}

/// The compare-exchange of positions lo < hi of the line (both in
/// `values` and `indices`): skipped where hi is past the line's end (the
/// network's padding, above every element, never moves).
void compareExchange(OpBuilder &b, Location loc, Value values, Value indices,
                     ArrayRef<Value> coords, int64_t dim, Value lo, Value hi,
                     Value length, bool descending, bool isUnsigned) {
  Value inside =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, hi, length);
  auto guard = scf::IfOp::create(b, loc, inside, /*withElse=*/false);
  OpBuilder::InsertionGuard insertion(b);
  b.setInsertionPointToStart(guard.thenBlock());
  SmallVector<Value> at = elementIndices(coords, dim, lo);
  SmallVector<Value> other = elementIndices(coords, dim, hi);
  Value a = memref::LoadOp::create(b, loc, values, at);
  Value aIndex = memref::LoadOp::create(b, loc, indices, at);
  Value c = memref::LoadOp::create(b, loc, values, other);
  Value cIndex = memref::LoadOp::create(b, loc, indices, other);
  Value swap =
      goesBefore(b, loc, c, cIndex, a, aIndex, descending, isUnsigned);
  auto swapped = scf::IfOp::create(b, loc, swap, /*withElse=*/false);
  b.setInsertionPointToStart(swapped.thenBlock());
  memref::StoreOp::create(b, loc, c, values, at);
  memref::StoreOp::create(b, loc, cIndex, indices, at);
  memref::StoreOp::create(b, loc, a, values, other);
  memref::StoreOp::create(b, loc, aIndex, indices, other);
}

/// The ranked buffer behind operand `i` of `call` (a memref.cast to an
/// unranked memref), or null.
Value rankedOperand(func::CallOp call, unsigned i) {
  auto cast = call.getOperand(i).getDefiningOp<memref::CastOp>();
  if (!cast || !isa<MemRefType>(cast.getSource().getType()))
    return nullptr;
  return cast.getSource();
}

/// `call` of `disc_ral_sort_<type>(ctx, input, values, indices, dim,
/// descending)` (disc-lower-library-calls) replaced by the nest.
LogicalResult lowerSortCall(func::CallOp call) {
  auto fail = [&](const Twine &why) {
    return call.emitOpError() << "calls @" << call.getCallee() << ": " << why;
  };
  if (call.getNumOperands() != 6 || call.getNumResults() != 0)
    return fail("expected (context, input, values, indices, dim, "
                "descending) and no result");
  Value input = rankedOperand(call, 1);
  Value values = rankedOperand(call, 2);
  Value indices = rankedOperand(call, 3);
  std::optional<int64_t> dimAttr = getConstantIntValue(call.getOperand(4));
  std::optional<int64_t> descendingAttr =
      getConstantIntValue(call.getOperand(5));
  if (!input || !values || !indices || !dimAttr || !descendingAttr)
    return fail("expected ranked buffers (through memref.cast) and a "
                "constant dim and direction");
  auto valuesType = cast<MemRefType>(values.getType());
  int64_t rank = valuesType.getRank();
  int64_t dim = *dimAttr;
  if (dim < 0 || dim >= rank)
    return fail("dim " + Twine(dim) + " is out of range for rank " +
                Twine(rank));
  Type elementType = valuesType.getElementType();
  auto integer = dyn_cast<IntegerType>(elementType);
  if ((integer && !integer.isSignless()) ||
      (!integer && !isa<FloatType>(elementType)))
    return call.emitOpError()
           << "calls @" << call.getCallee()
           << ": the cuda target sorts signless integers and floats, not "
           << elementType;
  // Booleans order false before true: unsigned.
  bool isUnsigned = integer && integer.getWidth() == 1;
  bool descending = *descendingAttr != 0;

  OpBuilder b(call);
  Location loc = call.getLoc();
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(memref::DimOp::create(b, loc, values, d));
  SmallVector<Value> otherSizes;
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim)
      otherSizes.push_back(sizes[d]);
  Value lines = disc::cuda::productOf(b, loc, otherSizes);
  Line line = lineConstants(b, loc, sizes[dim]);

  // One block per line: scf.parallel (%line) {block_x, disc.row_block}.
  scf::ParallelOp nest = disc::cuda::createMappedLoop(
      b, loc, lines, gpu::Processor::BlockX);
  nest->setAttr(disc::cuda::kRowBlockAttr, b.getUnitAttr());
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(nest.getBody());
    Value zero = cIndex(b, loc, 0);
    Value one = cIndex(b, loc, 1);
    SmallVector<Value> zeros(otherSizes.size(), zero);
    SmallVector<Value> ones(otherSizes.size(), one);
    SmallVector<Value> coords = disc::cuda::delinearize(
        b, loc, nest.getInductionVars()[0], otherSizes, zeros, ones);
    // The line copied into the results, each element with its index.
    threadLoop(b, loc, line.threads, line.length, [&](OpBuilder &b, Value k) {
      SmallVector<Value> at = elementIndices(coords, dim, k);
      Value v = memref::LoadOp::create(b, loc, input, at);
      memref::StoreOp::create(b, loc, v, values, at);
      Value k64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), k);
      memref::StoreOp::create(b, loc, k64, indices, at);
    });
    // Stage s sorts blocks of 2^(s+1) positions: the first step compares
    // each position of a block's lower half with its mirror in the upper
    // half (i with i ^ (2^(s+1) - 1)), then steps at distances 2^(s-1) ..
    // 1 compare i with i + j. Every step puts the element that goes
    // first at the lower position, so padding past the line's end (above
    // every element) never moves and is never read.
    auto stages = scf::ForOp::create(b, loc, zero, line.stages, one);
    b.setInsertionPointToStart(stages.getBody());
    // Per stage and step, once (every thread runs them): the powers of two
    // and their masks, so that a compare-exchange's positions take shifts
    // and ands (no 64-bit division on the GPU).
    Value s = stages.getInductionVar();
    Value sPlusOne = arith::AddIOp::create(b, loc, s, one);
    Value half = arith::ShLIOp::create(b, loc, one, s); // 2^s
    Value halfMask = arith::SubIOp::create(b, loc, half, one);
    Value last = arith::SubIOp::create(
        b, loc, arith::ShLIOp::create(b, loc, one, sPlusOne), one);
    threadLoop(b, loc, line.threads, line.pairs, [&](OpBuilder &b, Value c) {
      // c -> block c / 2^s, offset c % 2^s in its lower half.
      Value block = arith::ShRUIOp::create(b, loc, c, s);
      Value offset = arith::AndIOp::create(b, loc, c, halfMask);
      Value base = arith::ShLIOp::create(b, loc, block, sPlusOne);
      Value lo = arith::AddIOp::create(b, loc, base, offset);
      Value hi = arith::SubIOp::create(
          b, loc, arith::AddIOp::create(b, loc, base, last), offset);
      compareExchange(b, loc, values, indices, coords, dim, lo, hi,
                      line.length, descending, isUnsigned);
    });
    auto steps = scf::ForOp::create(b, loc, zero, s, one);
    b.setInsertionPointToStart(steps.getBody());
    // Distance j = 2^(s - 1 - q).
    Value shift = arith::SubIOp::create(
        b, loc, arith::SubIOp::create(b, loc, s, one),
        steps.getInductionVar());
    Value shiftPlusOne = arith::AddIOp::create(b, loc, shift, one);
    Value j = arith::ShLIOp::create(b, loc, one, shift);
    Value jMask = arith::SubIOp::create(b, loc, j, one);
    threadLoop(b, loc, line.threads, line.pairs, [&](OpBuilder &b, Value c) {
      // c -> lo = (c / j) * 2j + c % j, hi = lo + j.
      Value block = arith::ShRUIOp::create(b, loc, c, shift);
      Value offset = arith::AndIOp::create(b, loc, c, jMask);
      Value lo = arith::AddIOp::create(
          b, loc, arith::ShLIOp::create(b, loc, block, shiftPlusOne),
          offset);
      Value hi = arith::AddIOp::create(b, loc, lo, j);
      compareExchange(b, loc, values, indices, coords, dim, lo, hi,
                      line.length, descending, isUnsigned);
    });
  }
  call.erase();
  return success();
}

struct CudaSortLoopsPass
    : public disc::impl::DiscCudaSortLoopsBase<CudaSortLoopsPass> {
  void runOnOperation() override {
    SmallVector<func::CallOp> sorts;
    getOperation().walk([&](func::CallOp call) {
      if (call.getCallee().starts_with("disc_ral_sort_"))
        sorts.push_back(call);
    });
    for (func::CallOp call : sorts)
      if (failed(lowerSortCall(call)))
        return signalPassFailure();
    ModuleOp module = getOperation();
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>()))
      if (func.isExternal() &&
          func.getSymName().starts_with("disc_ral_sort_") &&
          func.symbolKnownUseEmpty(module))
        func.erase();
  }
};

} // namespace
