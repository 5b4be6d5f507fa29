//===- Common.h - LegalizeToLinalg's shared helpers ----------------------===//
//
// disc-legalize-to-linalg is split by op family, as IREE's StableHLO to
// linalg conversion is: Pointwise.cpp (elementwise ops, constants, iotas),
// DataMovement.cpp (broadcast, reshape, transpose, reverse, slice,
// concatenate, pad), Reduction.cpp (reduce, scan), GatherScatter.cpp
// (gather, scatter); LegalizeToLinalg.cpp holds the pass. This header
// declares what the families share.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_LIB_CONVERSION_LEGALIZETOLINALG_COMMON_H
#define DISC_LIB_CONVERSION_LEGALIZETOLINALG_COMMON_H

#include "disc/Analysis/ShapeConstraints.h"
#include "disc/Conversion/Passes.h"
#include "disc/Conversion/SizeChecks.h"
#include "disc/Dialect/Disc/DiscDialect.h"

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

namespace disc::legalize {

mlir::Value cIndex(mlir::OpBuilder &b, mlir::Location loc, int64_t v);

/// Unsigned integers and i1 (compared and converted as unsigned).
bool isUnsignedLike(mlir::Type t);

/// Signless version of an element type (ui8 -> i8) for arith ops.
mlir::Type signless(mlir::Type t);

mlir::RankedTensorType signlessTensor(mlir::Type t);

/// Slice sizes for a tensor of `type`: static dims as attributes (so that
/// slice ops infer/verify the static type), dynamic dims as `dims`.
llvm::SmallVector<mlir::OpFoldResult>
mixedSizes(mlir::OpBuilder &b, mlir::RankedTensorType type,
           llvm::ArrayRef<mlir::Value> dims);

/// `v` as type `t` through an unrealized cast (signed/unsigned integer
/// tensors <-> signless ones); `v` itself when it already has type `t`.
mlir::Value castTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                   mlir::Type t);

mlir::Value emptyTensor(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::RankedTensorType type,
                        llvm::ArrayRef<mlir::Value> dims);

/// A cf.assert of `cond` (none when it is the constant true).
void assertTrue(mlir::OpBuilder &b, mlir::Location loc, mlir::Value cond,
                const llvm::Twine &message);

/// The product of `dims` (1 for none).
mlir::Value product(mlir::OpBuilder &b, mlir::Location loc,
                    llvm::ArrayRef<mlir::Value> dims);

/// The identity of a reduction of `kind` over elements of type `t`.
mlir::Value reduceIdentity(mlir::OpBuilder &b, mlir::Location loc,
                           ReduceKind kind, mlir::Type t, bool isUnsigned);

/// `acc` combined with `x` by a reduction of `kind`.
mlir::Value reduceCombine(mlir::OpBuilder &b, mlir::Location loc,
                          ReduceKind kind, mlir::Value acc, mlir::Value x,
                          bool isUnsigned);

/// Dim groups of reshapes the shape analysis proved (see
/// ShapeConstraints::reshapeGroups), computed before the conversion starts.
using ReshapeGroups =
    llvm::DenseMap<mlir::Operation *,
                   llvm::SmallVector<mlir::ReassociationIndices>>;

/// Each gather's coordinate components (ShapeConstraints::
/// coordinateComponents), found before the conversion starts.
using GatherComponents =
    llvm::DenseMap<mlir::Operation *, llvm::SmallVector<mlir::Value>>;

/// Elementwise ops, ops with an empty result, constants, iotas.
void populatePointwisePatterns(mlir::RewritePatternSet &patterns);
/// Broadcast, reshape (by `groups`), transpose, reverse, slice,
/// concatenate, pad.
void populateDataMovementPatterns(mlir::RewritePatternSet &patterns,
                                  const ReshapeGroups &groups);
/// Reduce and scan.
void populateReductionPatterns(mlir::RewritePatternSet &patterns);
/// Gather (reading `components` in place of built coordinates) and
/// scatter (with `windowThreads`, leading unindexed window dims as an
/// scf.forall: see the pass's `scatter-window-threads`).
void populateGatherScatterPatterns(mlir::RewritePatternSet &patterns,
                                   const GatherComponents &components,
                                   bool windowThreads);

} // namespace disc::legalize

#endif // DISC_LIB_CONVERSION_LEGALIZETOLINALG_COMMON_H
