//===- VectorGrids.h - the 4-wide variant of elementwise grids --*- C++ -*-===//
//
// Part of disc-map-loops-to-gpu: an elementwise loop nest whose innermost
// accesses are contiguous gets a second grid in which each thread runs four
// consecutive iterations of the innermost dim (or, with linear lanes, of
// the whole nest, across rows) and those accesses become vector loads and
// stores (128-bit for 32-bit elements). The host picks it per call when
// the innermost extent (the total) is a multiple of four and every
// vectorised buffer is aligned for it.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_LIB_CONVERSION_CUDA_VECTORGRIDS_H
#define DISC_LIB_CONVERSION_CUDA_VECTORGRIDS_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <string>

namespace disc::cuda {

/// Iterations of the innermost dim one thread runs in the vector variant.
constexpr int64_t kVectorWidth = 4;

/// The loads and stores of an elementwise nest that the vector variant
/// turns into vector accesses, and the buffers they touch.
struct VectorPlan {
  llvm::SmallVector<mlir::Operation *> accesses;
  llvm::SmallVector<mlir::Value> buffers; // each once
  /// Linear lanes: a thread runs four consecutive iterations of the whole
  /// nest (its linear iterations 4t .. 4t+3, which may cross rows), and
  /// the planned accesses, each at exactly the nest's induction variables,
  /// read and write a 1-d view of their buffer at 4t. Otherwise the lanes
  /// are four iterations of the innermost dim within one row.
  bool linear = false;
};

/// The plan for `loop` (an outermost `scf.parallel`), or none when the
/// vector variant does not apply: the body has ops with regions, the
/// innermost dim does not start at 0 with step 1, or no load or store can
/// be vectorised.
/// Lanes within a row where the innermost extent is a static multiple of
/// kVectorWidth, or dynamic and some planned access is contiguous only
/// along the row (a row-broadcast operand). Linear lanes (a nest of two or
/// more dims from 0 in steps of 1) where the static innermost extent is
/// not a multiple (only the accesses at the nest's induction variables
/// planned), or where it is dynamic and every planned access is at the
/// nest's induction variables.
/// An access can be when its buffer is defined outside the loop, has the
/// identity layout and 8-, 16- or 32-bit elements, its last index is the
/// innermost induction variable, its other indices are other induction
/// variables or values defined outside, and the body does not both read
/// and write that buffer (the variant reorders accesses of one thread's
/// four iterations, which are independent by scf.parallel's semantics).
/// Without `allowLinear`, rows of four only. Where there is no plan,
/// `whyNot` (if given) says why.
std::optional<VectorPlan> planVectorGrid(mlir::scf::ParallelOp loop,
                                         bool allowLinear = true,
                                         std::string *whyNot = nullptr);

/// Bytes of one element of `type` that vector accesses group (8-, 16- and
/// 32-bit integers and floats), or 0.
int64_t vectorElementBytes(mlir::MemRefType type);

/// Host code: whether every count of `counts` is a multiple of
/// kVectorWidth and every buffer of `buffers` (identity layout) has its
/// address aligned to the vector's size and, above rank 1, its last dim a
/// multiple of kVectorWidth (so that each of its rows starts aligned).
/// With `rows` false, rows are not checked.
mlir::Value vectorAccessCondition(mlir::OpBuilder &b, mlir::Location loc,
                                  mlir::ValueRange counts,
                                  mlir::ValueRange buffers, bool rows = true);

/// Host code, before `loop` (whose trip counts are `tripCounts`, their
/// product `total`): whether
/// this call can run the vector variant. Lanes within a row:
/// vectorAccessCondition of the innermost trip count and the planned
/// buffers. Linear lanes: the total trip count a multiple of kVectorWidth,
/// every planned buffer aligned for the vector and, past its first dim,
/// of the nest's trip counts (so that its element offset is the nest's
/// linear iteration).
mlir::Value vectorGridCondition(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::ValueRange tripCounts,
                                mlir::Value total, const VectorPlan &plan);

/// Host code for a plan with linear lanes: a 1-d view of each planned
/// buffer (identity layout, so contiguous).
llvm::DenseMap<mlir::Value, mlir::Value>
linearViews(mlir::OpBuilder &b, mlir::Location loc, const VectorPlan &plan);

/// Clones `loop`'s body at `b` for a plan with linear lanes: lane k runs
/// linear iteration `first` + k (`first` a multiple of kVectorWidth below
/// the total, whose induction variables are `ivs`; lanes past the first
/// carried from it through `tripCounts`), each op once per lane, in
/// lockstep; each planned access becomes one vector access of its
/// buffer's view in `views` (linearViews) at `first`.
void cloneBodyLinearVectorized(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::scf::ParallelOp loop, mlir::Value first,
                               mlir::ValueRange ivs,
                               mlir::ValueRange tripCounts,
                               const VectorPlan &plan,
                               const llvm::DenseMap<mlir::Value, mlir::Value>
                                   &views);

/// Clones the ops of `body` (without its terminator) at `b` once per lane,
/// lane k with `lanes[k]` (kVectorWidth lanes), in lockstep: each op for
/// every lane before the next op. Then each access of `vectorized` (loads
/// and stores of `body` whose lanes touch consecutive elements, the first
/// lane's the lowest, aligned to the vector's size) becomes one vector
/// access with the first lane's memref and indices: a load at its first
/// lane's place, each lane's value extracted from it; a store after its
/// last lane's, of the lanes' values. The lanes' iterations must be
/// independent: their accesses are reordered. `place`, where given, says
/// where the vector access of a planned op of `body` goes instead: its
/// memref and indices.
using VectorPlace = llvm::function_ref<
    std::pair<mlir::Value, llvm::SmallVector<mlir::Value>>(mlir::Operation *)>;
void cloneLanesVectorized(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Block &body,
                          llvm::MutableArrayRef<mlir::IRMapping> lanes,
                          const llvm::DenseSet<mlir::Operation *> &vectorized,
                          VectorPlace place = nullptr);

/// Clones `loop`'s body at `b` for the iterations `ivs` (the innermost one
/// the first of kVectorWidth consecutive ones): each op once per
/// iteration, in lockstep, then each planned access of the four clones
/// made one vector access.
void cloneBodyVectorized(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::scf::ParallelOp loop, mlir::ValueRange ivs,
                         const VectorPlan &plan);

} // namespace disc::cuda

#endif // DISC_LIB_CONVERSION_CUDA_VECTORGRIDS_H
