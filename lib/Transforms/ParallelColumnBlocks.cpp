//===- ParallelColumnBlocks.cpp - column loops onto the runtime's threads -===//
#include "ColumnNests.h"
#include "disc/Dialect/Disc/DiscDialect.h"
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"

namespace disc {
#define GEN_PASS_DEF_DISCPARALLELCOLUMNBLOCKS
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

/// Columns per block: at least one 64-byte line of f32, and about this
/// many blocks for the runtime's threads to share.
constexpr int64_t kMinBlock = 16;
constexpr int64_t kTargetBlocks = 8;

/// Whether iterations of `loop` (1-d) for different columns touch
/// different elements only: no side effects but memref loads and stores,
/// and each memref that the body stores to is accessed everywhere in the
/// body at one index list that holds the column index itself.
bool columnsAreIndependent(scf::ParallelOp loop) {
  Value column = loop.getInductionVars().front();
  llvm::DenseMap<Value, SmallVector<Value>> stored;
  bool legal = true;
  loop.getBody()->walk([&](Operation *op) {
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      SmallVector<Value> indices(store.getIndices());
      if (!llvm::is_contained(indices, column)) {
        legal = false;
        return WalkResult::interrupt();
      }
      auto [it, inserted] = stored.try_emplace(store.getMemRef(), indices);
      if (!inserted && it->second != indices) {
        legal = false;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    if (isa<memref::LoadOp>(op) || isPure(op) ||
        isa<scf::ForOp, scf::IfOp, scf::YieldOp, scf::ReduceOp>(op))
      return WalkResult::advance();
    legal = false;
    return WalkResult::interrupt();
  });
  if (!legal)
    return false;
  // Loads of a stored memref read the element the iteration writes.
  WalkResult result = loop.getBody()->walk([&](memref::LoadOp load) {
    auto it = stored.find(load.getMemRef());
    if (it == stored.end())
      return WalkResult::advance();
    SmallVector<Value> indices(load.getIndices());
    return indices == it->second ? WalkResult::advance()
                                 : WalkResult::interrupt();
  });
  return !result.wasInterrupted();
}

/// The `scf.parallel` that is the whole body of `loop`, when the nest can
/// be interchanged, else null.
scf::ParallelOp columnLoop(scf::ForOp loop) {
  scf::ParallelOp inner = disc::columnLoopOf(loop);
  if (!inner)
    return nullptr;
  // Only where each column does a row of work (a loop: the [N, C, H*W]
  // sum over N and H*W of batch norm's backward). A column of single
  // elements (a plain column sum) split into blocks makes each thread read
  // part of every row: measured 1.5x slower at [32768, 64] and 5x slower
  // at [802816, 64] than the single-threaded vectorised loop over whole
  // rows; such sums need per-thread partial sums over row ranges instead.
  bool rowPerColumn = false;
  inner.getBody()->walk([&](scf::ForOp) { rowPerColumn = true; });
  if (!rowPerColumn)
    return nullptr;
  return columnsAreIndependent(inner) ? inner : nullptr;
}

void interchange(scf::ForOp loop, scf::ParallelOp inner) {
  Location loc = loop.getLoc();
  OpBuilder b(loop);
  Value extent = inner.getUpperBound().front();
  Value minBlock = arith::ConstantIndexOp::create(b, loc, kMinBlock);
  Value targetBlocks = arith::ConstantIndexOp::create(b, loc, kTargetBlocks);
  // block = max(16, ceil(ceil(n / 8) / 16) * 16)
  Value share = arith::CeilDivUIOp::create(b, loc, extent, targetBlocks);
  Value lines = arith::CeilDivUIOp::create(b, loc, share, minBlock);
  Value block = arith::MaxUIOp::create(
      b, loc, minBlock, arith::MulIOp::create(b, loc, lines, minBlock));
  Value numBlocks = arith::CeilDivUIOp::create(b, loc, extent, block);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto blocks = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                        ValueRange{numBlocks}, ValueRange{one});
  OpBuilder bb = OpBuilder::atBlockBegin(blocks.getBody());
  Value begin = arith::MulIOp::create(bb, loc,
                                      blocks.getInductionVars().front(), block);
  Value end = arith::MinUIOp::create(
      bb, loc, extent, arith::AddIOp::create(bb, loc, begin, block));
  IRMapping mapping;
  auto rows = scf::ForOp::create(bb, loc, loop.getLowerBound(),
                                 loop.getUpperBound(), loop.getStep());
  mapping.map(loop.getInductionVar(), rows.getInductionVar());
  bb.setInsertionPointToStart(rows.getBody());
  auto columns = scf::ForOp::create(bb, loc, begin, end, one);
  mapping.map(inner.getInductionVars().front(), columns.getInductionVar());
  bb.setInsertionPointToStart(columns.getBody());
  for (Operation &op : inner.getBody()->without_terminator())
    bb.clone(op, mapping);
  loop.erase();
}

struct ParallelColumnBlocksPass
    : public disc::impl::DiscParallelColumnBlocksBase<
          ParallelColumnBlocksPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func->hasAttr(disc::kKernelAttr) || func.isExternal())
        continue;
      SmallVector<std::pair<scf::ForOp, scf::ParallelOp>> nests;
      for (auto loop : func.front().getOps<scf::ForOp>())
        if (scf::ParallelOp inner = columnLoop(loop))
          nests.push_back({loop, inner});
      for (auto [loop, inner] : nests)
        interchange(loop, inner);
    }
  }
};

} // namespace
