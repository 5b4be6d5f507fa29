//===- Runtime.h - the DISC runtime (RAL): public C++ API -------*- C++ -*-===//
//
// The runtime knows nothing of MLIR. It runs a compiled entry function given
// as a packed function pointer (`void fn(void **args)`, the convention of
// MLIR's ExecutionEngine packed wrappers) whose arguments are, in order:
//
//   args[0]            -> void *            the per-call ExecutionContext
//   per input tensor   -> allocated ptr, aligned ptr, int64 offset,
//                         int64 sizes[rank], int64 strides[rank]
//   last (if results)  -> storage for the results: for each result, the
//                         words {allocated, aligned, offset, sizes[rank],
//                         strides[rank]} (all 8-byte), results back to back.
//
// Every buffer the compiled code allocates comes from disc_ral_alloc (see
// RalApi.h) and belongs to the call's ExecutionContext; buffers that become
// outputs are handed to the caller without a copy, the rest are released when
// the call returns (or fails).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_RUNTIME_H
#define DISC_RUNTIME_RUNTIME_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace disc {
namespace ral {

enum class DType : uint8_t { F16, BF16, F32, F64, I1, I8, I16, I32, I64, U8 };
size_t dtypeSize(DType dtype);
const char *dtypeName(DType dtype); // "f32", "bf16", "i1", ...
/// DLPack's type codes (kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4,
/// kDLBool 6) with bit widths, to and from DType. False: no such DType.
bool dtypeFromDLPack(uint8_t code, uint8_t bits, uint16_t lanes, DType &out);
void dtypeToDLPack(DType dtype, uint8_t &code, uint8_t &bits);

/// Base of every error the runtime raises.
class RuntimeError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};
/// The inputs of a call contradict the compiled program (count, rank, dtype,
/// static size, or two sizes that must be equal). Raised before any kernel
/// runs when the signature catches it, or by a run-time check in the
/// compiled code (disc_ral_fail).
class InvocationError : public RuntimeError {
public:
  using RuntimeError::RuntimeError;
};

/// A caching allocator: 64-byte aligned blocks, freed blocks kept in
/// size-bucketed free lists for reuse. Thread-safe.
class Allocator {
public:
  Allocator();
  ~Allocator();
  Allocator(const Allocator &) = delete;
  Allocator &operator=(const Allocator &) = delete;
  /// Never returns null for a successful call; 0 bytes gives a valid block.
  void *allocate(size_t bytes);
  void deallocate(void *ptr);
  /// Frees every cached (unused) block back to the system.
  void releaseCache();
  struct Stats {
    size_t bytesInUse = 0;    // handed out and not yet returned
    size_t peakBytesInUse = 0;
    size_t bytesCached = 0;   // returned, kept for reuse
    size_t numAllocations = 0;
    size_t numCacheHits = 0;
  };
  Stats stats() const;
  /// Starts a new peak measurement: peakBytesInUse = bytesInUse.
  void resetPeak();

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

struct ContextOptions {
  /// Threads for library calls (oneDNN/OpenMP); 0 keeps the default.
  int numThreads = 0;
};

/// State shared by all calls: allocator, oneDNN engine and primitive cache,
/// thread settings. Thread-safe; one Context can serve many executables.
class Context {
public:
  static std::shared_ptr<Context> create(const ContextOptions &options = {});
  ~Context();
  Allocator &allocator();
  /// Opaque library state (oneDNN engine, primitive cache), for RalApi.cpp.
  struct LibraryState;
  LibraryState &libraries();
  const ContextOptions &options() const;

private:
  Context();
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// An input: contiguous, row-major memory owned by the caller.
struct TensorView {
  void *data = nullptr;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
};

/// An output: contiguous, row-major; `owner` keeps the memory alive and
/// returns it to the allocator when the last reference goes.
struct OutputTensor {
  std::shared_ptr<void> owner;
  void *data = nullptr;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
};

/// What the compiled entry function expects. dims[i] == -1 is dynamic.
/// dimClass[i] >= 0 names an equality class: all input dims in one class
/// must have the same size at call time (and equal the class's staticSize
/// when that is >= 0). `reason` says which op requires it.
struct ArgSpec {
  std::string name; // e.g. "%arg0"
  DType dtype = DType::F32;
  std::vector<int64_t> dims;
  std::vector<int> dimClass;
  /// Optional per-dim valid ranges (empty: any size): minSize[d] <= size
  /// and, when maxSize[d] >= 0, size <= maxSize[d]. Exported programs
  /// carry the ranges torch.export derived.
  std::vector<int64_t> minSize, maxSize;
};
struct DimClass {
  int64_t staticSize = -1;
  std::string reason;
};
struct ResultSpec {
  DType dtype = DType::F32;
  int64_t rank = 0;
  /// >= 0: the compiled code writes this result into argument `intoArg`'s
  /// memory (the entry argument's `disc.result_into`), and returns it
  /// aliasing that argument. A call that fails inside the compiled code may
  /// then have written the argument already.
  int64_t intoArg = -1;
};
struct Signature {
  std::vector<ArgSpec> args;
  std::vector<ResultSpec> results;
  std::vector<DimClass> classes;
};

using PackedFunction = void (*)(void **);

/// Where a compiled program's buffers live.
enum class Device : uint8_t { Cpu, Cuda };

/// The CUDA kernel modules one executable has loaded, per CUDA context
/// (opaque; loaded on first launch, unloaded when the last owner goes).
struct CudaModuleCache;
std::shared_ptr<CudaModuleCache> makeCudaModuleCache();

/// Whether the CUDA driver can be loaded and initialised; otherwise why not.
bool cudaDriverAvailable(std::string *why = nullptr);

/// Cuda: whether f32 library calls may round their operands to TF32 and
/// run on tensor cores (several times faster; 10 bits of mantissa in the
/// products, f32 accumulation). Off, the default: full f32 (FMA math).
/// Kernels DISC generates always compute in full f32.
struct Float32Math {
  bool tf32Matmul = false;      // dot_general (cuBLASLt)
  bool tf32Convolution = false; // convolution and its gradients (cuDNN)
};

/// Where a cuda call's device memory comes from: every buffer of the call
/// (intermediates, library workspaces, results) is allocated and freed
/// through one, ordered on the call's stream. The default is the device's
/// stream-ordered pool (streamOrderedDevicePool). A caller with a memory
/// manager of its own passes another (InvokeOptions::deviceAllocator), so
/// that DISC's buffers and the caller's share one pool: DISC's Python
/// binding passes PyTorch's caching allocator.
class DeviceAllocator {
public:
  virtual ~DeviceAllocator() = default;
  /// `bytes` (> 0) of device memory of the current CUDA context, usable by
  /// work queued on `stream`. Throws on failure; the message reaches the
  /// caller, prefixed with the entry point that asked.
  virtual void *allocate(size_t bytes, void *stream) = 0;
  /// Returns memory from allocate(): work queued on `stream` after this
  /// point may reuse it. Called from whichever thread drops the last owner
  /// of a result; never throws.
  virtual void deallocate(void *ptr, void *stream) noexcept = 0;
};

/// The device's stream-ordered pool (cuMemAllocAsync / cuMemFreeAsync),
/// whose release threshold is raised once per device so that freed memory
/// stays in the pool. One per process.
std::shared_ptr<DeviceAllocator> streamOrderedDevicePool();

struct InvokeOptions {
  Device device = Device::Cpu;
  /// Cuda: the CUstream (null: the legacy default stream) every launch,
  /// allocation and free of the call is ordered on. Nothing in a call
  /// synchronises the device.
  void *cudaStream = nullptr;
  /// Cuda: the executable's module cache (required).
  CudaModuleCache *cudaModules = nullptr;
  /// Cuda: whether f32 matmuls and convolutions may use TF32.
  Float32Math float32Math;
  /// Cuda: where the call's device memory comes from; null: the device's
  /// stream-ordered pool. Results keep it alive until they are freed.
  std::shared_ptr<DeviceAllocator> deviceAllocator;
  /// Results written into inputs (an in-place update, e.g. an optimizer
  /// step's parameters): resultsInto[r] >= 0 writes result r into input
  /// resultsInto[r] once the whole call has run (every result is computed
  /// before any input is written), and result r comes back empty (no data,
  /// no owner). The result and the input must agree in dtype and shape
  /// (InvocationError otherwise); results past the vector's end, and -1,
  /// are returned as usual.
  std::vector<int64_t> resultsInto;
  /// Which returned results may share memory. The compiled code may return
  /// one buffer for two results (two equal sums merged into one); a caller
  /// that updates one in place (autograd accumulating `p.grad += g`) would
  /// change the other. So a result whose memory overlaps an earlier returned
  /// result's is copied into a buffer of its own, unless both have the same
  /// group >= 0 here (results the caller knows to alias: one value returned
  /// twice, views of one base). Empty (the default): no two results share.
  std::vector<int64_t> resultShareGroups;
};

/// Checks `inputs` against `signature` (InvocationError naming the argument
/// on mismatch), runs `fn`, and returns the outputs. Errors reported by the
/// compiled code through disc_ral_fail become InvocationError; every buffer
/// of the call is released on every path.
///
/// With `options.device == Device::Cuda`, inputs and outputs are device
/// pointers of the current CUDA context; outputs are freed, when their last
/// owner goes, stream-ordered on `options.cudaStream`. A machine without a
/// driver gets a RuntimeError saying so.
std::vector<OutputTensor> invoke(Context &context, PackedFunction fn,
                                 const Signature &signature,
                                 const std::vector<TensorView> &inputs,
                                 const InvokeOptions &options = {});

/// The one thread-count setting of a call (ContextOptions::numThreads):
/// while it lives, parallel loops of compiled kernels
/// (disc_ral_parallel_for) and library calls (oneDNN, through OpenMP)
/// launched on this thread use `numThreads` (0: OpenMP's default). OpenMP
/// counts are per calling thread; the thread's previous count is restored.
class ThreadsForCall {
public:
  explicit ThreadsForCall(int numThreads);
  ~ThreadsForCall();
  ThreadsForCall(const ThreadsForCall &) = delete;
  ThreadsForCall &operator=(const ThreadsForCall &) = delete;

private:
  int previous;
  int previousOpenMp = 0; // 0: OpenMP's count was not changed
};

/// The thread count in effect on this thread: the enclosing
/// ThreadsForCall's, else OpenMP's default (1 without OpenMP). oneDNN
/// primitives depend on it, so it is part of their cache keys.
int currentThreadCount();

/// How many threads a parallel loop of `units` units of `workPerUnit`
/// elements each gets: 1 (run on the calling thread) unless every thread
/// gets at least DISC_PARALLEL_MIN_WORK elements (default 32768).
int threadsForWork(int64_t units, int64_t workPerUnit, int threads);

/// Process-wide counts of the run-time choice disc_ral_parallel_for made:
/// split across threads, or run on the calling thread (small work).
struct ParallelStats {
  int64_t parallelLaunches = 0;
  int64_t serialRuns = 0;
};
ParallelStats parallelStats();

/// Process-wide count of f32 matmuls the runtime computed itself, on the
/// calling thread, instead of calling oneDNN (too few multiply-adds to pay
/// for the library call: lib/Runtime/SmallMatmul.h).
int64_t smallMatmulCalls();

/// Process-wide counts of the run-time variant choice of GPU kernels
/// (disc_ral_note_variant): row kernels one row per thread, per block or
/// per warp; elementwise grids that have a vector variant run with vector
/// accesses or without (extent or alignment did not allow them); column
/// reductions that have a split variant split each column's rows into parts
/// or run one thread per column.
struct RowVariantStats {
  int64_t rowsPerThread = 0;
  int64_t rowsPerBlock = 0;
  int64_t vectorGrids = 0;
  int64_t scalarGrids = 0;
  int64_t columnSplits = 0;
  int64_t columnsPerThread = 0;
  int64_t rowsPerWarp = 0;
  /// Elementwise grids over two or more dims: calls that delinearised in
  /// 32 bits, and calls too large for it (64 bits).
  int64_t index32Grids = 0;
  int64_t index64Grids = 0;
  /// Block- and warp-per-row kernels with vector phases: calls that ran
  /// them with vector accesses, and calls that could not (a row length
  /// not a multiple of 4, or a buffer not aligned for the vector).
  int64_t vectorRows = 0;
  int64_t scalarRows = 0;
  /// Block- and warp-per-row kernels with row caches: calls that kept the
  /// rows in shared memory, and calls whose rows were too long for it.
  int64_t cachedRows = 0;
  int64_t uncachedRows = 0;
  /// Of vectorGrids: calls whose lanes were four consecutive iterations of
  /// the whole nest (rows of any length), not of one row.
  int64_t linearVectorGrids = 0;
};
RowVariantStats rowVariantStats();

/// Process-wide counts of the device blocks cuda calls asked their
/// allocator for, and of the requests a block the same call had freed
/// served instead (DISC_CUDA_REUSE_BLOCKS).
struct DeviceBlockStats {
  int64_t allocations = 0;
  int64_t reused = 0;
};
DeviceBlockStats deviceBlockStats();

/// Bytes held by all threads' loop scratch buffers (disc_ral_thread_scratch;
/// kept for reuse until a thread exits, outside the caching allocator).
int64_t threadScratchBytes();

/// Calls and wall time of one profiled kernel, library call or copy
/// (compiled with DISC_PROFILE=1), added up over the process: `name` is
/// "<kind> <callee> at <file:line:col>" (docs/debugging.md).
struct ProfileEntry {
  std::string name;
  int64_t calls = 0;
  double seconds = 0;
};
/// Every entry so far, the most time first.
std::vector<ProfileEntry> profileEntries();
void resetProfile();

/// Only the signature check (what invoke does first).
void checkInputs(const Signature &signature,
                 const std::vector<TensorView> &inputs);

} // namespace ral
} // namespace disc

#endif // DISC_RUNTIME_RUNTIME_H
