//===- SizeChecks.h - run-time checks of sizes computed from data -*- C++ -*-===//
//
// Sizes that compiled code computes at run time (read from a shape tensor,
// derived from padding or slice bounds) reach allocations and views. A
// negative size or an element count whose byte size overflows 64 bits
// would make a buffer smaller than the loops that write it, so such sizes
// are checked with cf.assert (a disc.InvocationError at run time) before
// they are used.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_CONVERSION_SIZECHECKS_H
#define DISC_CONVERSION_SIZECHECKS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace disc {

/// Emits asserts that every value of `sizes` (index values) is
/// non-negative and that their product times `elementBytes` fits in a
/// signed 64-bit integer. Sizes that are constants are not checked again;
/// `message` names the op. Returns the element count (the product).
mlir::Value emitCheckedElementCount(mlir::OpBuilder &b, mlir::Location loc,
                                    mlir::ArrayRef<mlir::Value> sizes,
                                    int64_t elementBytes,
                                    const llvm::Twine &message);

/// Whether sizes `x` and `y` (index values) are equal without a run-time
/// check: the same value, the same constant, or tensor.dim ops of one
/// tensor's same dim.
bool sizesKnownEqual(mlir::Value x, mlir::Value y);

/// cf.assert(x == y) with `message` unless sizesKnownEqual(x, y) (two
/// sizes an op relies on being equal).
void emitAssertEqualSizes(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                          mlir::Value y, const llvm::Twine &message);

/// cf.assert, per spatial dim of `op` (a disc.convolution), that its
/// dilated window fits in its padded input, as PyTorch requires ("kernel
/// size can't be greater than actual input size"): without the check the
/// result size, span / stride + 1, would round a negative span up to one
/// element. Emitted at `b` before the result is allocated; static sizes
/// that fit emit nothing.
void emitConvolutionWindowChecks(mlir::OpBuilder &b, mlir::Operation *op);

/// The entries of `dims` (one per dim of `type`) at `type`'s dynamic dims:
/// the operands of a tensor.empty or memref.alloc of `type`.
llvm::SmallVector<mlir::Value> dynamicSizes(mlir::ShapedType type,
                                            mlir::ArrayRef<mlir::Value> dims);

} // namespace disc

#endif // DISC_CONVERSION_SIZECHECKS_H
