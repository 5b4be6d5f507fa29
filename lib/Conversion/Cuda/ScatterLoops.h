//===- ScatterLoops.h - scatter loops as parallel loops ---------*- C++ -*-===//
//
// Used by disc-map-loops-to-gpu (see DiscMapLoopsToGpu in Passes.td).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_LIB_CONVERSION_CUDA_SCATTERLOOPS_H
#define DISC_LIB_CONVERSION_CUDA_SCATTERLOOPS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace disc::cuda {

/// A scatter is a sequential loop of the host code over the updates that
/// writes where loaded indices say:
///   scf.for %u { %i = load idx[%u]; scf.for %j { out[%i, %j] = v } }
///   scf.for %u { ...; out[%i, %j] = combine(out[%i, %j], v) }
/// On a GPU it would run in one thread (host code touching memory: the
/// GraphNet EdgeCNN's max aggregation over 2 x 10^6 elements, 7.5 ms
/// against eager's 0.8). It becomes a parallel loop over the updates, each
/// combining write a
/// `memref.atomic_rmw` of the combiner's kind (LLVM expands what a GPU
/// lacks, float max/min, into compare-and-swap loops that keep the NaN
/// rule), when that computes what PyTorch's CUDA kernels do:
///   - the loop carries no value and nothing in it but stores writes memory;
///   - every buffer it writes is either never read in it (a plain store:
///     with repeated indices one of the values wins, as in PyTorch's CUDA
///     scatter and index_put), or read only by the load of a
///     load-combine-store at the same indices, with an associative and
///     commutative combiner that has an atomic kind, on 32- or 64-bit
///     elements (add, max, min of every kind, and, or, xor; float sums then
///     add in another order, as PyTorch's CUDA atomics do; products stay
///     sequential).
/// A window loop (`scf.for %j` over an update's row, last in the body or
/// in an `scf.if` there, with bounds from outside, writing at `%j`) becomes
/// the parallel loop's innermost dimension: one thread per element of the
/// update rather than per update, so writes are coalesced; the index loads
/// and checks before it run per element. Deeper loops stay the thread's.
/// Returns the number of loops rewritten.
unsigned parallelizeScatterLoops(mlir::func::FuncOp func);

} // namespace disc::cuda

#endif // DISC_LIB_CONVERSION_CUDA_SCATTERLOOPS_H
