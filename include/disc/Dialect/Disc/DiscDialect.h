//===- DiscDialect.h - the disc dialect -------------------------*- C++ -*-===//
#ifndef DISC_DIALECT_DISC_DISCDIALECT_H
#define DISC_DIALECT_DISC_DISCDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "disc/Dialect/Disc/DiscOpsDialect.h.inc"
#include "disc/Dialect/Disc/DiscOpsEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "disc/Dialect/Disc/DiscOpsAttrs.h.inc"

namespace disc {
/// Appends a `tensor<rank x index>` holding the shape of `value` (static dims
/// as constants, dynamic dims as `tensor.dim`) to `shapes`.
llvm::LogicalResult reifyShapeOf(mlir::OpBuilder &builder, mlir::Location loc,
                                 mlir::Value value,
                                 llvm::SmallVectorImpl<mlir::Value> &shapes);

/// Result dims of a disc op as index values, computed from its operands
/// through InferShapedTypeOpInterface (one vector per result).
llvm::FailureOr<llvm::SmallVector<mlir::Value>>
reifyResultDims(mlir::OpBuilder &builder, mlir::Operation *op,
                unsigned resultIndex = 0);

/// Index values for every dim of `value`.
llvm::SmallVector<mlir::Value> getDims(mlir::OpBuilder &builder,
                                       mlir::Location loc, mlir::Value value);

/// "file:line:col" for a location that has one (looking through name,
/// call-site and fused locations), otherwise MLIR's printed form.
std::string locationString(mlir::Location loc);

/// "disc.add at file:line:col": names an op in run-time error messages.
std::string opLabel(mlir::Operation *op);

/// The elements of a 1-d shape operand as index values.
llvm::SmallVector<mlir::Value> getShapeElements(mlir::OpBuilder &builder,
                                                mlir::Location loc,
                                                mlir::Value shape);
} // namespace disc

#define GET_OP_CLASSES
#include "disc/Dialect/Disc/DiscOps.h.inc"

#endif // DISC_DIALECT_DISC_DISCDIALECT_H
