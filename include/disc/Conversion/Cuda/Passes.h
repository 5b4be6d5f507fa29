//===- Passes.h - disc passes of the CUDA target ----------------*- C++ -*-===//
#ifndef DISC_CONVERSION_CUDA_PASSES_H
#define DISC_CONVERSION_CUDA_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace disc {
#define GEN_PASS_DECL
#include "disc/Conversion/Cuda/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "disc/Conversion/Cuda/Passes.h.inc"
} // namespace disc

#endif // DISC_CONVERSION_CUDA_PASSES_H
