//===- CollapseContiguousDims.cpp - merge contiguous loop dims ------------===//
//
// Merges adjacent iteration dims of linalg.generic ops on buffers when every
// operand holds them contiguously, so the innermost loop is long enough to
// vectorise (see Passes.td).
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace disc {
#define GEN_PASS_DEF_DISCCOLLAPSECONTIGUOUSDIMS
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

/// Whether iteration dims `group` (adjacent, ascending) can be one dim:
/// every operand indexes them next to each other in order, or not at all,
/// and its memref layout makes them contiguous.
bool isCollapsible(linalg::GenericOp op, ArrayRef<int64_t> group) {
  ReassociationIndices sequence(group.begin(), group.end());
  if (!linalg::areDimSequencesPreserved(op.getIndexingMapsArray(), {sequence}))
    return false;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    std::optional<unsigned> first =
        map.getResultPosition(getAffineDimExpr(group.front(), op.getContext()));
    if (!first)
      continue; // none of the group's dims (checked above)
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type)
      return false;
    SmallVector<ReassociationIndices> reassociation;
    for (unsigned r = 0; r < map.getNumResults(); ++r) {
      if (r == *first) {
        ReassociationIndices merged;
        for (unsigned k = 0; k < group.size(); ++k)
          merged.push_back(r + k);
        reassociation.push_back(merged);
        r += group.size() - 1;
      } else {
        reassociation.push_back({static_cast<int64_t>(r)});
      }
    }
    if (!memref::CollapseShapeOp::isGuaranteedCollapsible(type, reassociation))
      return false;
  }
  return true;
}

/// The iteration dims of `op` as groups of adjacent dims to merge; empty
/// when nothing merges or the op is not one this pass handles.
SmallVector<ReassociationIndices> collapsibleGroups(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() < 2)
    return {};
  if (!op.getBody()->getOps<linalg::IndexOp>().empty())
    return {};
  if (!llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) {
        return map.isProjectedPermutation();
      }))
    return {};
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices current = {0};
  for (int64_t dim = 1, e = op.getNumLoops(); dim < e; ++dim) {
    ReassociationIndices candidate = current;
    candidate.push_back(dim);
    if (iterators[dim] == iterators[current.back()] &&
        isCollapsible(op, candidate)) {
      current = std::move(candidate);
      continue;
    }
    groups.push_back(std::move(current));
    current = {dim};
  }
  groups.push_back(std::move(current));
  if (groups.size() == op.getNumLoops())
    return {};
  return groups;
}

struct CollapseContiguousDimsPass
    : public disc::impl::DiscCollapseContiguousDimsBase<
          CollapseContiguousDimsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops) {
      SmallVector<ReassociationIndices> groups = collapsibleGroups(op);
      if (groups.empty())
        continue;
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::CollapseResult> collapsed =
          linalg::collapseOpIterationDims(op, groups, rewriter);
      if (failed(collapsed))
        continue; // left as it is: still correct, only not merged
      rewriter.replaceOp(op, collapsed->results);
      shareCollapses(collapsed->collapsedOp, rewriter);
    }
  }

  /// Upstream collapses each operand on its own: a buffer the op reads and
  /// writes (an update computed in place) becomes two views, and the kernel
  /// outlined from the loop two arguments that alias. One view per buffer
  /// keeps it one argument, which LLVM sees is the same memory.
  static void shareCollapses(Operation *op, RewriterBase &rewriter) {
    llvm::SmallDenseMap<std::pair<Value, Attribute>, Value> views;
    for (OpOperand &operand : op->getOpOperands()) {
      auto collapse =
          operand.get().getDefiningOp<memref::CollapseShapeOp>();
      if (!collapse)
        continue;
      auto key = std::make_pair(collapse.getSrc(),
                                collapse.getReassociation());
      auto [it, inserted] = views.try_emplace(key, collapse.getResult());
      if (inserted || it->second == collapse.getResult())
        continue;
      rewriter.modifyOpInPlace(op, [&] { operand.set(it->second); });
      if (collapse->use_empty())
        rewriter.eraseOp(collapse);
    }
  }
};

} // namespace
