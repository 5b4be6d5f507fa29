//===- ColumnLoops.h - column reductions as parallel loops ------*- C++ -*-===//
//
// Used by disc-map-loops-to-gpu (see DiscMapLoopsToGpu in Passes.td).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_LIB_CONVERSION_CUDA_COLUMNLOOPS_H
#define DISC_LIB_CONVERSION_CUDA_COLUMNLOOPS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

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
unsigned interchangeColumnLoops(mlir::func::FuncOp func);

} // namespace disc::cuda

#endif // DISC_LIB_CONVERSION_CUDA_COLUMNLOOPS_H
