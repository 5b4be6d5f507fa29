//===- ParallelRowChunks.cpp - column sums as per-chunk partial sums ------===//
#include "ColumnNests.h"
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace disc {
#define GEN_PASS_DEF_DISCPARALLELROWCHUNKS
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

/// Rows per chunk at least (the chunks' partial sums cost a row each to
/// clear and to add up), and chunks at most (partial-sum rows to hold).
constexpr int64_t kMinChunkRows = 32;
constexpr int64_t kMaxChunks = 32;
/// Elements per chunk at least of a whole sum (a chunk's partial sum costs
/// a load and a store).
constexpr int64_t kMinChunkElements = 4096;
/// Rows summed per load and store of a partial sum.
constexpr int64_t kRowsPerGroup = 4;

/// A plain column sum: `scf.for %r { scf.parallel (%c) { ... } }` whose
/// parallel body, without loops of its own, reads one accumulator element
/// and stores it back plus a value that does not depend on it.
struct ColumnSum {
  scf::ForOp rows;
  scf::ParallelOp columns;
  memref::LoadOp accLoad;
  memref::StoreOp accStore;
  Operation *combine; // arith.addf / arith.addi of accLoad and the value
};

std::optional<ColumnSum> matchColumnSum(scf::ForOp rows) {
  scf::ParallelOp columns = disc::columnLoopOf(rows);
  if (!columns || !isConstantIntValue(rows.getStep(), 1))
    return std::nullopt;
  Value column = columns.getInductionVars().front();
  ColumnSum sum{rows, columns, nullptr, nullptr, nullptr};
  for (Operation &op : columns.getBody()->without_terminator()) {
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      if (sum.accStore)
        return std::nullopt;
      sum.accStore = store;
      continue;
    }
    if (isa<memref::LoadOp>(op) || isPure(&op))
      continue;
    return std::nullopt; // a loop, a call, an allocation, ...
  }
  if (!sum.accStore)
    return std::nullopt;
  Value acc = sum.accStore.getMemRef();
  SmallVector<Value> indices(sum.accStore.getIndices());
  // The element stored is the column's own, the same in every row: indices
  // that are the column or defined outside the nest.
  if (!llvm::is_contained(indices, column))
    return std::nullopt;
  for (Value index : indices)
    if (index != column &&
        !index.getParentRegion()->isProperAncestor(&rows.getRegion()))
      return std::nullopt;
  for (auto load : columns.getBody()->getOps<memref::LoadOp>()) {
    if (load.getMemRef() != acc)
      continue;
    if (sum.accLoad || SmallVector<Value>(load.getIndices()) != indices)
      return std::nullopt;
    sum.accLoad = load;
  }
  if (!sum.accLoad || !sum.accLoad->hasOneUse())
    return std::nullopt;
  Operation *combine = sum.accStore.getValueToStore().getDefiningOp();
  if (!combine || !isa<arith::AddFOp, arith::AddIOp>(combine) ||
      *sum.accLoad->getUsers().begin() != combine)
    return std::nullopt;
  Value other = combine->getOperand(0) == sum.accLoad.getResult()
                    ? combine->getOperand(1)
                    : combine->getOperand(0);
  if (other == sum.accLoad.getResult())
    return std::nullopt;
  sum.combine = combine;
  return sum;
}

/// The identity of an addition in `type`: for floats -0.0, so that
/// x + identity is x for x = -0.0 too (upstream's arith::getIdentityValue
/// for addf gives +0.0, which turns an all -0.0 sum into +0.0).
Value additiveIdentity(OpBuilder &b, Location loc, Type type) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc,
                                     b.getFloatAttr(floatType, -0.0));
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, 0));
}

/// The trip count of [lo, hi) and how many chunks to split it into:
/// clamp(count / minPerChunk, 1, kMaxChunks), decided at run time.
std::pair<Value, Value> countAndChunks(OpBuilder &b, Location loc, Value lo,
                                       Value hi, int64_t minPerChunk) {
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value count = arith::SubIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, hi, lo), lo);
  Value chunks = arith::MinUIOp::create(
      b, loc, index(kMaxChunks),
      arith::MaxUIOp::create(
          b, loc, index(1),
          arith::DivUIOp::create(b, loc, count, index(minPerChunk))));
  return {count, chunks};
}

/// Adds v(r, c) for the rows `rowsOfGroup` into partial[chunk, c] for
/// every column: the rows' values summed first (one load and store of the
/// partial sum per group of rows, not per row).
void addRows(OpBuilder &b, Location loc, ColumnSum &sum, Value partial,
             Value chunk, Value columns, ArrayRef<Value> rowsOfGroup) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto perColumn = scf::ForOp::create(b, loc, zero, columns, one);
  OpBuilder pb = OpBuilder::atBlockBegin(perColumn.getBody());
  Value column = perColumn.getInductionVar();
  Value accValue = sum.accLoad.getResult();
  Value added = sum.combine->getOperand(0) == accValue
                    ? sum.combine->getOperand(1)
                    : sum.combine->getOperand(0);
  Value total;
  for (Value row : rowsOfGroup) {
    IRMapping mapping;
    mapping.map(sum.rows.getInductionVar(), row);
    mapping.map(sum.columns.getInductionVars().front(), column);
    for (Operation &op : sum.columns.getBody()->without_terminator())
      if (&op != sum.accLoad.getOperation() &&
          &op != sum.accStore.getOperation() && &op != sum.combine)
        pb.clone(op, mapping);
    Value value = mapping.lookupOrDefault(added);
    if (!total) {
      total = value;
      continue;
    }
    Operation *plus = pb.clone(*sum.combine);
    plus->setOperands({total, value});
    total = plus->getResult(0);
  }
  Value current =
      memref::LoadOp::create(pb, loc, partial, ValueRange{chunk, column});
  Operation *plus = pb.clone(*sum.combine);
  plus->setOperands({current, total});
  memref::StoreOp::create(pb, loc, plus->getResult(0), partial,
                          ValueRange{chunk, column});
}

/// for %r in [lo, hi) { par %c { acc[c] = acc[c] + v(r, c) } } becomes
///   partial = alloc [chunks, columns]
///   par %p in [0, chunks) {
///     for %c { partial[p, c] = 0 }
///     for %g in [0, chunkRows / 4) { r = lo + p * chunkRows + 4 g
///       if r + 4 <= end(p) {
///         for %c { partial[p, c] += v(r, c) + ... + v(r + 3, c) } }
///       else { the rows before end(p) one at a time } }
///   }
///   for %p in [0, chunks) { par %c { acc[c] = acc[c] + partial[p, c] } }
/// with chunks = clamp(rows / kMinChunkRows, 1, kMaxChunks) and chunkRows
/// a multiple of kRowsPerGroup. Every loop bound in the parallel body is
/// defined outside it, so disc-parallelize-loops sees the work per chunk.
void splitIntoRowChunks(ColumnSum sum) {
  scf::ForOp rows = sum.rows;
  Location loc = rows.getLoc();
  OpBuilder b(rows);
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value zero = index(0), one = index(1), group = index(kRowsPerGroup);
  Value lo = rows.getLowerBound(), hi = rows.getUpperBound();
  Value columns = sum.columns.getUpperBound().front();
  auto [count, chunks] = countAndChunks(b, loc, lo, hi, kMinChunkRows);
  Value groups = arith::CeilDivUIOp::create(
      b, loc, arith::CeilDivUIOp::create(b, loc, count, chunks), group);
  Value chunkRows = arith::MulIOp::create(b, loc, groups, group);
  Type accType = sum.accLoad.getType();
  auto partialType =
      MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic}, accType);
  Value partial = memref::AllocOp::create(b, loc, partialType,
                                          ValueRange{chunks, columns},
                                          b.getI64IntegerAttr(64));

  auto perChunk = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                          ValueRange{chunks}, ValueRange{one});
  {
    OpBuilder cb = OpBuilder::atBlockBegin(perChunk.getBody());
    Value chunk = perChunk.getInductionVars().front();
    Value identity = additiveIdentity(cb, loc, accType);
    auto clear = scf::ForOp::create(cb, loc, zero, columns, one);
    {
      OpBuilder lb = OpBuilder::atBlockBegin(clear.getBody());
      memref::StoreOp::create(lb, loc, identity, partial,
                              ValueRange{chunk, clear.getInductionVar()});
    }
    Value first = arith::AddIOp::create(
        cb, loc, lo, arith::MulIOp::create(cb, loc, chunk, chunkRows));
    Value end = arith::MinSIOp::create(
        cb, loc, hi, arith::AddIOp::create(cb, loc, first, chunkRows));
    auto walk = scf::ForOp::create(cb, loc, zero, groups, one);
    OpBuilder wb = OpBuilder::atBlockBegin(walk.getBody());
    Value start = arith::AddIOp::create(
        wb, loc, first,
        arith::MulIOp::create(wb, loc, walk.getInductionVar(), group));
    Value whole = arith::CmpIOp::create(
        wb, loc, arith::CmpIPredicate::sle,
        arith::AddIOp::create(wb, loc, start, group), end);
    auto ifWhole = scf::IfOp::create(wb, loc, whole, /*withElse=*/true);
    {
      OpBuilder tb = ifWhole.getThenBodyBuilder();
      SmallVector<Value> rowsOfGroup;
      for (int64_t i = 0; i < kRowsPerGroup; ++i)
        rowsOfGroup.push_back(arith::AddIOp::create(
            tb, loc, start, arith::ConstantIndexOp::create(tb, loc, i)));
      addRows(tb, loc, sum, partial, chunk, columns, rowsOfGroup);
    }
    {
      // The chunk's last rows (the input's last rows): one at a time.
      OpBuilder eb = ifWhole.getElseBodyBuilder();
      auto tail = scf::ForOp::create(
          eb, loc, start, arith::MinSIOp::create(eb, loc, end,
              arith::AddIOp::create(eb, loc, start, group)),
          arith::ConstantIndexOp::create(eb, loc, 1));
      OpBuilder tb = OpBuilder::atBlockBegin(tail.getBody());
      addRows(tb, loc, sum, partial, chunk, columns, {tail.getInductionVar()});
    }
  }

  // The chunks' sums added in chunk order: the result does not depend on
  // which thread ran which chunk.
  auto combineChunks = scf::ForOp::create(b, loc, zero, chunks, one);
  {
    OpBuilder cb = OpBuilder::atBlockBegin(combineChunks.getBody());
    auto perColumn = scf::ParallelOp::create(
        cb, loc, ValueRange{zero}, ValueRange{columns}, ValueRange{one});
    OpBuilder pb = OpBuilder::atBlockBegin(perColumn.getBody());
    IRMapping mapping;
    Value column = perColumn.getInductionVars().front();
    mapping.map(sum.columns.getInductionVars().front(), column);
    SmallVector<Value> indices;
    for (Value index : sum.accStore.getIndices())
      indices.push_back(mapping.lookupOrDefault(index));
    Value acc = sum.accStore.getMemRef();
    Value current = memref::LoadOp::create(pb, loc, acc, indices);
    Value part = memref::LoadOp::create(
        pb, loc, partial,
        ValueRange{combineChunks.getInductionVar(), column});
    Operation *added = pb.clone(*sum.combine);
    added->setOperands({current, part});
    memref::StoreOp::create(pb, loc, added->getResult(0), acc, indices);
  }
  rows.erase();
}

/// A whole sum: `scf.for %i iter_args(%acc) { ... yield acc + v(i) }`, one
/// carried value, a body of loads and pure ops only, v independent of acc.
std::optional<Operation *> matchWholeSum(scf::ForOp loop) {
  if (loop.getNumRegionIterArgs() != 1 ||
      !isConstantIntValue(loop.getStep(), 1))
    return std::nullopt;
  Value acc = loop.getRegionIterArgs().front();
  if (!acc.hasOneUse())
    return std::nullopt;
  for (Operation &op : loop.getBody()->without_terminator())
    if (!isa<memref::LoadOp>(op) && !isPure(&op))
      return std::nullopt;
  Operation *combine = *acc.getUsers().begin();
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  if (!isa<arith::AddFOp, arith::AddIOp>(combine) ||
      yield.getOperand(0) != combine->getResult(0) ||
      !combine->getResult(0).hasOneUse() ||
      combine->getOperand(0) == combine->getOperand(1))
    return std::nullopt;
  return combine;
}

/// for %i in [lo, hi) iter_args(init) { yield acc + v(i) } becomes
///   partial = alloc [chunks]
///   par %p in [0, chunks) {
///     partial[p] = for %j in [0, len) iter_args(0) { yield s + v(lo + p len + j) } }
///   r = for %p in [0, chunks) iter_args(init) { yield r + partial[p] }
///   result = for %i in [lo + chunks len, hi) iter_args(r) { ... as before }
/// with chunks = clamp(n / kMinChunkElements, 1, kMaxChunks), len =
/// n / chunks: every chunk has the same length (a bound defined outside the
/// parallel loop, which disc-parallelize-loops reads as its work), the
/// remainder (fewer than `chunks` elements) runs after, in the original
/// loop.
void splitWholeSum(scf::ForOp loop, Operation *combine) {
  Location loc = loop.getLoc();
  OpBuilder b(loop);
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value zero = index(0), one = index(1);
  Value lo = loop.getLowerBound(), hi = loop.getUpperBound();
  auto [count, chunks] = countAndChunks(b, loc, lo, hi, kMinChunkElements);
  Value length = arith::DivUIOp::create(b, loc, count, chunks);
  Type accType = loop.getResult(0).getType();
  auto partialType = MemRefType::get({ShapedType::kDynamic}, accType);
  Value partial = memref::AllocOp::create(b, loc, partialType,
                                          ValueRange{chunks},
                                          b.getI64IntegerAttr(64));
  Value acc = loop.getRegionIterArgs().front();
  auto perChunk = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                          ValueRange{chunks}, ValueRange{one});
  {
    OpBuilder cb = OpBuilder::atBlockBegin(perChunk.getBody());
    Value chunk = perChunk.getInductionVars().front();
    Value first = arith::AddIOp::create(
        cb, loc, lo, arith::MulIOp::create(cb, loc, chunk, length));
    Value identity = additiveIdentity(cb, loc, accType);
    auto walk = scf::ForOp::create(cb, loc, zero, length, one,
                                   ValueRange{identity});
    OpBuilder wb = OpBuilder::atBlockBegin(walk.getBody());
    IRMapping mapping;
    mapping.map(loop.getInductionVar(),
                arith::AddIOp::create(wb, loc, first, walk.getInductionVar())
                    .getResult());
    mapping.map(acc, walk.getRegionIterArgs().front());
    for (Operation &op : loop.getBody()->without_terminator())
      wb.clone(op, mapping);
    scf::YieldOp::create(wb, loc, mapping.lookup(combine->getResult(0)));
    memref::StoreOp::create(cb, loc, walk.getResult(0), partial,
                            ValueRange{chunk});
  }
  // The chunks' sums added in chunk order (deterministic), then the
  // remainder in the original loop.
  auto combineChunks = scf::ForOp::create(b, loc, zero, chunks, one,
                                          ValueRange{loop.getInitArgs()});
  {
    OpBuilder cb = OpBuilder::atBlockBegin(combineChunks.getBody());
    Value part = memref::LoadOp::create(
        cb, loc, partial, ValueRange{combineChunks.getInductionVar()});
    Operation *added = cb.clone(*combine);
    added->setOperands({combineChunks.getRegionIterArgs().front(), part});
    scf::YieldOp::create(cb, loc, added->getResult(0));
  }
  loop.getLowerBoundMutable().assign(arith::AddIOp::create(
      b, loc, lo, arith::MulIOp::create(b, loc, chunks, length)));
  loop.getInitArgsMutable().assign(combineChunks.getResult(0));
}

struct ParallelRowChunksPass
    : public disc::impl::DiscParallelRowChunksBase<ParallelRowChunksPass> {
  void runOnOperation() override {
    if (getOperation().isExternal())
      return;
    SmallVector<ColumnSum> sums;
    for (auto rows : getOperation().front().getOps<scf::ForOp>())
      if (std::optional<ColumnSum> sum = matchColumnSum(rows))
        sums.push_back(*sum);
    for (ColumnSum &sum : sums)
      splitIntoRowChunks(sum);
    SmallVector<std::pair<scf::ForOp, Operation *>> wholeSums;
    for (auto loop : getOperation().front().getOps<scf::ForOp>())
      if (std::optional<Operation *> combine = matchWholeSum(loop))
        wholeSums.push_back({loop, *combine});
    for (auto [loop, combine] : wholeSums)
      splitWholeSum(loop, combine);
  }
};

} // namespace
