//===- Passes.h - disc graph-level passes -----------------------*- C++ -*-===//
#ifndef DISC_TRANSFORMS_PASSES_H
#define DISC_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace disc {
#define GEN_PASS_DECL
#include "disc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "disc/Transforms/Passes.h.inc"

/// Name of the unit attribute marking the compiled entry function.
inline constexpr llvm::StringLiteral kEntryAttr = "disc.entry";
/// Name of the unit arg attribute marking the RAL context argument.
inline constexpr llvm::StringLiteral kRalContextAttr = "disc.ral_context";
/// Unit attribute of the kernel functions disc-outline-loop-kernels creates.
inline constexpr llvm::StringLiteral kKernelAttr = "disc.kernel";
/// Unit attribute of a parallel loop body outlined by disc-parallelize-loops:
/// `(lo, hi, work, captures...)`, run by the runtime's parallel_for.
inline constexpr llvm::StringLiteral kParallelBodyAttr = "disc.parallel_body";
/// Unit arg attribute of a kernel or parallel body memref argument whose
/// buffer overlaps no other argument's that either writes
/// (disc-mark-noalias-args).
inline constexpr llvm::StringLiteral kNoAliasAttr = "disc.noalias";
/// Positions of the marked arguments' aligned pointers once memref
/// arguments are expanded for LLVM, and the expanded argument count
/// (disc-mark-noalias-args; applied by disc-apply-noalias-args).
inline constexpr llvm::StringLiteral kNoAliasLlvmArgsAttr =
    "disc.noalias_llvm_args";
inline constexpr llvm::StringLiteral kLlvmArgCountAttr = "disc.llvm_arg_count";
} // namespace disc

#endif // DISC_TRANSFORMS_PASSES_H
