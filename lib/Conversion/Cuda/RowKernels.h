//===- RowKernels.h - a row per block or warp: row reductions --*- C++ -*-===//
//
// The block-per-row and warp-per-row variants of a row kernel, built by
// disc-map-loops-to-gpu and turned into gpu.launch ops by
// disc-row-blocks-to-gpu.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_LIB_CONVERSION_CUDA_ROWKERNELS_H
#define DISC_LIB_CONVERSION_CUDA_ROWKERNELS_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>

namespace disc::cuda {

/// The attribute that marks a block-per-row nest.
constexpr llvm::StringLiteral kRowBlockAttr = "disc.row_block";

/// The attribute that marks a warp-per-row nest.
constexpr llvm::StringLiteral kRowWarpAttr = "disc.row_warp";

/// The attribute that marks a row cache: a `memref.alloc(%n)` of rank 1
/// in the body of a row loop (a block- or warp-per-row nest) holding one
/// row of a buffer the row's phases read or write more than once.
/// disc-row-blocks-to-gpu makes it a slice of the block's dynamic shared
/// memory (and drops its `memref.dealloc`); run as loops (the CPU), it is
/// a heap buffer per row.
constexpr llvm::StringLiteral kRowCacheAttr = "disc.row_cache";

/// The attribute that marks a byte buffer of loop temporaries
/// (disc-hoist-loop-temporaries): each iteration's slice is dead when its
/// iteration ends, so a row cache of it need not write the buffer.
constexpr llvm::StringLiteral kLoopTemporariesAttr = "disc.loop_temporaries";

/// Whether `value` is a row cache (kRowCacheAttr).
bool isRowCache(mlir::Value value);

/// Threads of a warp, and the rows (warps) of a warp-per-row block.
constexpr int64_t kWarpSize = 32;
constexpr int64_t kRowsPerWarpBlock = 8;

/// The attribute that marks the host's `scf.if` choosing between variants
/// of one kernel (a row kernel's then: another such `scf.if`, one row per
/// warp or one per block, else: one row per thread; an elementwise grid's
/// then: four iterations per thread with vector accesses, else: one; a
/// column nest's then: rows split into parts, two grids, else: one thread
/// per column). Kernel counts take the else branch.
constexpr llvm::StringLiteral kRowVariantsAttr = "disc.row_variants";

/// Variant ids passed to `disc_ral_note_variant` (counted in disc.stats()).
enum class RowVariant : int64_t {
  PerThread = 0,
  PerBlock = 1,
  PerWarp = 6,
  // Elementwise grids that have a vector variant (VectorGrids.h).
  Vector = 2,
  Scalar = 3,
  // ... whose vector variant's lanes are linear iterations of the whole
  // nest (VectorPlan::linear), run with vector accesses.
  LinearVector = 13,
  // Column nests with a split variant (ColumnLoops.h): rows split into
  // parts, or one thread per column.
  ColumnSplit = 4,
  ColumnPerThread = 5,
  // Elementwise grids over two or more dims: delinearised in 32 bits
  // (every thread's linear index fits), or in 64 (MapLoopsToGpu.cpp,
  // index32Flag).
  Index32 = 7,
  Index64 = 8,
  // Block- and warp-per-row kernels with row caches (RowCachePlan): with
  // the caches in shared memory, or without them (too long rows).
  CachedRows = 11,
  UncachedRows = 12,
  // Block- and warp-per-row kernels with vector phases (RowVectorPlan):
  // run with vector accesses, or with scalar ones (a trip count not a
  // multiple of 4, or a buffer not aligned for the vector).
  VectorRows = 9,
  ScalarRows = 10
};

/// A row kernel: an outermost `scf.parallel` over rows whose body is a
/// sequence of
///   - phases: a reduction over the row (`scf.for` whose every iteration
///     argument is combined with one associative, commutative op and whose
///     body writes no memory), or a stage over the row (`scf.parallel`
///     without results that writes no stack buffer);
///   - row-level ops: ops without regions that compute, load, store or
///     declare a static stack buffer.
/// At least one phase; every phase's trip count known on the host.
struct RowKernel {
  mlir::scf::ParallelOp loop;
  llvm::SmallVector<mlir::Operation *> phases;
};

/// The vector variant of a row kernel's phases (in its block- and
/// warp-per-row nests): each thread runs kVectorWidth consecutive
/// iterations of a phase per step, 4t .. 4t + 3, then 4(t + T) .., and the
/// phase's accesses of the row become vector accesses. A phase qualifies
/// when it has one dim from 0 with step 1, a trip count known on the host,
/// a body without regions whose memory effects are loads and stores, and
/// at least one access that can be vectorised: a load or store whose last
/// index is the phase's induction variable, whose other indices are
/// defined outside the phase, of 8-, 16- or 32-bit elements, through views
/// (subview, collapse_shape, expand_shape, cast) that keep the row's last
/// dim contiguous and its start a multiple of kVectorWidth elements from
/// an identity-layout buffer defined outside the row loop (the root).
struct RowVectorPlan {
  /// Per qualifying phase, the accesses made vector accesses.
  llvm::DenseMap<mlir::Operation *, llvm::SmallVector<mlir::Operation *>>
      accesses;
  /// The roots of those accesses, each once.
  llvm::SmallVector<mlir::Value> roots;
  /// Host values that must be multiples of kVectorWidth: the qualifying
  /// phases' trip counts, and the inner sizes of expand_shapes of a root's
  /// last dim that are not static.
  llvm::SmallVector<mlir::Value> hostMultiples;
};

/// The plan for `kernel`, or nullopt when no phase qualifies. Host code for
/// the trip counts is created at `b` (before the row loop).
std::optional<RowVectorPlan> planRowVectors(mlir::OpBuilder &b,
                                            const RowKernel &kernel);

/// Host code: whether this call can run the vector phases of `plan`: every
/// value of hostMultiples a multiple of kVectorWidth, every root aligned to the
/// vector's size with (above rank 1) its last dim a multiple of
/// kVectorWidth.
mlir::Value rowVectorCondition(mlir::OpBuilder &b, mlir::Location loc,
                               const RowVectorPlan &plan);

/// The phases of a block- or warp-per-row nest: with `plan`, each planned
/// phase's thread loop branches on `flag` (an index the host computed from
/// rowVectorCondition: 1 for the vector iterations, 0 for the scalar ones;
/// uniform across the row's threads).
struct RowVectorChoice {
  const RowVectorPlan *plan = nullptr;
  mlir::Value flag;
};

/// `loop` as a row kernel, or nullopt with the reason in `why`.
std::optional<RowKernel> analyzeRowKernel(mlir::scf::ParallelOp loop,
                                          std::string &why);

/// A row kernel whose rows of some buffers are kept in row caches
/// (kRowCacheAttr): a buffer whose row the phases touch in two or more
/// phases, every access at [row-level indices..., the phase's induction
/// variable] through one view (structurally equal views count as one, and
/// a collapse_shape that only drops unit dims is read through as its
/// source: the accesses are rewritten so, in place), in
/// phases over the same row length from 0 with step 1 (each phase then
/// touches every element of the row), with straight-line bodies whose
/// only memory effects are loads and stores, and no other access to the
/// buffer in the row loop. The first phase that touches the row reads it
/// from the buffer and keeps it in the cache (or writes the cache), later
/// phases read the cache; only the last phase that writes the row writes
/// the buffer, and none a slice of loop temporaries (kLoopTemporariesAttr:
/// dead after its row). A softmax then reads its input once and writes its output
/// once, where it read the input twice and the output twice and wrote it
/// twice; a layer norm reads its input once instead of three times.
struct RowCachePlan {
  /// The rewritten kernel: a clone of the kernel's loop, placed before it,
  /// with the caches (the caller erases it).
  RowKernel kernel;
  /// Host code: the bytes of one row's caches (rowCacheBytes, summed).
  mlir::Value hostBytesPerRow;
};

/// The plan for `kernel`, or nullopt when no buffer qualifies. Host code
/// (row lengths, bytes) and the clone are created at `b` (before the row
/// loop). Failure (an error emitted) if the rewritten clone is no row
/// kernel: a bug of the planning, never a silent fallback.
mlir::FailureOr<std::optional<RowCachePlan>>
planRowCache(mlir::OpBuilder &b, const RowKernel &kernel);

/// The bytes row cache `cache` takes: its elements' bytes, rounded up to a
/// multiple of 16 (each cache then starts 16-byte aligned: vector
/// accesses).
mlir::Value rowCacheBytes(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::memref::AllocOp cache, mlir::Value count);

/// The longest phase of `kernel` (elements per row) computed by host code
/// at `b`'s insertion point (before the loop), or null if some trip count
/// depends on the row.
mlir::Value hostRowLength(mlir::OpBuilder &b, const RowKernel &kernel);

/// Threads per block for rows of `rowLength` elements (null: unknown):
/// a multiple of 32 in [32, 256], about four elements per thread.
mlir::Value threadsForRow(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value rowLength);

/// Builds the block-per-row nest of `kernel` at `b`'s insertion point:
///   scf.parallel (%row) = 0 to rows  {block_x, disc.row_block} {
///     row-level ops (every thread of the block runs them)
///     scf.parallel (%t) = 0 to threads  {thread_x} [init(identities)] {
///       a phase's iterations t, t + threads, ... [partial results;
///       scf.reduce with the phase's combiners]
///     }
///     ...
///   }
/// Reduction phases then combine their initial values with the block's
/// result. Each thread's loop over its part of a phase is unrolled by
/// `unroll` (1: not unrolled), its loads before its stores where the body
/// allows. With `vectors`, a planned phase's thread loop holds
///   scf.if %flag != 0 {
///     iterations 4t .. 4t + 3, 4(t + threads) .., vector accesses (a
///     reduction: a partial result per lane, combined at the end)
///   } else { the scalar iterations above }
/// Run as ordinary loops (the CPU), the nest computes what `kernel` does;
/// disc-row-blocks-to-gpu makes it a gpu.launch.
void buildRowBlockNest(mlir::OpBuilder &b, const RowKernel &kernel,
                       mlir::Value threads, unsigned unroll,
                       RowVectorChoice vectors = {});

/// Builds the warp-per-row nest of `kernel` at `b`'s insertion point: a
/// block of kRowsPerWarpBlock warps, one row each,
///   scf.parallel (%g) = 0 to ceildiv(rows, R)  {block_x, disc.row_warp} {
///     scf.parallel (%w) = 0 to R  {thread_y} {
///       scf.if %g * R + %w < rows {
///         row-level ops (every lane of the warp runs them)
///         scf.parallel (%lane) = 0 to 32  {thread_x} [...] {
///           a phase's iterations lane, lane + 32, ... (as the block
///           variant's, with the warp for the block)
///         }
///         ...
///       }
///     }
///   }
/// Run as ordinary loops (the CPU), it computes what `kernel` does;
/// disc-row-blocks-to-gpu makes it a gpu.launch whose reductions are warp
/// shuffles, without shared memory or block barriers.
void buildRowWarpNest(mlir::OpBuilder &b, const RowKernel &kernel,
                      unsigned unroll, RowVectorChoice vectors = {});

/// Parallel loops nested in `op`'s regions become sequential `scf.for`
/// nests (innermost first).
void sequentializeParallelLoopsIn(mlir::Operation *op);

} // namespace disc::cuda

#endif // DISC_LIB_CONVERSION_CUDA_ROWKERNELS_H
