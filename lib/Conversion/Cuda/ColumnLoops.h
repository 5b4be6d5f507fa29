//===- ColumnLoops.h - column reductions as parallel loops ------*- C++ -*-===//
//
// Used by disc-map-loops-to-gpu (see DiscMapLoopsToGpu in Passes.td).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_LIB_CONVERSION_CUDA_COLUMNLOOPS_H
#define DISC_LIB_CONVERSION_CUDA_COLUMNLOOPS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace disc::cuda {

/// A column reduction is a sequential loop around a parallel loop whose
/// iterations each update their own elements:
///   scf.for %i { scf.parallel (%j) { acc[j] = f(acc[j], x[i, j]) } }
/// in the host code, or as the body of an outermost parallel loop
///   scf.parallel (%b) { scf.for %i { scf.parallel (%j) { ... } } }.
/// On a GPU the first would run in one thread (host code touching memory)
/// and the second one thread per %b. Both become
///   scf.parallel (%b, %j) { scf.for %i { ... } }
/// when that is the same computation: every buffer the inner body writes is
/// accessed there through one view at one index list that does not depend
/// on %i (so iteration (i, j) touches only j's elements, in the same order
/// of i), the inner bounds do not depend on %i or %b, and everything else
/// in the loop bodies is pure. Returns the number of nests rewritten.
///
/// Where every element the body updates is an accumulator (`e =
/// combine(e, x)`), the per-thread loop carries the elements as iteration
/// arguments (loaded before it, stored after it) instead of a load and a
/// store per iteration, and the nest is marked kColumnNestAttr.
unsigned interchangeColumnLoops(mlir::func::FuncOp func);

/// A reduction over an outer and an inner dim that keeps a middle one
/// (batch and group norm statistics and weight gradients: [N, C, HW] over
/// N and HW) lowers to a host loop around a parallel loop of row
/// reductions:
///   scf.for %n { scf.parallel (%c) {
///     %r = scf.for %hw iter_args(%a = load e) { ... }; store %r, e } }
/// which a GPU would run in one thread (host code touching memory). Where
/// the element e does not move with %n, the row loop's bounds do not
/// depend on %n or %c, it writes no memory and nothing in it touches e's
/// buffer, the nest becomes
///   scf.parallel (%c) {
///     %r = scf.for %k = 0 to N * HW iter_args(%a = load e) {
///       %n = k / HW, %hw = k % HW; ... }; store %r, e }
/// a row kernel whose row is the channel's N * HW elements in the original
/// order (the same sequence of combines). Returns the number of nests
/// rewritten.
unsigned collapseOuterReductionLoops(mlir::func::FuncOp func);

/// Marks a column nest whose per-thread loop carries its accumulators.
constexpr llvm::StringLiteral kColumnNestAttr = "disc.column_nest";

/// A column part has at least this many rows ...
constexpr int64_t kMinRowsPerPart = 32;
/// ... and a column at most this many parts.
constexpr int64_t kMaxColumnParts = 64;

/// The per-thread loop of a column nest (kColumnNestAttr) when its rows
/// can be split between threads: the nest's dims start at 0 with step 1
/// and their sizes and the loop's bounds are computed outside it, and every
/// iteration argument is combined by an op with an identity
/// (reductionIdentity: float sums marked reassociable). Null otherwise.
mlir::scf::ForOp splittableColumnLoop(mlir::scf::ParallelOp nest);

/// Host code at `b`: how many parts to split each column's rows into, so
/// that columns * parts reaches about `threads` threads:
/// min(ceildiv(threads, columns), ceildiv(rows, kMinRowsPerPart),
/// kMaxColumnParts). Below 2, splitting does not pay.
mlir::Value columnParts(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::scf::ParallelOp nest, mlir::scf::ForOp loop,
                        int64_t threads);

/// Builds at `b` the split form of `nest` (`loop` its splittable loop):
///   %partials = memref.alloc(parts, columns...)
///   scf.parallel (%p, columns...) {  // part %p of every column's rows
///     %partials[%p, ...] = the loop over rows [p * n, (p + 1) * n) from
///                          the combiners' identities
///   }
///   scf.parallel (columns...) {      // each column's parts, in order
///     e = e combined with %partials[0, ...], %partials[1, ...], ...
///   }
///   memref.dealloc %partials
/// and returns the two nests. `nest` itself is left in place.
std::pair<mlir::scf::ParallelOp, mlir::scf::ParallelOp>
splitColumnNest(mlir::OpBuilder &b, mlir::scf::ParallelOp nest,
                mlir::scf::ForOp loop, mlir::Value parts);

} // namespace disc::cuda

#endif // DISC_LIB_CONVERSION_CUDA_COLUMNLOOPS_H
