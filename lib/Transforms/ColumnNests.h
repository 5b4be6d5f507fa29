//===- ColumnNests.h - a row loop around a parallel column loop -----------===//
#ifndef DISC_LIB_TRANSFORMS_COLUMNNESTS_H
#define DISC_LIB_TRANSFORMS_COLUMNNESTS_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace disc {

/// The 1-d `scf.parallel` over columns that is the whole body of the row
/// loop `rows` (no iter_args), from 0 with step 1 to an extent defined
/// above the row loop, with no results; else null. What reductions that
/// keep the innermost dim lower to (linalg-to-parallel-loops), which
/// disc-parallel-column-blocks and disc-parallel-row-chunks rewrite.
inline mlir::scf::ParallelOp columnLoopOf(mlir::scf::ForOp rows) {
  if (rows.getNumRegionIterArgs() != 0 ||
      !llvm::hasSingleElement(rows.getBody()->without_terminator()))
    return nullptr;
  auto columns = mlir::dyn_cast<mlir::scf::ParallelOp>(rows.getBody()->front());
  if (!columns || columns.getNumLoops() != 1 || columns.getNumResults() != 0 ||
      !mlir::isConstantIntValue(columns.getLowerBound().front(), 0) ||
      !mlir::isConstantIntValue(columns.getStep().front(), 1))
    return nullptr;
  mlir::Value extent = columns.getUpperBound().front();
  if (!extent.getParentRegion()->isProperAncestor(&rows.getRegion()))
    return nullptr;
  return columns;
}

} // namespace disc

#endif // DISC_LIB_TRANSFORMS_COLUMNNESTS_H
