//===- GpuLoopUtils.h - helpers of the cuda loop-mapping code ---*- C++ -*-===//
//
// Shared by disc-map-loops-to-gpu (MapLoopsToGpu, RowKernels, ColumnLoops)
// and disc-row-blocks-to-gpu; printForComparison by the kernel-module
// passes (disc-merge-gpu-modules, disc-deduplicate-gpu-kernels).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_LIB_CONVERSION_CUDA_GPULOOPUTILS_H
#define DISC_LIB_CONVERSION_CUDA_GPULOOPUTILS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace disc::cuda {

/// max(0, ceildiv(ub - lb, step)), folded where the bounds are constants.
mlir::Value tripCount(mlir::OpBuilder &b, mlir::Location loc, mlir::Value lb,
                      mlir::Value ub, mlir::Value step);

/// `op` printed for comparing two ops as code: without locations and with
/// every element of every constant, whatever the command line asks of the
/// printer (disc-opt's -mlir-elide-elementsattrs-if-larger would print two
/// different constants alike). Used to find clones and duplicates among
/// kernel modules (disc-merge-gpu-modules, disc-deduplicate-gpu-kernels).
void printForComparison(mlir::Operation *op, llvm::raw_ostream &os);

/// The product of `counts` (1 for none), folded where they are constants.
mlir::Value productOf(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::ValueRange counts);

/// The `#gpu.loop_dim_map` of a loop mapped 1:1 to `processor`.
mlir::Attribute mappingFor(mlir::MLIRContext *ctx,
                           mlir::gpu::Processor processor);

/// The induction variables lb[i] + index[i] * step[i] of the linear
/// iteration `linear` of a nest with trip counts `counts` (innermost dim
/// fastest: consecutive threads touch consecutive elements). A `linear` of
/// an integer type (i32: the 32-bit index variant) has its divisions and
/// remainders done in that type, the counts truncated to it: the caller
/// guarantees that they fit.
llvm::SmallVector<mlir::Value> delinearize(mlir::OpBuilder &b,
                                           mlir::Location loc,
                                           mlir::Value linear,
                                           mlir::ValueRange counts,
                                           mlir::ValueRange lbs,
                                           mlir::ValueRange steps);

/// The linear iteration of the induction variables `ivs` of a nest with
/// lower bounds `lbs`, steps `steps` and trip counts `counts`, innermost
/// dim fastest (the inverse of delinearize), folded where it can be.
mlir::Value linearize(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::ValueRange ivs, mlir::ValueRange counts,
                      mlir::ValueRange lbs, mlir::ValueRange steps);

/// The identity of the reduction step `combine(acc, x)` when it is one
/// associative, commutative op (float sums and products only when marked
/// reassociable; float max/min from -inf/+inf), else null.
mlir::TypedAttr reductionIdentity(mlir::Operation *combine);

/// Whether `op` (or an op nested in it) writes memory, a store to a
/// memref for which `exempt` holds not counted (null: every write counts).
bool writesMemory(mlir::Operation *op,
                  llvm::function_ref<bool(mlir::Value)> exempt = nullptr);

/// The buffer a view (subview, reshape, cast) of it is taken from.
mlir::Value rootBuffer(mlir::Value memref);

/// The atomic read-modify-write kind that combines like `op`, an
/// associative and commutative arith op on 32- or 64-bit values (float
/// add/max/min, integer add/and/or/xor/max/min), or none. LLVM expands the
/// ones a GPU lacks (float max/min) into compare-and-swap loops.
std::optional<mlir::arith::AtomicRMWKind> atomicKindOf(mlir::Operation *op);

/// The memref and the indices of `op`, a memref.load or memref.store.
mlir::Value accessedMemref(mlir::Operation *op);
mlir::ValueRange accessedIndices(mlir::Operation *op);

/// Whether `value` is defined outside `op` (not in its regions).
bool definedOutside(mlir::Value value, mlir::Operation *op);

/// The SM version of an NVVM chip name: 80 for "sm_80", 90 for "sm_90a";
/// failure for anything else.
mlir::FailureOr<int64_t> smVersionOfChip(llvm::StringRef chip);

/// Whether `type` is a memref of one element with a static shape (a
/// reduction's accumulator, a scalar the host reads or writes).
bool isOneElementMemRef(mlir::Type type);

/// Whether the host computes `value` without reading memory: a scalar made
/// from `body`'s arguments and memory-free ops of `body` (constants, shape
/// arithmetic, `memref.dim`: memref operands count as their descriptors).
/// `memo` caches answers across calls.
bool hostComputable(mlir::Value value, mlir::Block &body,
                    llvm::DenseMap<mlir::Value, bool> &memo);

/// `scf.parallel (%i) = 0 to count` mapped to `processor`, with `inits` as
/// reduction initial values (the caller adds the scf.reduce then; without
/// them the body has its terminator).
mlir::scf::ParallelOp createMappedLoop(mlir::OpBuilder &b, mlir::Location loc,
                                       mlir::Value count,
                                       mlir::gpu::Processor processor,
                                       mlir::ValueRange inits = {});

/// The one op with regions in `block` if it is an OpTy, else null (none,
/// several, or one of another kind).
template <typename OpTy> OpTy onlyRegionOp(mlir::Block &block) {
  OpTy found;
  for (mlir::Operation &op : block.without_terminator()) {
    if (op.getNumRegions() == 0)
      continue;
    auto typed = llvm::dyn_cast<OpTy>(op);
    if (found || !typed)
      return nullptr;
    found = typed;
  }
  return found;
}

} // namespace disc::cuda

#endif // DISC_LIB_CONVERSION_CUDA_GPULOOPUTILS_H
