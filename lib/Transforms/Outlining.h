//===- Outlining.h - helpers shared by the outlining passes -----*- C++ -*-===//
#ifndef DISC_LIB_TRANSFORMS_OUTLINING_H
#define DISC_LIB_TRANSFORMS_OUTLINING_H

#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SetVector.h"

namespace disc {

/// Splits the values an outlined region uses from above into the new
/// function's arguments and the constant ops to clone into it instead
/// (so that LLVM still folds them: loop bounds and steps in particular).
inline void
splitCaptures(const llvm::SetVector<mlir::Value> &used,
              llvm::SmallVectorImpl<mlir::Value> &arguments,
              llvm::SmallVectorImpl<mlir::Operation *> &constants) {
  for (mlir::Value value : used) {
    mlir::Operation *def = value.getDefiningOp();
    if (def && def->hasTrait<mlir::OpTrait::ConstantLike>())
      constants.push_back(def);
    else
      arguments.push_back(value);
  }
}

} // namespace disc

#endif // DISC_LIB_TRANSFORMS_OUTLINING_H
