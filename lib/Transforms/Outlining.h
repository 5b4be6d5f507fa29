//===- Outlining.h - helpers shared by the outlining passes -----*- C++ -*-===//
#ifndef DISC_LIB_TRANSFORMS_OUTLINING_H
#define DISC_LIB_TRANSFORMS_OUTLINING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/SymbolTable.h"
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

/// Creates the function an outlining pass moves code into: named
/// `<prefix><N>` (the first free N from `counter`), private, `noinline`
/// (carried to LLVM by convert-func-to-llvm, so LLVM does not merge it
/// back), internal linkage (no C wrapper from the JIT, and LLVM may drop
/// arguments it does not use, e.g. descriptor fields), and marked with the
/// unit attribute `marker`. Inserted at `builder`'s insertion point.
inline mlir::func::FuncOp
createOutlinedFunction(mlir::OpBuilder &builder, mlir::Location loc,
                       mlir::SymbolTable &symbols, llvm::StringRef prefix,
                       unsigned &counter, mlir::FunctionType type,
                       llvm::StringRef marker) {
  mlir::MLIRContext *ctx = builder.getContext();
  std::string name;
  do {
    name = (prefix + llvm::Twine(counter++)).str();
  } while (symbols.lookup(name));
  auto func = mlir::func::FuncOp::create(builder, loc, name, type);
  func.setPrivate();
  func->setAttr("passthrough", mlir::ArrayAttr::get(
                                   ctx, {mlir::StringAttr::get(ctx, "noinline")}));
  func->setAttr("llvm.linkage", mlir::LLVM::LinkageAttr::get(
                                    ctx, mlir::LLVM::Linkage::Internal));
  func->setAttr(marker, mlir::UnitAttr::get(ctx));
  symbols.insert(func);
  return func;
}

} // namespace disc

#endif // DISC_LIB_TRANSFORMS_OUTLINING_H
