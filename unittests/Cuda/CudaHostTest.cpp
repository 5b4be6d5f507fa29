//===- CudaHostTest.cpp - the cuda target's host code, without a GPU ------===//
//
// Programs compiled for target cuda run against a fake libcuda
// (FakeCudaDriver.cpp, loaded through DISC_CUDA_DRIVER): the kernels do not
// run, but every launch, module load and allocation the host code makes is
// recorded. Checks launch dimensions against shapes, module caching and
// selection by compute capability, the stream, buffer balance and errors.
//
//===----------------------------------------------------------------------===//
#include "FakeCudaDriver.h"

#include "disc/Compiler/Executable.h"
#include "disc/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <dlfcn.h>
#include <map>
#include <memory>
#include <sstream>
#include <fstream>
#include <cstdio>
#include <chrono>
#include <thread>

using namespace disc;

namespace {

FakeCudaState &fake() {
  static FakeCudaState *state = [] {
    setenv("DISC_CUDA_DRIVER", DISC_FAKE_CUDA_DRIVER, 1);
    setenv("DISC_CUBLASLT_LIBRARY", DISC_FAKE_CUDA_DRIVER, 1);
    setenv("DISC_CUDNN_LIBRARY", DISC_FAKE_CUDA_DRIVER, 1);
    void *library = dlopen(DISC_FAKE_CUDA_DRIVER, RTLD_NOW | RTLD_LOCAL);
    if (!library)
      throw std::runtime_error(dlerror());
    auto get = reinterpret_cast<FakeCudaState *(*)()>(
        dlsym(library, "fake_cuda_state"));
    return get();
  }();
  return *state;
}

void resetFake() {
  FakeCudaState &s = fake();
  s.sm = 90;
  s.failLaunches = false;
  s.moduleLoads = s.moduleUnloads = 0;
  s.numLaunches = 0;
  s.allocations = s.frees = s.copies = 0;
  s.lastAllocStream = nullptr;
  s.matmuls = 0;
  s.lastMatmulStream = nullptr;
  s.matmulDescriptors = 0;
  s.lastMatmulComputeType = -1;
  s.misalignedMatmuls = 0;
  s.lastMatmulEpilogue = 0;
  s.biasPointerSets = 0;
  s.convolutions = 0;
  s.convDescriptorSets = 0;
  s.backwardData = s.transforms = 0;
  s.backwardFilters = 0;
  s.backendPlans = s.backendExecutes = 0;
  s.rejectEveryEngine = false;
  s.setStreamDelayUs = 0;
  s.skipMath = false;
  s.numConvRecords = 0;
  s.lastConvStream = nullptr;
  s.lastConvMathType = -1;
}

/// A copy of `values` at a 256-byte aligned address, as device buffers are.
std::shared_ptr<float> deviceLike(const std::vector<float> &values) {
  size_t bytes = (std::max<size_t>(values.size(), 1) * sizeof(float) + 255) /
                 256 * 256;
  auto *copy = static_cast<float *>(std::aligned_alloc(256, bytes));
  std::copy(values.begin(), values.end(), copy);
  return std::shared_ptr<float>(copy, std::free);
}

/// Compiling for cuda needs the CUDA toolkit's ptxas (not a GPU).
class CudaHost : public ::testing::Test {
protected:
  void SetUp() override {
    if (cudaToolkitPath().empty())
      GTEST_SKIP() << "no CUDA toolkit (ptxas): set DISC_CUDA_TOOLKIT";
  }
};

// Row max, subtract and exp (a row reduction and an elementwise kernel) and
// the sum of everything (a one-thread grid).
const char *kProgram = R"(
func.func @main(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = disc.reduce %x, dims = [1], kind = max : (tensor<?x?xf32>) -> tensor<?xf32>
  %d0 = tensor.dim %x, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?xf32>
  %s = tensor.from_elements %d0, %d1 : tensor<2xindex>
  %mb = disc.dynamic_broadcast_in_dim %m, %s, dims = [0] : (tensor<?xf32>, tensor<2xindex>) -> tensor<?x?xf32>
  %y = disc.subtract %x, %mb : tensor<?x?xf32>
  %e = disc.exponential %y : tensor<?x?xf32>
  %t = disc.reduce %x, dims = [0, 1], kind = sum : (tensor<?x?xf32>) -> tensor<f32>
  return %e, %t : tensor<?x?xf32>, tensor<f32>
}
)";

std::unique_ptr<Executable>
compileCuda(std::vector<std::string> chips = {}) {
  CompileOptions options;
  options.target = "cuda";
  options.cudaChips = std::move(chips);
  return Executable::compile(kProgram, options);
}

void *const kStream = reinterpret_cast<void *>(0x5157);

std::vector<ral::OutputTensor> runAt(Executable &exe,
                                     std::vector<float> &storage,
                                     int64_t rows, int64_t cols) {
  storage.assign(std::max<int64_t>(rows * cols, 1), 1.0f);
  ral::TensorView x;
  x.data = storage.data(); // "device" memory of the fake driver
  x.dtype = ral::DType::F32;
  x.shape = {rows, cols};
  return exe.run({x}, kStream);
}

TEST_F(CudaHost, CompilesWithoutADriverAndRunsOnTheCudaDevice) {
  resetFake();
  auto exe = compileCuda();
  EXPECT_EQ(exe->device(), ral::Device::Cuda);
  EXPECT_GE(exe->kernelCounts().loopKernels, 3);
}

TEST_F(CudaHost, GridsCoverTheShapeWithTheFewestBlocks) {
  resetFake();
  auto exe = compileCuda();
  std::vector<float> storage;
  const int64_t rows = 8800, cols = 5;
  auto outputs = runAt(*exe, storage, rows, cols);
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0].shape, (std::vector<int64_t>{rows, cols}));
  EXPECT_TRUE(outputs[1].shape.empty());
  FakeCudaState &s = fake();
  // Every compiled grid is launched.
  ASSERT_EQ(s.numLaunches, exe->kernelCounts().loopKernels);
  // The sum of rows * cols elements: parts of 4096 (the smallest part),
  // the rest (fewer than 4096) added with the parts' slots.
  const int64_t parts = rows * cols / 4096;
  const int64_t rest = rows * cols - parts * 4096;
  std::map<int64_t, int> covered; // element count -> launches
  for (int i = 0; i < s.numLaunches; ++i) {
    const FakeLaunch &l = s.launches[i];
    EXPECT_EQ(l.grid[1], 1u) << l.kernel;
    EXPECT_EQ(l.grid[2], 1u) << l.kernel;
    // Warp-per-row kernels: 32 lanes x 8 rows; the others one dim.
    const bool warpRows = l.block[0] == 32 && l.block[1] == 8;
    if (!warpRows)
      EXPECT_EQ(l.block[1], 1u) << l.kernel;
    EXPECT_EQ(l.block[2], 1u) << l.kernel;
    EXPECT_LE(l.block[0], 256u) << l.kernel;
    EXPECT_EQ(l.stream, kStream) << l.kernel;
    // Each grid is ceil(total / block) blocks for one of the totals (the
    // first match, so the shape is chosen for the totals to need different
    // block counts: 43, 35, 9), or the sum's parts (a block of 256 per
    // part: a row kernel's block-per-row variant for rows of 4096), or
    // their slots and the rest added up: one block of 256 threads.
    bool matched = false;
    // rows * cols / 4: the exp (cols is odd, the total a multiple of 4: the
    // vector variant's linear lanes, four elements per thread across rows);
    // rows: the row max; rows / 4: its initial value, four rows per thread
    // (the vector variant: rows is a multiple of 4); 1: a one-thread grid
    // (none: the sum's initial value is forwarded, not stored, by
    // disc-forward-host-scalars, and its rounding to f32 moves into the
    // slots' sum).
    for (int64_t total : {rows * cols / 4, rows, rows / 4, int64_t(1)})
      // 256 threads a block; a total known to be 1 at compile time: one.
      if (l.block[0] == (total == 1 ? 1u : 256u) &&
          l.grid[0] == (total + l.block[0] - 1) / l.block[0]) {
        ++covered[total];
        matched = true;
        break;
      }
    if (!matched && l.grid[0] == parts && l.block[0] == 256) {
      ++covered[-2]; // the parts, a block each
      matched = true;
    }
    if (!matched && l.grid[0] == 1 && l.block[0] == 256) {
      ++covered[-1]; // the slots and the rest
      matched = true;
    }
    EXPECT_TRUE(matched) << l.kernel << " grid " << l.grid[0] << " block "
                         << l.block[0];
  }
  EXPECT_GE(covered[rows * cols / 4], 1); // the exp: linear lanes
  EXPECT_GE(covered[rows], 1);        // the row max: one thread per row
  EXPECT_EQ(covered[rows / 4], 1);    // its initial value, vectorised
  // No one-thread grid: the f64 -> f32 rounding of the sum (a whole-tensor
  // f32 sum accumulates in f64) runs in the kernel that adds the slots up.
  EXPECT_EQ(covered[1], 0);
  EXPECT_EQ(covered[-2], 1); // the sum's parts: a block per part
  EXPECT_EQ(covered[-1], 1); // then the slots and the rest added up
  EXPECT_GT(rest, 1024) << "the rest is long enough for a block";
  EXPECT_EQ(s.lastAllocStream, kStream);
}

TEST_F(CudaHost, RowKernelsLaunchAWarpOrABlockPerRowByLengthAndCount) {
  // The host's per-call choice for a row sum, seen in its launches: rows
  // of 32-128 elements, or of up to 1024 with 2048 rows or more, one per
  // warp (ceil(rows / 8) blocks of 32 x 8 threads); longer rows, or fewer
  // rows of more than 128, one per block (rows blocks of a multiple of 32
  // threads, about 4 elements each); shorter ones one per thread (256-thread
  // blocks).
  resetFake();
  CompileOptions options;
  options.target = "cuda";
  auto exe = Executable::compile(R"(
func.func @main(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %0 = disc.reduce %x, dims = [1], kind = sum : (tensor<?x?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
})",
                                 options);
  enum Variant { Thread, Warp, Block };
  struct Case {
    int64_t rows, cols;
    Variant variant;
    unsigned grid, blockX, blockY;
  };
  const Case cases[] = {
      {8800, 40, Warp, 1100, 32, 8},  // short rows: a warp each
      {13, 128, Warp, 2, 32, 8},      // up to 128, however few rows
      {13, 129, Block, 13, 64, 1},    // longer and few: a block each
      {2048, 1024, Warp, 256, 32, 8}, // up to 1024 and many: a warp each
      {2047, 1024, Block, 2047, 256, 1},
      {2048, 1025, Block, 2048, 256, 1},
      {1000, 31, Thread, 4, 256, 1}, // shorter than 32: a thread each
  };
  for (const Case &c : cases) {
    resetFake();
    const ral::RowVariantStats before = ral::rowVariantStats();
    std::vector<float> x(c.rows * c.cols, 1.0f);
    ral::TensorView view;
    view.data = x.data(), view.shape = {c.rows, c.cols};
    auto outputs = exe->run({view}, kStream);
    ASSERT_EQ(outputs.size(), 1u);
    FakeCudaState &s = fake();
    // The sum's launch among the call's (its initial value has one too).
    bool found = false;
    for (int i = 0; i < s.numLaunches; ++i) {
      const FakeLaunch &l = s.launches[i];
      if (l.grid[0] == c.grid && l.block[0] == c.blockX &&
          l.block[1] == c.blockY)
        found = true;
    }
    std::string seen;
    for (int i = 0; i < s.numLaunches; ++i)
      seen += " [" + std::to_string(s.launches[i].grid[0]) + " x (" +
              std::to_string(s.launches[i].block[0]) + ", " +
              std::to_string(s.launches[i].block[1]) + ")]";
    EXPECT_TRUE(found) << c.rows << " rows of " << c.cols << ": expected "
                       << c.grid << " blocks of (" << c.blockX << ", "
                       << c.blockY << "), launched" << seen;
    const ral::RowVariantStats after = ral::rowVariantStats();
    EXPECT_EQ(after.rowsPerThread - before.rowsPerThread, c.variant == Thread)
        << c.rows << " rows of " << c.cols;
    EXPECT_EQ(after.rowsPerWarp - before.rowsPerWarp, c.variant == Warp)
        << c.rows << " rows of " << c.cols;
    EXPECT_EQ(after.rowsPerBlock - before.rowsPerBlock, c.variant == Block)
        << c.rows << " rows of " << c.cols;
  }
}

TEST_F(CudaHost, GridsDelinearizeIn32BitsWhenEveryIndexFits) {
  // The compiled host code's per-call choice for the program's elementwise
  // grids over [rows, cols] (subtract and exp), with the limit at 1000: a
  // total of at most 1000 - 256 + 1 elements in 32 bits, more in 64; the
  // same launches either way (a branch in the kernel, not another kernel).
  setenv("DISC_CUDA_INDEX32_LIMIT", "1000", 1);
  auto exe = compileCuda();
  unsetenv("DISC_CUDA_INDEX32_LIMIT");
  struct Case {
    int64_t rows, cols;
    bool index32;
  };
  const Case cases[] = {{5, 149, true}, {2, 373, false}, {40, 30, false},
                        {3, 7, true}};
  int launches = -1;
  for (const Case &c : cases) {
    resetFake();
    const ral::RowVariantStats before = ral::rowVariantStats();
    std::vector<float> storage;
    runAt(*exe, storage, c.rows, c.cols);
    const ral::RowVariantStats after = ral::rowVariantStats();
    const int64_t i32 = after.index32Grids - before.index32Grids;
    const int64_t i64 = after.index64Grids - before.index64Grids;
    EXPECT_GT(c.index32 ? i32 : i64, 0) << c.rows << " x " << c.cols;
    EXPECT_EQ(c.index32 ? i64 : i32, 0) << c.rows << " x " << c.cols;
    if (launches < 0)
      launches = fake().numLaunches;
    EXPECT_EQ(fake().numLaunches, launches) << c.rows << " x " << c.cols;
  }
}

TEST_F(CudaHost, ModulesLoadOncePerExecutable) {
  resetFake();
  auto exe = compileCuda();
  std::vector<float> storage;
  runAt(*exe, storage, 4, 8);
  int loads = fake().moduleLoads;
  // Every kernel in one module (disc-merge-gpu-modules), loaded once.
  ASSERT_GT(exe->kernelCounts().loopKernels, 1);
  EXPECT_EQ(loads, 1);
  EXPECT_GT(fake().numLaunches, 1);
  runAt(*exe, storage, 40, 3);
  runAt(*exe, storage, 1, 1);
  EXPECT_EQ(fake().moduleLoads, loads);
  exe.reset();
  EXPECT_EQ(fake().moduleUnloads, loads);
}

TEST_F(CudaHost, DevicePoolKeepsFreedMemory) {
  // cuMemAllocAsync's pool: the release threshold raised to the maximum
  // (the default returns the memory at every synchronisation), once per
  // device and process, not per call.
  resetFake();
  auto exe = compileCuda();
  std::vector<float> storage;
  runAt(*exe, storage, 4, 8);
  runAt(*exe, storage, 40, 3);
  EXPECT_GT(fake().allocations, 0);
  EXPECT_EQ(fake().poolReleaseThreshold, UINT64_MAX);
  EXPECT_EQ(fake().poolThresholdSets, 1);
}

/// A caller's device allocator (as PyTorch's caching allocator is passed
/// from Python): host memory stands in for the device's, and every call is
/// recorded in a state that outlives the allocator.
struct AllocatorRecord {
  int64_t allocations = 0, frees = 0;
  int64_t failAt = -1; // the allocation (0-based) that throws
  std::map<void *, size_t> live;
  std::vector<void *> streams;
  std::vector<size_t> sizes; // of each allocation
  size_t liveBytes = 0, peakBytes = 0;
  bool destroyed = false;
};
class RecordingAllocator final : public ral::DeviceAllocator {
public:
  explicit RecordingAllocator(AllocatorRecord &record) : record(record) {}
  ~RecordingAllocator() override { record.destroyed = true; }
  void *allocate(size_t bytes, void *stream) override {
    if (record.allocations == record.failAt)
      throw std::runtime_error("out of memory in the caller's pool");
    ++record.allocations;
    record.streams.push_back(stream);
    record.sizes.push_back(bytes);
    // 256-byte aligned, as device allocators return (and cuBLASLt's
    // algorithm choice depends on it).
    void *ptr = std::aligned_alloc(256, (std::max<size_t>(bytes, 1) + 255) /
                                            256 * 256);
    record.live.emplace(ptr, bytes);
    record.liveBytes += bytes;
    record.peakBytes = std::max(record.peakBytes, record.liveBytes);
    return ptr;
  }
  void deallocate(void *ptr, void *stream) noexcept override {
    ++record.frees;
    record.streams.push_back(stream);
    auto it = record.live.find(ptr);
    if (it != record.live.end())
      record.liveBytes -= it->second;
    record.live.erase(ptr);
    std::free(ptr);
  }

private:
  AllocatorRecord &record;
};

TEST_F(CudaHost, CallersAllocatorServesEveryDeviceBuffer) {
  // Every buffer of the call and every result comes from the caller's
  // allocator, on the call's stream; the device pool is not touched. The
  // results keep the allocator alive after the caller lets it go.
  resetFake();
  auto exe = compileCuda();
  AllocatorRecord record;
  std::vector<float> storage(33 * 17, 1.0f);
  ral::TensorView x;
  x.data = storage.data();
  x.dtype = ral::DType::F32;
  x.shape = {33, 17};
  std::vector<ral::OutputTensor> outputs;
  {
    auto allocator = std::make_shared<RecordingAllocator>(record);
    outputs = exe->run({x}, kStream, {}, allocator);
  }
  EXPECT_EQ(fake().allocations, 0);
  EXPECT_GE(record.allocations, 2); // the two results at least
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(record.live.size(), 2u);
  EXPECT_EQ(record.live.count(outputs[0].data), 1u);
  EXPECT_EQ(record.live.count(outputs[1].data), 1u);
  EXPECT_GE(record.live[outputs[0].data], 33 * 17 * sizeof(float));
  EXPECT_FALSE(record.destroyed);
  outputs.clear();
  EXPECT_EQ(record.frees, record.allocations);
  EXPECT_TRUE(record.live.empty());
  EXPECT_TRUE(record.destroyed);
  for (void *stream : record.streams)
    EXPECT_EQ(stream, kStream);
  EXPECT_EQ(fake().allocations, 0);
  EXPECT_EQ(fake().frees, 0);
}

TEST_F(CudaHost, FreedBlocksServeTheCallsLaterRequestsOfTheirSize) {
  // x @ w @ w @ w @ w with square w: every product has x's size, and each
  // has a cuBLASLt workspace (freed after its call). The first product is
  // freed once the second is computed, and its block then holds the third;
  // the second's holds the fourth, the result; the first workspace serves
  // the other three. Three blocks from the allocator instead of eight, the
  // same peak, and the products (computed on the host by the fake
  // cuBLASLt) are right: no block was handed out while a later call still
  // read it.
  const char *program = R"(
func.func @main(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = disc.dot_general %x, %w, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %1 = disc.dot_general %0, %w, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %2 = disc.dot_general %1, %w, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %3 = disc.dot_general %2, %w, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %3 : tensor<?x?xf32>
})";
  resetFake();
  CompileOptions options;
  options.target = "cuda";
  auto exe = Executable::compile(program, options);
  struct Run {
    AllocatorRecord record;
    int64_t reused = 0;
  };
  auto runWith = [&](const char *reuse, int64_t m, int64_t k) {
    setenv("DISC_CUDA_REUSE_BLOCKS", reuse, 1);
    std::vector<float> a(m * k), w(k * k);
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = float((i * 7) % 5) - 2;
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = float((i * 3) % 4) - 1.5f;
    ral::TensorView x, y;
    x.data = a.data(), y.data = w.data();
    x.shape = {m, k};
    y.shape = {k, k};
    Run run;
    const int64_t reusedBefore = ral::deviceBlockStats().reused;
    {
      auto outputs = exe->run(
          {x, y}, kStream, {},
          std::make_shared<RecordingAllocator>(run.record));
      EXPECT_EQ(run.record.live.size(), 1u) << "only the result is left";
      std::vector<double> want(a.begin(), a.end()), next(m * k);
      for (int step = 0; step < 4; ++step) {
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < k; ++j) {
            double sum = 0;
            for (int64_t q = 0; q < k; ++q)
              sum += want[i * k + q] * w[q * k + j];
            next[i * k + j] = sum;
          }
        want.swap(next);
      }
      const float *got = static_cast<const float *>(outputs[0].data);
      for (int64_t i = 0; i < m * k; ++i)
        EXPECT_NEAR(got[i], want[i], 1e-3 * (1 + std::abs(want[i])))
            << "reuse=" << reuse << " element " << i;
    }
    EXPECT_EQ(run.record.frees, run.record.allocations) << reuse;
    run.reused = ral::deviceBlockStats().reused - reusedBefore;
    return run;
  };
  for (auto [m, k] : {std::pair<int64_t, int64_t>{5, 7}, {33, 40}}) {
    Run reusing = runWith("1", m, k);
    Run plain = runWith("0", m, k);
    EXPECT_EQ(plain.record.allocations, 8) << m << "x" << k;
    EXPECT_EQ(plain.reused, 0);
    EXPECT_EQ(reusing.record.allocations, 3) << m << "x" << k;
    EXPECT_EQ(reusing.reused, 5);
    EXPECT_LE(reusing.record.peakBytes, plain.record.peakBytes);
    for (size_t bytes : reusing.record.sizes)
      EXPECT_EQ(bytes % 512, 0u) << "requests are rounded to 512 bytes";
  }
  // Anything but 0 or 1 is an error naming the variable.
  setenv("DISC_CUDA_REUSE_BLOCKS", "yes", 1);
  std::vector<float> a(4, 1.0f), w(4, 1.0f);
  ral::TensorView x, y;
  x.data = a.data(), y.data = w.data();
  x.shape = y.shape = {2, 2};
  try {
    exe->run({x, y}, kStream);
    ADD_FAILURE() << "DISC_CUDA_REUSE_BLOCKS=yes accepted";
  } catch (const ral::RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find("DISC_CUDA_REUSE_BLOCKS='yes'"),
              std::string::npos)
        << e.what();
  }
  unsetenv("DISC_CUDA_REUSE_BLOCKS");
  EXPECT_EQ(fake().matmuls, 16);
}

TEST_F(CudaHost, CallersAllocatorFailingIsAnErrorThatFreesTheCallsBuffers) {
  resetFake();
  auto exe = compileCuda();
  std::vector<float> storage(8 * 8, 1.0f);
  ral::TensorView x;
  x.data = storage.data();
  x.dtype = ral::DType::F32;
  x.shape = {8, 8};
  AllocatorRecord counting;
  exe->run({x}, kStream, {}, std::make_shared<RecordingAllocator>(counting));
  ASSERT_GE(counting.allocations, 2);
  // Fail each allocation in turn: a clear error, nothing left allocated.
  for (int64_t failAt = 0; failAt < counting.allocations; ++failAt) {
    AllocatorRecord record;
    record.failAt = failAt;
    try {
      exe->run({x}, kStream, {}, std::make_shared<RecordingAllocator>(record));
      ADD_FAILURE() << "allocation " << failAt << " failed silently";
    } catch (const ral::InvocationError &e) {
      std::string what = e.what();
      EXPECT_NE(what.find("disc_ral_cuda_alloc: out of memory in the "
                          "caller's pool"),
                std::string::npos)
          << what;
    }
    EXPECT_EQ(record.allocations, failAt);
    EXPECT_EQ(record.frees, record.allocations) << "failing at " << failAt;
    EXPECT_TRUE(record.destroyed);
  }
  EXPECT_EQ(fake().allocations, 0);
}

TEST_F(CudaHost, EmptyTensorsLaunchOnlyOneThreadGrids) {
  resetFake();
  auto exe = compileCuda();
  std::vector<float> storage;
  auto outputs = runAt(*exe, storage, 0, 7);
  EXPECT_EQ(outputs[0].shape, (std::vector<int64_t>{0, 7}));
  // The sum's slots (none) added to its initial value (forwarded: no
  // launch of its own) and rounded to f32, in one one-thread launch: no
  // thread for the empty parts.
  ASSERT_EQ(fake().numLaunches, 1);
  EXPECT_EQ(fake().launches[0].grid[0], 1u) << fake().launches[0].kernel;
  EXPECT_EQ(fake().launches[0].block[0], 1u) << fake().launches[0].kernel;
}

TEST_F(CudaHost, EveryDeviceBufferIsFreed) {
  resetFake();
  auto exe = compileCuda();
  std::vector<float> storage;
  {
    auto outputs = runAt(*exe, storage, 33, 17);
    // Outputs are device buffers the caller owns until they go.
    EXPECT_GT(fake().allocations, fake().frees);
  }
  EXPECT_EQ(fake().allocations, fake().frees);
}

TEST_F(CudaHost, OlderGpuThanEveryObjectIsAClearError) {
  resetFake();
  fake().sm = 75;
  auto exe = compileCuda();
  std::vector<float> storage;
  try {
    runAt(*exe, storage, 4, 4);
    FAIL() << "expected an error";
  } catch (const ral::RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find(
                  "the kernels were compiled for sm_80, sm_90, but the "
                  "device is sm_75"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("kernel main_kernel"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(fake().allocations, fake().frees);
  // An sm_86 device takes the sm_80 object (a cubin of the same major
  // version); an sm_100 device the sm_90 object's PTX.
  for (int sm : {86, 100}) {
    resetFake();
    fake().sm = sm;
    auto newer = compileCuda();
    EXPECT_NO_THROW(runAt(*newer, storage, 4, 4)) << "sm_" << sm;
  }
}

TEST_F(CudaHost, OneChipRunsWhereItsCubinLoads) {
  // Compiled for the GPU it runs on (torch.compile's choice): one object,
  // which an sm_90 (and, through its PTX, a newer) device loads, and an
  // sm_80 device refuses by name.
  std::vector<float> storage;
  for (int sm : {90, 100}) {
    resetFake();
    fake().sm = sm;
    auto exe = compileCuda({"sm_90"});
    EXPECT_NO_THROW(runAt(*exe, storage, 4, 4)) << "sm_" << sm;
    EXPECT_GT(fake().numLaunches, 0) << "sm_" << sm;
  }
  resetFake();
  fake().sm = 80;
  auto exe = compileCuda({"sm_90"});
  try {
    runAt(*exe, storage, 4, 4);
    FAIL() << "expected an error";
  } catch (const ral::RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find("the kernels were compiled for "
                                         "sm_90, but the device is sm_80"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(fake().allocations, fake().frees);
}

TEST_F(CudaHost, UnknownChipIsAnErrorNamingIt) {
  for (const char *chip : {"sm_100", "sm_75", "compute_90", ""}) {
    try {
      compileCuda({chip});
      FAIL() << "expected an error for '" << chip << "'";
    } catch (const std::invalid_argument &e) {
      EXPECT_NE(std::string(e.what()).find(std::string("got '") + chip +
                                           "'"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST_F(CudaHost, FailedLaunchNamesTheKernelAndFreesTheCallsBuffers) {
  resetFake();
  auto exe = compileCuda();
  fake().failLaunches = true;
  std::vector<float> storage;
  try {
    runAt(*exe, storage, 8, 8);
    FAIL() << "expected an error";
  } catch (const ral::InvocationError &e) {
    std::string what = e.what();
    EXPECT_NE(what.find("kernel main_kernel"), std::string::npos) << what;
    EXPECT_NE(what.find("cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS"),
              std::string::npos)
        << what;
  }
  EXPECT_EQ(fake().allocations, fake().frees);
}

// dot_general through the RAL's cuBLASLt call (the fake computes it on the
// host, column-major, from the descriptors the runtime builds): the
// row-major/column-major swap, transposes, batches and leading dims.
struct MatmulCase {
  const char *name;
  const char *program;
  // (batch, m, k, n) per call; the inputs' shapes follow from them.
  std::vector<std::vector<int64_t>> shapes;
  bool transB, batched;
};

/// Element [p, i, j] of a [batch, m, k] @ b, b being [batch, k, n] or,
/// with `transposedB`, one [n, k] for every batch: the f64 sum rounded
/// once, as the fake cuBLASLt computes it.
float hostProductAt(const std::vector<float> &a, const std::vector<float> &b,
                    bool transposedB, int64_t p, int64_t i, int64_t j,
                    int64_t m, int64_t k, int64_t n) {
  double sum = 0;
  for (int64_t q = 0; q < k; ++q) {
    float lhs = a[(p * m + i) * k + q];
    float rhs = transposedB ? b[j * k + q] : b[(p * k + q) * n + j];
    sum += double(lhs) * rhs;
  }
  return float(sum);
}

TEST_F(CudaHost, MatmulThroughCublasLtMatchesAHostReference) {
  const MatmulCase cases[] = {
      {"x @ w.T (transB)", R"(
func.func @main(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = disc.dot_general %x, %w, batching_dims = [] x [], contracting_dims = [1] x [1] : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
})",
       {{1, 3, 5, 4}, {1, 1, 7, 1}, {1, 17, 9, 33}},
       true,
       false},
      {"batched a @ b", R"(
func.func @main(%a: tensor<?x?x?xf32>, %b: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = disc.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
})",
       {{2, 3, 4, 5}, {5, 1, 8, 2}, {1, 6, 6, 6}},
       false,
       true},
  };
  for (const MatmulCase &c : cases) {
    resetFake();
    CompileOptions options;
    options.target = "cuda";
    auto exe = Executable::compile(c.program, options);
    for (const auto &shape : c.shapes) {
      const int64_t batch = shape[0], m = shape[1], k = shape[2], n = shape[3];
      std::vector<float> a(batch * m * k), b(batch * k * n);
      for (size_t i = 0; i < a.size(); ++i)
        a[i] = float((i * 7) % 11) - 5;
      for (size_t i = 0; i < b.size(); ++i)
        b[i] = float((i * 5) % 13) - 6;
      ral::TensorView x, y;
      x.data = a.data(), y.data = b.data();
      if (c.batched) {
        x.shape = {batch, m, k};
        y.shape = {batch, k, n};
      } else {
        x.shape = {m, k};
        y.shape = {n, k}; // w: [n, k], contracted on its dim 1
      }
      auto outputs = exe->run({x, y}, kStream);
      ASSERT_EQ(outputs.size(), 1u) << c.name;
      const float *got = static_cast<const float *>(outputs[0].data);
      for (int64_t p = 0; p < batch; ++p)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            ASSERT_EQ(got[(p * m + i) * n + j],
                      hostProductAt(a, b, c.transB, p, i, j, m, k, n))
                << c.name << " at batch " << p << " [" << i << ", " << j
                << "] of " << m << "x" << k << "x" << n;
          }
    }
    EXPECT_EQ(fake().matmuls, 3) << c.name;
    EXPECT_EQ(fake().lastMatmulStream, kStream) << c.name;
    EXPECT_EQ(fake().allocations, fake().frees) << c.name;
    EXPECT_EQ(exe->kernelCounts().libraryCalls, 1) << c.name;
  }
}

/// Calls tap(xIndex, wIndex, yIndex) for every multiply-add of a
/// cross-correlation on contiguous NC... buffers (indices into x, the
/// [O, C/G, K...] kernel and y), in the order n, o, output position, c,
/// kernel offset: each output element's terms in (c, offset) order, each
/// kernel element's in (n, position) order.
template <typename Tap>
void forEachConvTap(const std::vector<int64_t> &xShape,
                    const std::vector<int64_t> &wShape,
                    const std::vector<int64_t> &yShape, int64_t stride,
                    int64_t pad, int64_t dilation, int64_t groups, Tap tap) {
  const size_t spatial = xShape.size() - 2;
  int64_t outSpatial = 1, window = 1, inSpatial = 1;
  for (size_t s = 0; s < spatial; ++s) {
    outSpatial *= yShape[2 + s];
    window *= wShape[2 + s];
    inSpatial *= xShape[2 + s];
  }
  const int64_t cPerGroup = wShape[1], oPerGroup = wShape[0] / groups;
  for (int64_t n = 0; n < yShape[0]; ++n)
    for (int64_t o = 0; o < yShape[1]; ++o)
      for (int64_t p = 0; p < outSpatial; ++p)
        for (int64_t c = 0; c < cPerGroup; ++c)
          for (int64_t q = 0; q < window; ++q) {
            int64_t xIndex = 0, pRest = p, qRest = q;
            bool inside = true;
            std::vector<int64_t> outPos(spatial), k(spatial);
            for (size_t s = spatial; s-- > 0;) {
              outPos[s] = pRest % yShape[2 + s], pRest /= yShape[2 + s];
              k[s] = qRest % wShape[2 + s], qRest /= wShape[2 + s];
            }
            for (size_t s = 0; s < spatial; ++s) {
              int64_t pos = outPos[s] * stride - pad + k[s] * dilation;
              inside &= pos >= 0 && pos < xShape[2 + s];
              xIndex = xIndex * xShape[2 + s] + pos;
            }
            if (!inside)
              continue;
            int64_t channel = (o / oPerGroup) * cPerGroup + c;
            tap((n * xShape[1] + channel) * inSpatial + xIndex,
                (o * cPerGroup + c) * window + q,
                (n * yShape[1] + o) * outSpatial + p);
          }
}

/// A cross-correlation on contiguous NC... buffers: out[n, o, ...] from x
/// and the kernel w, or (kernelGradient) the kernel's gradient from x and
/// `other` = dy, dw[o, c, k] = sum over n and output positions p of
/// dy[n, o, p] * x[n, g * C/G + c, p * stride - pad + k * dilation].
std::vector<float> hostConvolution(const std::vector<float> &x,
                                   const std::vector<int64_t> &xShape,
                                   const std::vector<float> &other,
                                   const std::vector<int64_t> &wShape,
                                   const std::vector<int64_t> &yShape,
                                   int64_t stride, int64_t pad,
                                   int64_t dilation, int64_t groups,
                                   bool kernelGradient = false) {
  int64_t size = 1;
  for (int64_t d : kernelGradient ? wShape : yShape)
    size *= d;
  std::vector<double> sums(size);
  forEachConvTap(xShape, wShape, yShape, stride, pad, dilation, groups,
                 [&](int64_t xi, int64_t wi, int64_t yi) {
                   if (kernelGradient)
                     sums[wi] += double(x[xi]) * other[yi];
                   else
                     sums[yi] += double(x[xi]) * other[wi];
                 });
  return std::vector<float>(sums.begin(), sums.end());
}

struct ConvCase {
  const char *name;
  const char *program;
  std::vector<std::vector<int64_t>> inputShapes; // x per call
  std::vector<int64_t> kernelShape;
  int64_t stride, pad, dilation, groups;
};

/// A pattern of small integers (exact in f32 sums).
std::vector<float> patterned(const std::vector<int64_t> &shape, int mul,
                             int mod, int shift) {
  int64_t size = 1;
  for (int64_t d : shape)
    size *= d;
  std::vector<float> values(size);
  for (int64_t i = 0; i < size; ++i)
    values[i] = float((i * mul) % mod) - shift;
  return values;
}

/// Runs `body(backend)` once per cuDNN API (DISC_CUDA_CONV_API: the
/// legacy descriptor API, then the graph API), named in failures.
template <typename Body> void forEachCudnnApi(Body body) {
  for (const char *api : {"legacy", "backend"}) {
    SCOPED_TRACE(std::string("DISC_CUDA_CONV_API=") + api);
    ::setenv("DISC_CUDA_CONV_API", api, 1);
    body(std::string(api) == "backend");
  }
  ::unsetenv("DISC_CUDA_CONV_API");
}

/// Runs each case's program (compiled for cuda, the fake cuDNN computing on
/// the host) at its input shapes against hostConvolution: the forward
/// convolution of x and a fixed kernel, or (kernelGradient) the kernel
/// gradient of x and an output gradient of the matching shape. Under the
/// graph API (`backend`) every call executes a plan.
void checkConvCases(const std::vector<ConvCase> &cases, bool kernelGradient,
                    bool backend) {
  for (const ConvCase &c : cases) {
    resetFake();
    CompileOptions options;
    options.target = "cuda";
    auto exe = Executable::compile(c.program, options);
    EXPECT_EQ(exe->kernelCounts().libraryCalls, 1) << c.name;
    for (const auto &xShape : c.inputShapes) {
      std::vector<float> x = patterned(xShape, 7, 11, 5);
      std::vector<int64_t> yShape = {xShape[0], c.kernelShape[0]};
      for (size_t s = 2; s < xShape.size(); ++s) {
        int64_t span = (c.kernelShape[s] - 1) * c.dilation + 1;
        yShape.push_back((xShape[s] + 2 * c.pad - span) / c.stride + 1);
      }
      // The second operand: the kernel, or the output's gradient.
      const std::vector<int64_t> &otherShape =
          kernelGradient ? yShape : c.kernelShape;
      std::vector<float> other = patterned(otherShape, 5, 13, 6);
      ral::TensorView xv, ov;
      xv.data = x.data(), xv.shape = xShape;
      ov.data = other.data(), ov.shape = otherShape;
      auto outputs = exe->run({xv, ov}, kStream);
      ASSERT_EQ(outputs.size(), 1u) << c.name;
      ASSERT_EQ(outputs[0].shape, kernelGradient ? c.kernelShape : yShape)
          << c.name;
      std::vector<float> want =
          hostConvolution(x, xShape, other, c.kernelShape, yShape, c.stride,
                          c.pad, c.dilation, c.groups, kernelGradient);
      const float *got = static_cast<const float *>(outputs[0].data);
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_EQ(got[i], want[i]) << c.name << " at " << i;
    }
    EXPECT_EQ(fake().convolutions, kernelGradient ? 0 : 3) << c.name;
    EXPECT_EQ(fake().backwardFilters, kernelGradient ? 3 : 0) << c.name;
    EXPECT_EQ(fake().backendExecutes, backend ? 3 : 0) << c.name;
    EXPECT_EQ(fake().lastConvStream, kStream) << c.name;
    EXPECT_EQ(fake().lastConvMathType, 3) << c.name << ": FMA math for f32";
    EXPECT_EQ(fake().allocations, fake().frees) << c.name;
  }
}

TEST_F(CudaHost, ConvolutionThroughCudnnMatchesAHostReference) {
  const std::vector<ConvCase> cases = {
      {"2-d, stride 2, padding 1", R"(
func.func @main(%x: tensor<?x3x?x?xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32> {
  %0 = disc.convolution %x, %w, strides = [2, 2], pad_low = [1, 1], pad_high = [1, 1], dilation = [1, 1] : (tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32>
  return %0 : tensor<?x8x?x?xf32>
})",
       {{1, 3, 5, 5}, {2, 3, 8, 6}, {3, 3, 1, 4}},
       {8, 3, 3, 3},
       2,
       1,
       1,
       1},
      {"2-d depthwise, dilation 2", R"(
func.func @main(%x: tensor<?x4x?x?xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<?x4x?x?xf32> {
  %0 = disc.convolution %x, %w, strides = [1, 1], pad_low = [2, 2], pad_high = [2, 2], dilation = [2, 2] {feature_group_count = 4 : i64} : (tensor<?x4x?x?xf32>, tensor<4x1x3x3xf32>) -> tensor<?x4x?x?xf32>
  return %0 : tensor<?x4x?x?xf32>
})",
       {{1, 4, 5, 5}, {2, 4, 7, 3}, {1, 4, 2, 9}},
       {4, 1, 3, 3},
       1,
       2,
       2,
       4},
      {"1-d (as 2-d of height 1)", R"(
func.func @main(%x: tensor<?x2x?xf32>, %w: tensor<6x2x5xf32>) -> tensor<?x6x?xf32> {
  %0 = disc.convolution %x, %w, strides = [3], pad_low = [2], pad_high = [2], dilation = [1] : (tensor<?x2x?xf32>, tensor<6x2x5xf32>) -> tensor<?x6x?xf32>
  return %0 : tensor<?x6x?xf32>
})",
       {{1, 2, 7}, {4, 2, 16}, {2, 2, 1}},
       {6, 2, 5},
       3,
       2,
       1,
       1},
  };
  // The depthwise case is a generated kernel by default on cuda (docs/
  // cuda.md, "Depthwise convolutions"); DISC_CUDA_DEPTHWISE=cudnn keeps the
  // cuDNN call this test checks.
  ::setenv("DISC_CUDA_DEPTHWISE", "cudnn", 1);
  forEachCudnnApi([&](bool backend) {
    checkConvCases(cases, /*kernelGradient=*/false, backend);
  });
  ::unsetenv("DISC_CUDA_DEPTHWISE");
}

TEST_F(CudaHost, KernelGradientThroughCudnnMatchesAHostReference) {
  // disc.convolution_backward_weights on cuda is cuDNN's backward filter
  // (the fake computes it on the host from the descriptors it is given):
  // strided, grouped with dilation, and 1-d (as 2-d of height 1), each at
  // three batch and spatial sizes, on the call's stream with FMA math.
  const std::vector<ConvCase> cases = {
      {"2-d, stride 2, padding 1", R"(
func.func @main(%x: tensor<?x3x?x?xf32>, %dy: tensor<?x8x?x?xf32>) -> tensor<8x3x3x3xf32> {
  %0 = disc.convolution_backward_weights %x, %dy, strides = [2, 2], pad_low = [1, 1], pad_high = [1, 1], dilation = [1, 1] : (tensor<?x3x?x?xf32>, tensor<?x8x?x?xf32>) -> tensor<8x3x3x3xf32>
  return %0 : tensor<8x3x3x3xf32>
})",
       {{1, 3, 5, 5}, {2, 3, 8, 6}, {3, 3, 1, 4}},
       {8, 3, 3, 3},
       2,
       1,
       1,
       1},
      {"2-d, 2 groups, dilation 2", R"(
func.func @main(%x: tensor<?x4x?x?xf32>, %dy: tensor<?x6x?x?xf32>) -> tensor<6x2x3x3xf32> {
  %0 = disc.convolution_backward_weights %x, %dy, strides = [1, 1], pad_low = [2, 2], pad_high = [2, 2], dilation = [2, 2] {feature_group_count = 2 : i64} : (tensor<?x4x?x?xf32>, tensor<?x6x?x?xf32>) -> tensor<6x2x3x3xf32>
  return %0 : tensor<6x2x3x3xf32>
})",
       {{1, 4, 5, 5}, {2, 4, 7, 3}, {1, 4, 2, 9}},
       {6, 2, 3, 3},
       1,
       2,
       2,
       2},
      {"1-d (as 2-d of height 1)", R"(
func.func @main(%x: tensor<?x2x?xf32>, %dy: tensor<?x6x?xf32>) -> tensor<6x2x5xf32> {
  %0 = disc.convolution_backward_weights %x, %dy, strides = [3], pad_low = [2], pad_high = [2], dilation = [1] : (tensor<?x2x?xf32>, tensor<?x6x?xf32>) -> tensor<6x2x5xf32>
  return %0 : tensor<6x2x5xf32>
})",
       {{1, 2, 7}, {4, 2, 16}, {2, 2, 1}},
       {6, 2, 5},
       3,
       2,
       1,
       1},
  };
  forEachCudnnApi([&](bool backend) {
    checkConvCases(cases, /*kernelGradient=*/true, backend);
  });
}

// x @ w.T with dynamic extents (w: [n, k], contracted on its dim 1).
const char *kTransposedProduct = R"(
func.func @main(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = disc.dot_general %x, %w, batching_dims = [] x [], contracting_dims = [1] x [1] : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
})";

/// Checks that got [m, n] is a [m, k] @ b [n, k]^T (the f64 sum rounded
/// once, as the fake cuBLASLt computes it).
void expectTransposedProduct(const float *got, const float *a, const float *b,
                             int64_t m, int64_t k, int64_t n,
                             const std::string &what) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t q = 0; q < k; ++q)
        want += double(a[i * k + q]) * b[j * k + q];
      ASSERT_EQ(got[i * n + j], float(want))
          << what << " [" << i << ", " << j << "]";
    }
}

TEST_F(CudaHost, MatmulDescriptorsArePreparedOncePerProblem) {
  // The descriptors and the heuristic are made once per (handle, problem)
  // and reused: three calls at one shape and two at another prepare two
  // problems, and every call computes its own product. (The cache is
  // process-wide: these extents are used by no other test.)
  resetFake();
  CompileOptions options;
  options.target = "cuda";
  auto exe = Executable::compile(kTransposedProduct, options);
  const int64_t shapes[][3] = {{13, 11, 9}, {13, 11, 9}, {2, 11, 9},
                               {13, 11, 9}, {2, 11, 9}}; // m, k, n
  int call = 0;
  for (const auto &shape : shapes) {
    const int64_t m = shape[0], k = shape[1], n = shape[2];
    std::vector<float> a(m * k), b(n * k);
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = float((i * 7 + call) % 11) - 5; // different data every call
    for (size_t i = 0; i < b.size(); ++i)
      b[i] = float((i * 5) % 13) - 6;
    // Aligned as device buffers are (the alignment is part of the problem).
    std::shared_ptr<float> aDevice = deviceLike(a), bDevice = deviceLike(b);
    ral::TensorView x, y;
    x.data = aDevice.get(), x.shape = {m, k};
    y.data = bDevice.get(), y.shape = {n, k};
    auto outputs = exe->run({x, y}, kStream);
    ASSERT_EQ(outputs.size(), 1u);
    expectTransposedProduct(static_cast<const float *>(outputs[0].data),
                            a.data(), b.data(), m, k, n,
                            "call " + std::to_string(call));
    ++call;
  }
  EXPECT_EQ(fake().matmuls, 5);
  EXPECT_EQ(fake().matmulDescriptors, 2) << "one preparation per problem";
  EXPECT_EQ(fake().allocations, fake().frees);
}

TEST_F(CudaHost,
       MatmulOperandsStartingMidBlockGetAnAlgorithmForTheirAlignment) {
  // cuBLASLt's heuristic assumes 256-byte aligned pointers unless told
  // less, and its kernels may rely on it: a view one float into its
  // buffer (x[1:] of a flat buffer) is 4-byte aligned. The call tells the
  // heuristic each pointer's alignment, and an aligned and a misaligned
  // call of the same extents are two problems. (The fake refuses a pointer
  // less aligned than its algorithm was chosen for; these extents are used
  // by no other test.)
  resetFake();
  CompileOptions options;
  options.target = "cuda";
  auto exe = Executable::compile(kTransposedProduct, options);
  const int64_t m = 7, k = 13, n = 6;
  // 256-byte aligned storage, so offset 0 is aligned and 1..3 are not.
  std::vector<float> storage(m * k + 64 + 3), b(n * k);
  float *base = storage.data();
  while (reinterpret_cast<uintptr_t>(base) % 256 != 0)
    ++base;
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = float((i * 5) % 13) - 6;
  for (int64_t offset : {0, 1, 2, 0, 1}) {
    float *a = base + offset;
    for (int64_t i = 0; i < m * k; ++i)
      a[i] = float((i * 7 + offset) % 11) - 5;
    ral::TensorView x, y;
    x.data = a, x.shape = {m, k};
    y.data = b.data(), y.shape = {n, k};
    auto outputs = exe->run({x, y}, kStream);
    ASSERT_EQ(outputs.size(), 1u);
    expectTransposedProduct(static_cast<const float *>(outputs[0].data), a,
                            b.data(), m, k, n,
                            "offset " + std::to_string(offset));
  }
  EXPECT_EQ(fake().misalignedMatmuls, 0);
  EXPECT_EQ(fake().matmuls, 5);
  // Alignments 256 (or more: the buffer's own), 4 and 8.
  EXPECT_EQ(fake().matmulDescriptors, 3) << "one preparation per alignment";
  EXPECT_EQ(fake().allocations, fake().frees);
}

/// x @ w.T + b, a linear layer of element type `type` with dynamic extents
/// (the bias broadcast over the rows).
std::string linearWithBias(const std::string &type) {
  std::string program = R"(
func.func @main(%x: tensor<?x?xT> {disc.dims = ["s0", "s1"]}, %w: tensor<?x?xT> {disc.dims = ["s2", "s1"]}, %b: tensor<?xT> {disc.dims = ["s2"]}) -> tensor<?x?xT> {
  %c0 = arith.constant 0 : index
  %0 = disc.dot_general %x, %w, batching_dims = [] x [], contracting_dims = [1] x [1] : (tensor<?x?xT>, tensor<?x?xT>) -> tensor<?x?xT>
  %m = tensor.dim %x, %c0 : tensor<?x?xT>
  %n = tensor.dim %b, %c0 : tensor<?xT>
  %s = tensor.from_elements %m, %n : tensor<2xindex>
  %1 = disc.dynamic_broadcast_in_dim %b, %s, dims = [1] : (tensor<?xT>, tensor<2xindex>) -> tensor<?x?xT>
  %2 = disc.add %0, %1 : tensor<?x?xT>
  return %2 : tensor<?x?xT>
})";
  for (size_t at; (at = program.find("xT>")) != std::string::npos;)
    program.replace(at, 3, "x" + type + ">");
  return program;
}

TEST_F(CudaHost, LinearBiasIsAddedByCublasLtsEpilogue) {
  // x @ w.T + b (a linear layer, bias broadcast over the rows) and a
  // batched a @ b + bias: the bias add becomes cuBLASLt's BIAS epilogue,
  // no kernel is launched, and each call sets its own bias pointer on the
  // shared descriptor. The fake adds the bias on the host. (These extents
  // are used by no other test.)
  struct Case {
    const char *name, *program;
    bool batched;
  };
  const std::string linear = linearWithBias("f32");
  const Case cases[] = {
      {"linear", linear.c_str(), false},
      {"batched", R"(
func.func @main(%x: tensor<?x?x?xf32> {disc.dims = ["s0", "s1", "s2"]}, %w: tensor<?x?x?xf32> {disc.dims = ["s0", "s2", "s3"]}, %b: tensor<?xf32> {disc.dims = ["s3"]}) -> tensor<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %0 = disc.dot_general %x, %w, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %p = tensor.dim %x, %c0 : tensor<?x?x?xf32>
  %m = tensor.dim %x, %c1 : tensor<?x?x?xf32>
  %n = tensor.dim %b, %c0 : tensor<?xf32>
  %s = tensor.from_elements %p, %m, %n : tensor<3xindex>
  %1 = disc.dynamic_broadcast_in_dim %b, %s, dims = [2] : (tensor<?xf32>, tensor<3xindex>) -> tensor<?x?x?xf32>
  %2 = disc.add %1, %0 : tensor<?x?x?xf32>
  return %2 : tensor<?x?x?xf32>
})",
       true},
  };
  for (const Case &c : cases) {
    resetFake();
    CompileOptions options;
    options.target = "cuda";
    auto exe = Executable::compile(c.program, options);
    EXPECT_EQ(exe->kernelCounts().libraryCalls, 1) << c.name;
    EXPECT_EQ(exe->kernelCounts().loopKernels, 0)
        << c.name << ": the bias add is in the library call";
    const int64_t shapes[][4] = {{1, 5, 7, 3}, {3, 1, 7, 9}, {2, 4, 1, 1}};
    int call = 0;
    for (const auto &shape : shapes) {
      const int64_t batch = c.batched ? shape[0] : 1, m = shape[1],
                    k = shape[2], n = shape[3];
      std::vector<float> a(batch * m * k), w(batch * k * n), bias(n);
      for (size_t i = 0; i < a.size(); ++i)
        a[i] = float((i * 7 + call) % 11) - 5;
      for (size_t i = 0; i < w.size(); ++i)
        w[i] = float((i * 5) % 13) - 6;
      for (int64_t j = 0; j < n; ++j)
        bias[j] = 0.25f * float(j + 1) + float(call); // new every call
      ral::TensorView x, y, z;
      x.data = a.data(), y.data = w.data(), z.data = bias.data();
      x.shape = c.batched ? std::vector<int64_t>{batch, m, k}
                          : std::vector<int64_t>{m, k};
      y.shape = c.batched ? std::vector<int64_t>{batch, k, n}
                          : std::vector<int64_t>{n, k};
      z.shape = {n};
      auto outputs = exe->run({x, y, z}, kStream);
      ASSERT_EQ(outputs.size(), 1u) << c.name;
      const float *got = static_cast<const float *>(outputs[0].data);
      for (int64_t p = 0; p < batch; ++p)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            ASSERT_EQ(got[(p * m + i) * n + j],
                      hostProductAt(a, w, !c.batched, p, i, j, m, k, n) +
                          bias[j])
                << c.name << " call " << call << " at [" << p << ", " << i
                << ", " << j << "]";
          }
      ++call;
    }
    EXPECT_EQ(fake().matmuls, 3) << c.name;
    EXPECT_EQ(fake().lastMatmulEpilogue, 4u) << c.name << ": BIAS";
    EXPECT_EQ(fake().numLaunches, 0) << c.name;
    // Three problems, each prepared (one set) and called (one set).
    EXPECT_EQ(fake().biasPointerSets, 6) << c.name;
    EXPECT_EQ(fake().allocations, fake().frees) << c.name;
  }
}

TEST_F(CudaHost, HalfPrecisionBiasIsAddedBeforeTheProductIsRounded) {
  // A linear layer in bf16 and in f16: the bias add is cuBLASLt's BIAS
  // epilogue too (disc_ral_cuda_matmul_bias_<t>), which adds the bias in
  // f32 and rounds once: the fake's result is the f64 product rounded to
  // f32, plus the bias, rounded to the type. No kernel is launched.
  struct Case {
    const char *type;
    ral::DType dtype;
    int cudaType;
  };
  for (const Case &c : {Case{"bf16", ral::DType::BF16, 14},
                        Case{"f16", ral::DType::F16, 2}}) {
    resetFake();
    const std::string program = linearWithBias(c.type);
    CompileOptions options;
    options.target = "cuda";
    auto exe = Executable::compile(program, options);
    EXPECT_EQ(exe->kernelCounts().libraryCalls, 1) << c.type;
    EXPECT_EQ(exe->kernelCounts().loopKernels, 0) << c.type;
    for (const auto &shape : {std::vector<int64_t>{3, 7, 5},
                              std::vector<int64_t>{1, 16, 9}}) {
      const int64_t m = shape[0], k = shape[1], n = shape[2];
      std::vector<uint16_t> a(m * k), w(n * k), bias(n);
      for (size_t i = 0; i < a.size(); ++i)
        fakeStoreElement(a.data(), i, c.cudaType, float(int(i * 7 % 11) - 5));
      for (size_t i = 0; i < w.size(); ++i)
        fakeStoreElement(w.data(), i, c.cudaType,
                         0.125f * float(int(i * 5 % 13) - 6));
      for (int64_t j = 0; j < n; ++j)
        fakeStoreElement(bias.data(), j, c.cudaType, 0.3f * float(j + 1));
      ral::TensorView x, y, z;
      x.data = a.data(), x.dtype = c.dtype, x.shape = {m, k};
      y.data = w.data(), y.dtype = c.dtype, y.shape = {n, k};
      z.data = bias.data(), z.dtype = c.dtype, z.shape = {n};
      auto outputs = exe->run({x, y, z}, kStream);
      ASSERT_EQ(outputs.size(), 1u) << c.type;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (int64_t q = 0; q < k; ++q)
            sum += double(fakeLoadElement(a.data(), i * k + q, c.cudaType)) *
                   fakeLoadElement(w.data(), j * k + q, c.cudaType);
          float want = fakeRound(
              float(sum) + fakeLoadElement(bias.data(), j, c.cudaType),
              c.cudaType);
          ASSERT_EQ(fakeLoadElement(outputs[0].data, i * n + j, c.cudaType),
                    want)
              << c.type << " [" << i << ", " << j << "] of " << m << "x" << k
              << "x" << n;
        }
    }
    EXPECT_EQ(fake().matmuls, 2) << c.type;
    EXPECT_EQ(fake().lastMatmulEpilogue, 4u) << c.type << ": BIAS";
    EXPECT_EQ(fake().numLaunches, 0) << c.type;
  }
}

TEST_F(CudaHost, BiasEpilogueIsOffWithDiscLibraryEpiloguesZero) {
  // DISC_LIBRARY_EPILOGUES=0 keeps the bias add a kernel of its own on cuda
  // too (what the A/B measures).
  resetFake();
  setenv("DISC_LIBRARY_EPILOGUES", "0", 1);
  CompileOptions options;
  options.target = "cuda";
  auto exe = Executable::compile(R"(
func.func @main(%x: tensor<4x6xf32>, %w: tensor<3x6xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = disc.dot_general %x, %w, batching_dims = [] x [], contracting_dims = [1] x [1] : (tensor<4x6xf32>, tensor<3x6xf32>) -> tensor<4x3xf32>
  %1 = disc.broadcast_in_dim %b, dims = [1] : (tensor<3xf32>) -> tensor<4x3xf32>
  %2 = disc.add %0, %1 : tensor<4x3xf32>
  return %2 : tensor<4x3xf32>
})",
                                 options);
  unsetenv("DISC_LIBRARY_EPILOGUES");
  EXPECT_EQ(exe->kernelCounts().libraryCalls, 1);
  EXPECT_EQ(exe->kernelCounts().loopKernels, 1);
}

TEST_F(CudaHost, ConvolutionDescriptorsArePreparedOncePerProblem) {
  // The descriptors and the algorithm are made once per (handle, problem)
  // and reused: three calls at one shape and two at another prepare two
  // problems, and every call still computes its own result. (The cache is
  // process-wide: this kernel shape is used by no other test.)
  forEachCudnnApi([&](bool backend) {
    resetFake();
    CompileOptions options;
    options.target = "cuda";
    auto exe = Executable::compile(R"(
func.func @main(%x: tensor<?x2x?x?xf32>, %w: tensor<5x2x3x3xf32>) -> tensor<?x5x?x?xf32> {
  %0 = disc.convolution %x, %w, strides = [1, 1], pad_low = [1, 1], pad_high = [1, 1], dilation = [1, 1] : (tensor<?x2x?x?xf32>, tensor<5x2x3x3xf32>) -> tensor<?x5x?x?xf32>
  return %0 : tensor<?x5x?x?xf32>
})",
                                   options);
    std::vector<int64_t> wShape = {5, 2, 3, 3};
    std::vector<float> w(5 * 2 * 3 * 3);
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = float((i * 3) % 7) - 3;
    const std::vector<std::vector<int64_t>> shapes = {
        {1, 2, 6, 7}, {1, 2, 6, 7}, {2, 2, 4, 3}, {1, 2, 6, 7}, {2, 2, 4, 3}};
    int call = 0;
    for (const auto &xShape : shapes) {
      int64_t xSize = xShape[0] * xShape[1] * xShape[2] * xShape[3];
      std::vector<float> x(xSize);
      for (int64_t i = 0; i < xSize; ++i)
        x[i] = float((i * 5 + call) % 9) - 4; // different data every call
      std::vector<int64_t> yShape = {xShape[0], 5, xShape[2], xShape[3]};
      ral::TensorView xv, wv;
      xv.data = x.data(), xv.shape = xShape;
      wv.data = w.data(), wv.shape = wShape;
      auto outputs = exe->run({xv, wv}, kStream);
      ASSERT_EQ(outputs.size(), 1u);
      ASSERT_EQ(outputs[0].shape, yShape);
      std::vector<float> want =
          hostConvolution(x, xShape, w, wShape, yShape, 1, 1, 1, 1);
      const float *got = static_cast<const float *>(outputs[0].data);
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_EQ(got[i], want[i]) << "call " << call << " at " << i;
      ++call;
    }
    EXPECT_EQ(fake().convolutions, 5);
    EXPECT_EQ(fake().convDescriptorSets, 2) << "one preparation per problem";
    EXPECT_EQ(fake().allocations, fake().frees);
    EXPECT_EQ(fake().backendPlans, backend ? 2 : 0);
    EXPECT_EQ(fake().backendExecutes, backend ? 5 : 0);
  });
}

TEST_F(CudaHost, ConvolutionPlansFollowEngineNotesAlignmentAndErrors) {
  // The graph API (DISC_CUDA_CONV_API unset: the default) against the fake
  // engines (FakeCudaDriver.cpp): 3 down-converts its inputs, 0 uses
  // tensor cores, 2 takes no problem, 1 is FMA. A plan is made per
  // problem and pointer alignment; DISC_LOG=library prints each plan; an
  // engine list where nothing takes the problem, and an unknown API, are
  // errors naming the call. (This kernel shape is used by no other test.)
  resetFake();
  CompileOptions options;
  options.target = "cuda";
  auto exe = Executable::compile(R"(
func.func @main(%x: tensor<?x3x?x?xf32>, %w: tensor<9x3x1x1xf32>) -> tensor<?x9x?x?xf32> {
  %0 = disc.convolution %x, %w, strides = [1, 1], pad_low = [0, 0], pad_high = [0, 0], dilation = [1, 1] : (tensor<?x3x?x?xf32>, tensor<9x3x1x1xf32>) -> tensor<?x9x?x?xf32>
  return %0 : tensor<?x9x?x?xf32>
})",
                                 options);
  const std::vector<int64_t> xShape = {2, 3, 4, 5}, wShape = {9, 3, 1, 1};
  const std::vector<int64_t> yShape = {2, 9, 4, 5};
  // One element of slack: the input is also passed 4 bytes in.
  std::vector<float> xStorage = patterned({2 * 3 * 4 * 5 + 1}, 7, 11, 5);
  std::vector<float> w = patterned(wShape, 5, 13, 6);
  auto runAtOffset = [&](int64_t offset, ral::Float32Math math) {
    std::vector<float> x(xStorage.begin() + offset,
                         xStorage.begin() + offset + 120);
    ral::TensorView xv, wv;
    xv.data = xStorage.data() + offset, xv.shape = xShape;
    wv.data = w.data(), wv.shape = wShape;
    auto outputs = exe->run({xv, wv}, kStream, math);
    std::vector<float> want =
        hostConvolution(x, xShape, w, wShape, yShape, 1, 0, 1, 1);
    const float *got = static_cast<const float *>(outputs.at(0).data);
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_EQ(got[i], want[i]) << "offset " << offset << " at " << i;
  };
  ::setenv("DISC_LOG", "library", 1);
  ::testing::internal::CaptureStderr();
  runAtOffset(0, {false, false});
  runAtOffset(0, {false, false});
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(fake().lastConvMathType, 3) << "engine 1 (FMA): 3 and 0 skipped, "
                                           "2 does not take the problem";
  EXPECT_NE(log.find("cuDNN plan for a convolution (input is [2, 3, 4, 5], "
                     "kernel is [9, 3, 1, 1], output is [2, 9, 4, 5], "
                     "groups 1): engine 101 (heuristic mode A, config 4 of "
                     "those seen; 2 skipped for their numerics, 1 did not "
                     "take the problem), workspace 2048 bytes"),
            std::string::npos)
      << log;
  ::testing::internal::CaptureStderr();
  runAtOffset(0, {false, true});
  log = ::testing::internal::GetCapturedStderr();
  ::unsetenv("DISC_LOG");
  EXPECT_EQ(fake().lastConvMathType, 1) << "TF32 allowed: engine 0";
  EXPECT_NE(log.find("engine 100 (heuristic mode A, config 2 of those seen; "
                     "1 skipped"),
            std::string::npos)
      << log;
  EXPECT_EQ(fake().backendPlans, 2) << "FMA, and tensor cores allowed";
  // An input 4 bytes into its buffer: a plan of its own that declares the
  // alignment (the fake rejects a pointer less aligned than declared).
  runAtOffset(1, {false, false});
  runAtOffset(1, {false, false});
  EXPECT_EQ(fake().backendPlans, 3);
  EXPECT_EQ(fake().backendExecutes, 5);
  EXPECT_EQ(fake().allocations, fake().frees);
  // No engine takes the problem (a new shape, so that nothing is prepared).
  fake().rejectEveryEngine = true;
  std::vector<float> x = patterned({1, 3, 2, 2}, 7, 11, 5);
  ral::TensorView xv, wv;
  xv.data = x.data(), xv.shape = {1, 3, 2, 2};
  wv.data = w.data(), wv.shape = wShape;
  try {
    exe->run({xv, wv}, kStream);
    FAIL() << "expected an error";
  } catch (const ral::InvocationError &e) {
    std::string what = e.what();
    EXPECT_NE(what.find("disc_ral_cuda_conv_f32: cuDNN has no engine for a "
                        "convolution (5 engine configs, 2 skipped for their "
                        "numerics, 3 did not take it (last: "
                        "CUDNN_STATUS_NOT_SUPPORTED); DISC_CUDA_CONV_API="
                        "legacy tries the legacy API): input is [1, 3, 2, "
                        "2]"),
              std::string::npos)
        << what;
  }
  fake().rejectEveryEngine = false;
  EXPECT_EQ(fake().allocations, fake().frees);
  ::setenv("DISC_CUDA_CONV_API", "cudnn8", 1);
  try {
    exe->run({xv, wv}, kStream);
    FAIL() << "expected an error";
  } catch (const ral::InvocationError &e) {
    std::string what = e.what();
    EXPECT_NE(what.find("DISC_CUDA_CONV_API='cudnn8': expected 'backend'"),
              std::string::npos)
        << what;
  }
  ::unsetenv("DISC_CUDA_CONV_API");
  EXPECT_EQ(fake().allocations, fake().frees);
}

TEST_F(CudaHost, Float32LibraryCallsUseTf32OnlyWhenTheCallAllowsIt) {
  // Each call says whether its f32 matmuls and convolutions may use TF32
  // (PyTorch's two settings, read per call): cuBLASLt's compute type is
  // COMPUTE_32F_FAST_TF32 (77) or COMPUTE_32F (68); cuDNN's math type is
  // the default one, under which the heuristic picks a tensor-core
  // algorithm (1), or FMA (3). The two switches are independent, the
  // prepared problem differs by them (a descriptor made for one is never
  // used for the other), and results are unchanged (the fakes compute in
  // full precision). The extents are used by no other test.
  forEachCudnnApi([&](bool backend) {
    resetFake();
    CompileOptions options;
    options.target = "cuda";
    auto exe = Executable::compile(R"(
func.func @main(%x: tensor<?x3x?x?xf32>, %w: tensor<7x3x3x3xf32>, %a: tensor<?x17xf32>, %b: tensor<19x17xf32>) -> (tensor<?x7x?x?xf32>, tensor<?x19xf32>) {
  %0 = disc.convolution %x, %w, strides = [1, 1], pad_low = [1, 1], pad_high = [1, 1], dilation = [1, 1] : (tensor<?x3x?x?xf32>, tensor<7x3x3x3xf32>) -> tensor<?x7x?x?xf32>
  %1 = disc.dot_general %a, %b, batching_dims = [] x [], contracting_dims = [1] x [1] : (tensor<?x17xf32>, tensor<19x17xf32>) -> tensor<?x19xf32>
  return %0, %1 : tensor<?x7x?x?xf32>, tensor<?x19xf32>
})",
                                   options);
    const std::vector<int64_t> xShape = {2, 3, 4, 5}, wShape = {7, 3, 3, 3};
    std::vector<float> x = patterned(xShape, 7, 11, 5);
    std::vector<float> w = patterned(wShape, 5, 13, 6);
    std::vector<float> a = patterned({3, 17}, 3, 7, 3);
    std::vector<float> b = patterned({19, 17}, 5, 9, 4);
    ral::TensorView xv, wv, av, bv;
    xv.data = x.data(), xv.shape = xShape;
    wv.data = w.data(), wv.shape = wShape;
    // The matmul's operands 256-byte aligned, as device buffers are: the
    // problem (and so its preparation) depends on the alignment.
    std::shared_ptr<float> aDevice = deviceLike(a), bDevice = deviceLike(b);
    av.data = aDevice.get(), av.shape = {3, 17};
    bv.data = bDevice.get(), bv.shape = {19, 17};
    const std::vector<int64_t> yShape = {2, 7, 4, 5};
    const std::vector<float> wantConv =
        hostConvolution(x, xShape, w, wShape, yShape, 1, 1, 1, 1);
    struct Setting {
      bool tf32Matmul, tf32Convolution;
      int computeType, mathType;
    };
    const Setting settings[] = {{false, false, 68, 3},
                                {true, false, 77, 3},
                                {false, true, 68, 1},
                                {true, true, 77, 1},
                                {false, false, 68, 3}};
    for (const Setting &setting : settings) {
      ral::Float32Math math;
      math.tf32Matmul = setting.tf32Matmul;
      math.tf32Convolution = setting.tf32Convolution;
      auto outputs = exe->run({xv, wv, av, bv}, kStream, math);
      const std::string name = std::string("matmul tf32 ") +
                               (setting.tf32Matmul ? "on" : "off") +
                               ", convolution tf32 " +
                               (setting.tf32Convolution ? "on" : "off");
      ASSERT_EQ(outputs.size(), 2u) << name;
      EXPECT_EQ(fake().lastMatmulComputeType, setting.computeType) << name;
      EXPECT_EQ(fake().lastConvMathType, setting.mathType) << name;
      const float *conv = static_cast<const float *>(outputs[0].data);
      for (size_t i = 0; i < wantConv.size(); ++i)
        ASSERT_EQ(conv[i], wantConv[i]) << name << " at " << i;
      const float *product = static_cast<const float *>(outputs[1].data);
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 19; ++j) {
          double want = 0;
          for (int64_t q = 0; q < 17; ++q)
            want += double(a[i * 17 + q]) * b[j * 17 + q];
          ASSERT_EQ(product[i * 19 + j], float(want)) << name;
        }
    }
    EXPECT_EQ(fake().convDescriptorSets, 2) << "FMA and default math";
    // The library calls' workspaces come from the caller's allocator too
    // (the fake cuBLASLt asks for 4096 bytes, cuDNN's tensor-core algorithm
    // for 2048), returned before the call ends.
    AllocatorRecord record;
    {
      int64_t before = fake().allocations;
      auto outputs = exe->run({xv, wv, av, bv}, kStream, {true, true},
                              std::make_shared<RecordingAllocator>(record));
      EXPECT_EQ(fake().allocations, before);
      EXPECT_EQ(record.live.size(), 2u); // the two results
      EXPECT_EQ(record.frees, record.allocations - 2);
    }
    EXPECT_EQ(record.frees, record.allocations);
    EXPECT_EQ(std::count(record.sizes.begin(), record.sizes.end(), 4096), 1);
    EXPECT_EQ(std::count(record.sizes.begin(), record.sizes.end(), 2048), 1);
    // (The matmul's two problems were prepared in the first round.)
    EXPECT_EQ(fake().matmulDescriptors, backend ? 0 : 2)
        << "COMPUTE_32F and with TF32";
    EXPECT_EQ(fake().backendPlans, backend ? 2 : 0);
    EXPECT_EQ(fake().allocations, fake().frees);
  });
}

TEST_F(CudaHost, ThreadsSharingTheCudnnHandleKeepTheirStreams) {
  // cuDNN takes the stream from the handle, which the context's threads
  // share: two threads convolving at once on streams of their own (the
  // fake's cudnnSetStream waiting, so that the other thread's call can
  // come in between) must each run on their own stream, under both APIs.
  const char *program = R"(
func.func @main(%x: tensor<?x?x?x?xf32>, %w: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %0 = disc.convolution %x, %w, strides = [1, 1], pad_low = [1, 1], pad_high = [1, 1], dilation = [1, 1] : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
})";
  for (const char *api : {"backend", "legacy"}) {
    setenv("DISC_CUDA_CONV_API", api, 1);
    resetFake();
    CompileOptions options;
    options.target = "cuda";
    auto exe = Executable::compile(program, options);
    fake().setStreamDelayUs = 200;
    constexpr int kThreads = 2, kCalls = 20;
    std::vector<std::vector<float>> inputs(kThreads,
                                           std::vector<float>(2 * 5 * 5));
    std::vector<float> weights(3 * 2 * 3 * 3, 0.5f);
    std::vector<std::string> errors(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        ral::TensorView x, w;
        x.data = inputs[t].data(), w.data = weights.data();
        x.shape = {1, 2, 5, 5};
        w.shape = {3, 2, 3, 3};
        void *stream = reinterpret_cast<void *>(0x1000 + t);
        try {
          for (int call = 0; call < kCalls; ++call)
            exe->run({x, w}, stream);
        } catch (const std::exception &e) {
          errors[t] = e.what();
        }
      });
    for (std::thread &thread : threads)
      thread.join();
    for (int t = 0; t < kThreads; ++t)
      EXPECT_EQ(errors[t], "") << api;
    const int records = std::min<int>(fake().numConvRecords,
                                      FakeCudaState::kMaxConvRecords);
    ASSERT_EQ(records, kThreads * kCalls) << api;
    int wrong = 0;
    for (int r = 0; r < records; ++r) {
      const FakeCudaState::ConvRecord &record = fake().convRecords[r];
      for (int t = 0; t < kThreads; ++t)
        if (record.x == inputs[t].data() &&
            record.stream != reinterpret_cast<void *>(0x1000 + t))
          ++wrong;
    }
    EXPECT_EQ(wrong, 0) << api << ": convolutions ran on another thread's "
                           "stream";
  }
  unsetenv("DISC_CUDA_CONV_API");
}

TEST_F(CudaHost, TransposedConvolutionThroughCudnnBackwardData) {
  // A convolution with input dilation (a transposed convolution: DISC's
  // kernel is the forward's flipped, channel dims swapped per group) runs
  // as cuDNN's backward data of the forward: the kernel rearranged by
  // cudnnTransformTensor, mode CUDNN_CONVOLUTION (the flip), the output
  // padding as the high padding's excess. Against the definition: the
  // input dilated and padded explicitly, then a plain convolution.
  struct Case {
    const char *name, *program;
    std::vector<std::vector<int64_t>> inputShapes;
    std::vector<int64_t> kernelShape;
    int64_t lhsDilation, padLo, padHi, dilation, groups;
  };
  const std::vector<Case> cases = {
      {"2-d, stride 2, padding 1, output padding 1", R"(
func.func @main(%x: tensor<?x3x?x?xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<?x4x?x?xf32> {
  %0 = disc.convolution %x, %w, strides = [1, 1], pad_low = [1, 1], pad_high = [2, 2], dilation = [1, 1] lhs_dilation = [2, 2] : (tensor<?x3x?x?xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x?x?xf32>
  return %0 : tensor<?x4x?x?xf32>
})",
       {{1, 3, 3, 3}, {2, 3, 4, 2}, {1, 3, 1, 5}},
       {4, 3, 3, 3},
       2,
       1,
       2,
       1,
       1},
      {"2-d, 2 groups, stride 3, dilation 2, padding 1, output padding 1", R"(
func.func @main(%x: tensor<?x4x?x?xf32>, %w: tensor<6x2x2x2xf32>) -> tensor<?x6x?x?xf32> {
  %0 = disc.convolution %x, %w, strides = [1, 1], pad_low = [1, 1], pad_high = [2, 2], dilation = [2, 2] lhs_dilation = [3, 3] {feature_group_count = 2 : i64} : (tensor<?x4x?x?xf32>, tensor<6x2x2x2xf32>) -> tensor<?x6x?x?xf32>
  return %0 : tensor<?x6x?x?xf32>
})",
       {{1, 4, 2, 3}, {2, 4, 3, 3}, {1, 4, 1, 1}},
       {6, 2, 2, 2},
       3,
       1,
       2,
       2,
       2},
      {"1-d (as 2-d of height 1), stride 2, padding 2", R"(
func.func @main(%x: tensor<?x2x?xf32>, %w: tensor<3x2x5xf32>) -> tensor<?x3x?xf32> {
  %0 = disc.convolution %x, %w, strides = [1], pad_low = [2], pad_high = [2], dilation = [1] lhs_dilation = [2] : (tensor<?x2x?xf32>, tensor<3x2x5xf32>) -> tensor<?x3x?xf32>
  return %0 : tensor<?x3x?xf32>
})",
       {{1, 2, 4}, {3, 2, 9}, {2, 2, 1}},
       {3, 2, 5},
       2,
       2,
       2,
       1,
       1},
  };
  forEachCudnnApi([&](bool backend) {
    for (const Case &c : cases) {
      resetFake();
      CompileOptions options;
      options.target = "cuda";
      auto exe = Executable::compile(c.program, options);
      EXPECT_EQ(exe->kernelCounts().libraryCalls, 1) << c.name;
      std::vector<float> w = patterned(c.kernelShape, 5, 13, 6);
      for (const auto &xShape : c.inputShapes) {
        std::vector<float> x = patterned(xShape, 7, 11, 5);
        // The definition: x dilated by lhsDilation and padded, then a plain
        // convolution (stride 1, no padding).
        std::vector<int64_t> dShape = {xShape[0], xShape[1]};
        std::vector<int64_t> yShape = {xShape[0], c.kernelShape[0]};
        for (size_t s = 2; s < xShape.size(); ++s) {
          dShape.push_back((xShape[s] - 1) * c.lhsDilation + 1 + c.padLo +
                           c.padHi);
          yShape.push_back(dShape[s] -
                           ((c.kernelShape[s] - 1) * c.dilation + 1) + 1);
        }
        int64_t dSize = 1, inner = 1, dInner = 1;
        for (int64_t d : dShape)
          dSize *= d;
        for (size_t s = 2; s < xShape.size(); ++s)
          inner *= xShape[s], dInner *= dShape[s];
        std::vector<float> dilated(dSize, 0.0f);
        for (int64_t nc = 0; nc < xShape[0] * xShape[1]; ++nc)
          for (int64_t i = 0; i < inner; ++i) {
            int64_t rest = i, target = 0;
            for (size_t s = xShape.size() - 1; s >= 2; --s) {
              int64_t pos = rest % xShape[s];
              rest /= xShape[s];
              int64_t stride = 1;
              for (size_t t = s + 1; t < dShape.size(); ++t)
                stride *= dShape[t];
              target += (pos * c.lhsDilation + c.padLo) * stride;
            }
            dilated[nc * dInner + target] = x[nc * inner + i];
          }
        std::vector<float> want = hostConvolution(
            dilated, dShape, w, c.kernelShape, yShape, 1, 0, c.dilation,
            c.groups);
        ral::TensorView xv, wv;
        xv.data = x.data(), xv.shape = xShape;
        wv.data = w.data(), wv.shape = c.kernelShape;
        auto outputs = exe->run({xv, wv}, kStream);
        ASSERT_EQ(outputs.size(), 1u) << c.name;
        ASSERT_EQ(outputs[0].shape, yShape) << c.name;
        const float *got = static_cast<const float *>(outputs[0].data);
        for (size_t i = 0; i < want.size(); ++i)
          ASSERT_EQ(got[i], want[i]) << c.name << " at " << i;
      }
      EXPECT_EQ(fake().backwardData, 3) << c.name;
      EXPECT_EQ(fake().transforms, 3) << c.name;
      EXPECT_EQ(fake().convolutions, 0) << c.name;
      // Under the graph API: heuristic mode A lists only a tensor-core
      // engine, so the plan comes from the fallback list.
      EXPECT_EQ(fake().backendExecutes, backend ? 3 : 0) << c.name;
      EXPECT_EQ(fake().lastConvStream, kStream) << c.name;
      EXPECT_EQ(fake().lastConvMathType, 3) << c.name << ": FMA math for f32";
      EXPECT_EQ(fake().allocations, fake().frees) << c.name;
    }
  });
}

TEST_F(CudaHost, TransposedConvolutionOutsideCudnnsFormIsACompileError) {
  // High padding below the low one (no output padding gives that) is not a
  // transposed convolution cuDNN's backward data computes: a compile error
  // naming the call and the paddings.
  resetFake();
  CompileOptions options;
  options.target = "cuda";
  try {
    Executable::compile(R"(
func.func @main(%x: tensor<?x3x?x?xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<?x4x?x?xf32> {
  %0 = disc.convolution %x, %w, strides = [1, 1], pad_low = [2, 2], pad_high = [1, 1], dilation = [1, 1] lhs_dilation = [2, 2] : (tensor<?x3x?x?xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x?x?xf32>
  return %0 : tensor<?x4x?x?xf32>
})",
                        options);
    FAIL() << "expected a CompileError";
  } catch (const CompileError &e) {
    EXPECT_NE(std::string(e.what()).find(
                  "with a transposed convolution's padding 2 and 1: cuDNN's "
                  "backward data needs the high padding from the low one to "
                  "it + 1"),
              std::string::npos)
        << e.what();
  }
}

// Not a test: what one call of a compiled partition costs the host, against
// the fake driver with the libraries' math skipped (launches, allocator
// calls, library calls, microseconds). bench/cuda_host_counts.py runs it on
// the partitions of GraphNet samples:
//   DISC_HOST_COUNTS_MLIR=partition.mlir DISC_HOST_COUNTS_SHAPES=shapes.txt
//   disc-cuda-host-tests --gtest_also_run_disabled_tests
//     --gtest_filter=CudaHost.DISABLED_HostCountsOfAPartition
// shapes.txt: one line per input, "dtype size size ..." with DISC's dtype
// names (f32, f64, i64, i1, ui8, ...). Prints one line:
// "host counts: launches L allocations A convolutions C matmuls M us U".
/// The timed calls of HostCountsOfAPartition, a function of their own for
/// callgrind's --toggle-collect.
__attribute__((noinline)) void
hostCountsTimedCalls(Executable &exe, const std::vector<ral::TensorView> &inputs,
                     int calls) {
  for (int call = 0; call < calls; ++call)
    exe.run(inputs, kStream);
}

TEST_F(CudaHost, DISABLED_HostCountsOfAPartition) {
  const char *mlirPath = std::getenv("DISC_HOST_COUNTS_MLIR");
  const char *shapesPath = std::getenv("DISC_HOST_COUNTS_SHAPES");
  if (!mlirPath || !shapesPath)
    GTEST_SKIP() << "set DISC_HOST_COUNTS_MLIR and DISC_HOST_COUNTS_SHAPES";
  std::ifstream mlirFile(mlirPath), shapesFile(shapesPath);
  ASSERT_TRUE(mlirFile && shapesFile) << mlirPath << ", " << shapesPath;
  std::string text((std::istreambuf_iterator<char>(mlirFile)), {});
  std::vector<std::vector<int64_t>> shapes;
  std::vector<ral::DType> dtypes;
  for (std::string line; std::getline(shapesFile, line);) {
    std::istringstream words(line);
    std::string dtype;
    words >> dtype;
    bool known = false;
    for (ral::DType candidate :
         {ral::DType::F16, ral::DType::BF16, ral::DType::F32, ral::DType::F64,
          ral::DType::I1, ral::DType::I8, ral::DType::I16, ral::DType::I32,
          ral::DType::I64, ral::DType::U8})
      if (dtype == ral::dtypeName(candidate)) {
        dtypes.push_back(candidate);
        known = true;
      }
    ASSERT_TRUE(known) << "unknown dtype '" << dtype << "' in " << shapesPath;
    std::vector<int64_t> shape;
    for (int64_t size; words >> size;)
      shape.push_back(size);
    shapes.push_back(shape);
  }
  CompileOptions options;
  options.target = "cuda";
  auto exe = Executable::compile(text, options);
  // Eight bytes per element whatever the dtype: the host reads none of it
  // (kernels do not run, library math is skipped).
  std::vector<std::vector<int64_t>> storage;
  std::vector<ral::TensorView> inputs;
  for (const std::vector<int64_t> &shape : shapes) {
    int64_t count = 1;
    for (int64_t size : shape)
      count *= size;
    storage.emplace_back(std::max<int64_t>(count, 1), 0);
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    ral::TensorView view;
    view.data = storage[i].data();
    view.dtype = dtypes[i];
    view.shape = shapes[i];
    inputs.push_back(view);
  }
  resetFake();
  fake().skipMath = true;
  for (int warm = 0; warm < 3; ++warm)
    exe->run(inputs, kStream);
  if (std::getenv("DISC_HOST_COUNTS_LAUNCHES")) {
    // One call's launches, in order: "launch KERNEL grid X Y Z block X Y Z
    // shared BYTES" (bench/cuda_host_counts.py --launches).
    resetFake();
    fake().skipMath = true;
    exe->run(inputs, kStream);
    const FakeCudaState &s = fake();
    for (int i = 0; i < std::min(s.numLaunches, FakeCudaState::kMaxLaunches);
         ++i) {
      const FakeLaunch &l = s.launches[i];
      std::printf("launch %s grid %u %u %u block %u %u %u shared %u\n",
                  l.kernel, l.grid[0], l.grid[1], l.grid[2], l.block[0],
                  l.block[1], l.block[2], l.sharedBytes);
    }
  }
  resetFake();
  fake().skipMath = true;
  // DISC_HOST_COUNTS_CALLS: more calls, for a profiler attached late;
  // callgrind collects hostCountsTimedCalls alone (bench/cuda_host_counts.py
  // --instructions), so the first calls' preparations stay out.
  const char *callsEnv = std::getenv("DISC_HOST_COUNTS_CALLS");
  const int calls = callsEnv ? std::max(1, std::atoi(callsEnv)) : 100;
  auto start = std::chrono::steady_clock::now();
  hostCountsTimedCalls(*exe, inputs, calls);
  double us = std::chrono::duration<double, std::micro>(
                  std::chrono::steady_clock::now() - start)
                  .count() /
              calls;
  const FakeCudaState &s = fake();
  std::printf("host counts: launches %.1f allocations %.1f convolutions "
              "%.1f matmuls %.1f us %.1f\n",
              double(s.numLaunches) / calls, double(s.allocations) / calls,
              double(s.convolutions + s.backwardFilters + s.backwardData) /
                  calls,
              double(s.matmuls) / calls, us);
  fake().skipMath = false;
}

} // namespace
