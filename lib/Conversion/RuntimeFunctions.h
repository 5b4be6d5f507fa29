//===- RuntimeFunctions.h - declarations of RAL entry points ----*- C++ -*-===//
#ifndef DISC_LIB_CONVERSION_RUNTIMEFUNCTIONS_H
#define DISC_LIB_CONVERSION_RUNTIMEFUNCTIONS_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace disc {

/// The LLVM-dialect declaration of runtime function `name` in `module`,
/// added at the top of the module the first time it is asked for.
inline mlir::LLVM::LLVMFuncOp
declareRuntimeFunction(mlir::ModuleOp module, llvm::StringRef name,
                       mlir::LLVM::LLVMFunctionType type) {
  if (auto f = module.lookupSymbol<mlir::LLVM::LLVMFuncOp>(name))
    return f;
  auto b = mlir::OpBuilder::atBlockBegin(module.getBody());
  return mlir::LLVM::LLVMFuncOp::create(b, module.getLoc(), name, type);
}

} // namespace disc

#endif // DISC_LIB_CONVERSION_RUNTIMEFUNCTIONS_H
