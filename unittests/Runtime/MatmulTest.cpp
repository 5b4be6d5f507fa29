//===- MatmulTest.cpp - disc_ral_matmul_* against a reference -------------===//
//
// A packed test kernel receives two flat buffers, builds rank-3 memref
// descriptors viewing them (any sizes, strides and offset), allocates C with
// disc_ral_alloc and calls the matmul entry point, like compiled code.
//
//===----------------------------------------------------------------------===//

#include "LibraryState.h"
#include "SmallMatmul.h"
#include "TestUtils.h"

#include "disc/Runtime/RalApi.h"
#include "disc/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <thread>

#ifdef DISC_RAL_HAS_OPENMP
#include <omp.h>
#endif

using namespace disc::ral;
using namespace disc::ral::test;

namespace {

using MatmulFn = void (*)(void *, UnrankedMemRef *, UnrankedMemRef *,
                          UnrankedMemRef *, int64_t, int64_t);

struct MatmulCase {
  DType dtype = DType::F32;
  View a, b; // as stored: [B, K, M] when transA, etc.
  bool transA = false, transB = false;
  std::vector<int64_t> cSizes; // what the kernel allocates for C
  /// Strides of C in its buffer (empty: contiguous). The kernel returns C
  /// with these strides; invoke() makes the output contiguous.
  std::vector<int64_t> cStrides;
};

// The case the kernel runs (tests run one at a time per thread).
thread_local const MatmulCase *gCase = nullptr;

MatmulFn matmulFor(DType dtype) {
  switch (dtype) {
  case DType::BF16:
    return _mlir_ciface_disc_ral_matmul_bf16;
  case DType::F16:
    return _mlir_ciface_disc_ral_matmul_f16;
  default:
    return _mlir_ciface_disc_ral_matmul_f32;
  }
}

/// Inputs: two rank-1 buffers (args[1..5], args[6..10]); result: args[11].
void matmulKernel(void **args) {
  void *ctx = ctxOf(args);
  const MatmulCase &mc = *gCase;
  const int64_t elemSize = static_cast<int64_t>(dtypeSize(mc.dtype));
  int64_t aWords[9], bWords[9], cWords[9];
  fillDescriptor(aWords, ptrOf(args, 2), mc.a);
  fillDescriptor(bWords, ptrOf(args, 7), mc.b);
  const int64_t cCount = mc.cSizes[0] * mc.cSizes[1] * mc.cSizes[2];
  void *c = disc_ral_alloc(ctx, cCount * elemSize);
  cWords[0] = cWords[1] = asWord(c);
  cWords[2] = 0;
  for (int d = 0; d < 3; ++d)
    cWords[3 + d] = mc.cSizes[d];
  cWords[8] = 1;
  cWords[7] = mc.cSizes[2];
  cWords[6] = mc.cSizes[1] * mc.cSizes[2];
  if (!mc.cStrides.empty())
    for (int d = 0; d < 3; ++d)
      cWords[6 + d] = mc.cStrides[d];
  UnrankedMemRef a = {3, aWords}, b = {3, bWords}, cRef = {3, cWords};
  matmulFor(mc.dtype)(ctx, &a, &b, &cRef, mc.transA, mc.transB);
  int64_t *result = static_cast<int64_t *>(args[11]);
  for (int i = 0; i < 9; ++i)
    result[i] = cWords[i];
}

Signature matmulSignature(DType dtype) {
  Signature signature;
  ArgSpec a, b;
  a.name = "%a";
  b.name = "%b";
  a.dtype = b.dtype = dtype;
  a.dims = b.dims = {-1};
  signature.args = {a, b};
  signature.results = {{dtype, 3}};
  return signature;
}

/// Runs `mc` through invoke() on random data and compares with a reference.
void checkMatmul(Context &context, const MatmulCase &mc, uint32_t seed = 1) {
  std::mt19937 rng(seed);
  RandomBuffer aData(mc.dtype, mc.a.extent(), rng);
  RandomBuffer bData(mc.dtype, mc.b.extent(), rng);
  TensorView aIn{aData.data(), mc.dtype, {mc.a.extent()}};
  TensorView bIn{bData.data(), mc.dtype, {mc.b.extent()}};
  gCase = &mc;
  std::vector<OutputTensor> outputs =
      invoke(context, matmulKernel, matmulSignature(mc.dtype), {aIn, bIn});
  ASSERT_EQ(outputs.size(), 1u);
  const OutputTensor &c = outputs[0];
  ASSERT_EQ(c.shape, mc.cSizes);

  const int64_t batch = mc.cSizes[0], m = mc.cSizes[1], n = mc.cSizes[2];
  const int64_t k = mc.transA ? mc.a.sizes[1] : mc.a.sizes[2];
  auto aAt = [&](int64_t bi, int64_t i, int64_t p) {
    int64_t index = mc.a.offset + bi * mc.a.strides[0] +
                    (mc.transA ? p * mc.a.strides[1] + i * mc.a.strides[2]
                               : i * mc.a.strides[1] + p * mc.a.strides[2]);
    return static_cast<double>(aData.values[index]);
  };
  auto bAt = [&](int64_t bi, int64_t p, int64_t j) {
    int64_t index = mc.b.offset + bi * mc.b.strides[0] +
                    (mc.transB ? j * mc.b.strides[1] + p * mc.b.strides[2]
                               : p * mc.b.strides[1] + j * mc.b.strides[2]);
    return static_cast<double>(bData.values[index]);
  };
  const double tolerance = toleranceFor(mc.dtype);
  int reported = 0;
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double expected = 0, magnitude = 0;
        for (int64_t p = 0; p < k; ++p) {
          expected += aAt(bi, i, p) * bAt(bi, p, j);
          magnitude += std::fabs(aAt(bi, i, p) * bAt(bi, p, j));
        }
        const double got = loadAsFloat(c.data, mc.dtype, (bi * m + i) * n + j);
        if (std::fabs(got - expected) > tolerance * magnitude + 1e-6 &&
            reported++ < 5)
          ADD_FAILURE() << "C[" << bi << "," << i << "," << j << "] = " << got
                        << ", expected " << expected;
      }
}

MatmulCase simpleCase(DType dtype, int64_t batch, int64_t m, int64_t k,
                      int64_t n, bool transA = false, bool transB = false) {
  MatmulCase mc;
  mc.dtype = dtype;
  mc.transA = transA;
  mc.transB = transB;
  mc.a = contiguousView(transA ? std::vector<int64_t>{batch, k, m}
                               : std::vector<int64_t>{batch, m, k});
  mc.b = contiguousView(transB ? std::vector<int64_t>{batch, n, k}
                               : std::vector<int64_t>{batch, k, n});
  mc.cSizes = {batch, m, n};
  return mc;
}

/// Sets the small-matmul limit for a scope (tests choose the path), and
/// restores the default after.
struct SmallMatmulLimitScope {
  explicit SmallMatmulLimitScope(int64_t macs) { setSmallMatmulLimit(macs); }
  ~SmallMatmulLimitScope() { setSmallMatmulLimit(-1); }
};

/// Every f32 product through oneDNN (limit 0), or every one through the
/// runtime's own kernel (SmallMatmul.h): both paths see every case.
enum class MatmulPath { Library, Small };

class MatmulTest
    : public ::testing::TestWithParam<std::tuple<DType, MatmulPath>> {
protected:
  DType dtype() const { return std::get<0>(GetParam()); }
  bool small() const { return std::get<1>(GetParam()) == MatmulPath::Small; }
  void TearDown() override {
    // The path the test asked for is the one that ran (only f32 products
    // have the small path).
    const int64_t calls = smallMatmulCalls() - callsBefore;
    if (expectCalls && small() && dtype() == DType::F32)
      EXPECT_GT(calls, 0);
    else
      EXPECT_EQ(calls, 0);
  }
  SmallMatmulLimitScope limit{small() ? int64_t{1} << 40 : 0};
  const int64_t callsBefore = smallMatmulCalls();
  bool expectCalls = true; // false: no product reaches a kernel
  std::shared_ptr<Context> context = Context::create();
};

TEST_P(MatmulTest, Plain) {
  checkMatmul(*context, simpleCase(dtype(), 1, 5, 7, 3));
  checkMatmul(*context, simpleCase(dtype(), 1, 64, 128, 32));
}

TEST_P(MatmulTest, Batched) {
  checkMatmul(*context, simpleCase(dtype(), 4, 9, 17, 11));
}

TEST_P(MatmulTest, TransposedOperands) {
  checkMatmul(*context, simpleCase(dtype(), 2, 6, 5, 4, true, false));
  checkMatmul(*context, simpleCase(dtype(), 2, 6, 5, 4, false, true));
  checkMatmul(*context, simpleCase(dtype(), 3, 33, 19, 7, true, true));
}

TEST_P(MatmulTest, StridedOperands) {
  // A: every other column of a [2, 6, 2*5 + 3] buffer, starting at offset 1.
  MatmulCase mc = simpleCase(dtype(), 2, 6, 5, 4);
  mc.a.sizes = {2, 6, 5};
  mc.a.strides = {6 * 13, 13, 2};
  mc.a.offset = 1;
  // B: a [2, 5, 4] block inside a padded [2, 8, 9] buffer.
  mc.b.sizes = {2, 5, 4};
  mc.b.strides = {8 * 9, 9, 1};
  mc.b.offset = 10;
  checkMatmul(*context, mc);
  // Strided and transposed together.
  MatmulCase t = simpleCase(dtype(), 2, 3, 4, 5, true, true);
  t.a.strides = {40, 10, 2};     // stored [2, 4, 3]
  t.b.strides = {0 + 60, 12, 2}; // stored [2, 5, 4]
  checkMatmul(*context, t);
}

TEST_P(MatmulTest, BroadcastAndUnitStrides) {
  // A batch stride of 0 (one matrix shared by the batch) is not a layout
  // oneDNN takes; the runtime copies it first.
  MatmulCase mc = simpleCase(dtype(), 3, 4, 5, 6);
  mc.a.strides = {0, 5, 1};
  checkMatmul(*context, mc);
  // Arbitrary strides on size-1 dims do not matter.
  MatmulCase unit = simpleCase(dtype(), 1, 1, 8, 3);
  unit.a.strides = {1, 1, 1};
  checkMatmul(*context, unit);
}

TEST_P(MatmulTest, TransposedOutputLayout) {
  // C stored as [B, N, M] (column-major matrices).
  MatmulCase mc = simpleCase(dtype(), 2, 5, 6, 3);
  mc.cStrides = {15, 1, 5};
  checkMatmul(*context, mc);
}

TEST_P(MatmulTest, ZeroSizes) {
  expectCalls = false; // empty products, or zeros (k = 0)
  checkMatmul(*context, simpleCase(dtype(), 0, 3, 4, 5));
  checkMatmul(*context, simpleCase(dtype(), 2, 0, 4, 5));
  checkMatmul(*context, simpleCase(dtype(), 2, 3, 4, 0));
  checkMatmul(*context, simpleCase(dtype(), 2, 3, 0, 5)); // zeros
}

TEST_P(MatmulTest, ManyShapesAndLayouts) {
  // Rows, columns and depths from 1 up, A and B each plain or transposed
  // (dnnl_sgemm's 'N' and 'T', and the primitive's strided descriptors),
  // batched.
  for (int64_t m : {1, 2, 3, 4, 5, 9})
    for (int64_t n : {1, 3, 16, 35})
      for (int64_t k : {1, 5, 40})
        for (bool transA : {false, true})
          for (bool transB : {false, true})
            checkMatmul(*context,
                        simpleCase(dtype(), 2, m, k, n, transA, transB),
                        static_cast<uint32_t>(m * 1000 + n * 10 + k));
}

INSTANTIATE_TEST_SUITE_P(
    DTypes, MatmulTest,
    ::testing::Values(std::make_tuple(DType::F32, MatmulPath::Library),
                      std::make_tuple(DType::F32, MatmulPath::Small),
                      std::make_tuple(DType::BF16, MatmulPath::Library),
                      std::make_tuple(DType::F16, MatmulPath::Library)),
    [](const ::testing::TestParamInfo<std::tuple<DType, MatmulPath>> &info) {
      return std::string(dtypeName(std::get<0>(info.param))) +
             (std::get<1>(info.param) == MatmulPath::Small ? "_small" : "");
    });

TEST(SmallMatmulTest, LimitCountsMultiplyAdds) {
  SmallMatmulLimitScope limit(1000);
  EXPECT_TRUE(isSmallMatmul(1, 10, 10, 10));
  EXPECT_FALSE(isSmallMatmul(1, 10, 10, 11));
  EXPECT_FALSE(isSmallMatmul(2, 10, 10, 10)); // the batch counts
  // Sizes whose product overflows int64 are not small.
  EXPECT_FALSE(isSmallMatmul(int64_t{1} << 32, int64_t{1} << 32, 2, 2));
  setSmallMatmulLimit(0);
  EXPECT_FALSE(isSmallMatmul(1, 1, 1, 1));
}

TEST(SmallMatmulTest, SmallProductsSkipTheLibrary) {
  // At the default limit, a layer's [9, 16] x [16, 32] product runs on the
  // runtime's kernel and builds no oneDNN primitive; a [256, 256] x
  // [256, 256] one goes to oneDNN.
  SmallMatmulLimitScope limit(-1);
  auto context = Context::create();
  const int64_t before = smallMatmulCalls();
  checkMatmul(*context, simpleCase(DType::F32, 1, 9, 16, 32, false, true));
  EXPECT_EQ(smallMatmulCalls(), before + 1);
  EXPECT_EQ(context->libraries().cacheSize(), 0u);
  checkMatmul(*context, simpleCase(DType::F32, 1, 256, 256, 256));
  EXPECT_EQ(smallMatmulCalls(), before + 1);
  EXPECT_EQ(context->libraries().cacheSize(), 1u);
}

TEST(MatmulCacheTest, PrimitivesAreReusedPerShape) {
  SmallMatmulLimitScope libraryOnly(0); // primitives are what is tested
  auto context = Context::create();
  checkMatmul(*context, simpleCase(DType::F32, 1, 5, 7, 3));
  const size_t size = context->libraries().cacheSize();
  EXPECT_EQ(size, 1u);
  checkMatmul(*context, simpleCase(DType::F32, 1, 5, 7, 3), 2);
  EXPECT_EQ(context->libraries().cacheSize(), size);
  checkMatmul(*context, simpleCase(DType::F32, 1, 5, 8, 3));
  EXPECT_EQ(context->libraries().cacheSize(), size + 1);
}

TEST(MatmulCacheTest, CacheEvictsLeastRecentlyUsed) {
  auto context = Context::create();
  Context::LibraryState &state = context->libraries();
  const size_t capacity = Context::LibraryState::cacheCapacity;
  auto entry = std::make_shared<CachedPrimitive>();
  for (size_t i = 0; i < capacity; ++i)
    state.insert("key" + std::to_string(i), entry);
  EXPECT_EQ(state.cacheSize(), capacity);
  ASSERT_NE(state.lookup("key0"), nullptr); // now the most recently used
  state.insert("one more", entry);
  EXPECT_EQ(state.cacheSize(), capacity);
  EXPECT_NE(state.lookup("key0"), nullptr);
  EXPECT_EQ(state.lookup("key1"), nullptr); // evicted
  EXPECT_NE(state.lookup("one more"), nullptr);
  // Inserting an existing key keeps the first entry.
  auto other = std::make_shared<CachedPrimitive>();
  EXPECT_EQ(state.insert("key0", other), entry);
}

TEST(MatmulCacheTest, ConcurrentCalls) {
  SmallMatmulLimitScope libraryOnly(0); // primitives are what is tested
  auto context = Context::create();
  auto work = [&](int seed) {
    for (int i = 0; i < 20; ++i)
      checkMatmul(*context, simpleCase(DType::F32, 2, 8 + i % 3, 16, 4),
                  seed + i);
  };
  std::thread t1(work, 0), t2(work, 100);
  t1.join();
  t2.join();
  EXPECT_EQ(context->allocator().stats().bytesInUse, 0u);
}

TEST(MatmulCacheTest, PrimitiveCreatedOnOneThreadRunsOnAnother) {
  SmallMatmulLimitScope libraryOnly(0); // primitives are what is tested
  // Cached primitives are shared by all threads: they must not depend on
  // state of the thread that created them (see PrimitiveStep).
  auto context = Context::create();
  const MatmulCase shapes[] = {simpleCase(DType::F32, 4, 96, 80, 72),
                               simpleCase(DType::BF16, 4, 96, 80, 72),
                               simpleCase(DType::F32, 2, 9, 16, 4, true)};
  for (const MatmulCase &mc : shapes)
    checkMatmul(*context, mc, 1);
  for (int round = 0; round < 3; ++round) {
    std::thread other([&] {
      for (const MatmulCase &mc : shapes)
        checkMatmul(*context, mc, 2 + round);
    });
    other.join();
  }
}

TEST(MatmulCacheTest, ThreadOption) {
  SmallMatmulLimitScope libraryOnly(0); // primitives are what is tested
  ContextOptions options;
  options.numThreads = 1;
  auto context = Context::create(options);
  EXPECT_EQ(context->options().numThreads, 1);
#ifdef DISC_RAL_HAS_OPENMP
  const int before = omp_get_max_threads();
#endif
  checkMatmul(*context, simpleCase(DType::F32, 2, 16, 16, 16));
#ifdef DISC_RAL_HAS_OPENMP
  // The call's thread count does not leak into the calling thread.
  EXPECT_EQ(omp_get_max_threads(), before);
#endif
  options.numThreads = -1;
  EXPECT_THROW(Context::create(options), RuntimeError);
}

std::string matmulError(const MatmulCase &mc) {
  auto context = Context::create();
  std::vector<float> a(mc.a.extent() + 1), b(mc.b.extent() + 1);
  TensorView aIn{a.data(), DType::F32, {mc.a.extent()}};
  TensorView bIn{b.data(), DType::F32, {mc.b.extent()}};
  gCase = &mc;
  std::string message = "<no error>";
  try {
    invoke(*context, matmulKernel, matmulSignature(DType::F32), {aIn, bIn});
  } catch (const InvocationError &e) {
    message = e.what();
  }
  EXPECT_EQ(context->allocator().stats().bytesInUse, 0u);
  return message;
}

TEST(MatmulErrorTest, MismatchedContractionSize) {
  MatmulCase mc = simpleCase(DType::F32, 1, 2, 3, 5);
  mc.b = contiguousView({1, 4, 5}); // K = 4, but A has K = 3
  std::string message = matmulError(mc);
  EXPECT_NE(message.find("disc_ral_matmul_f32"), std::string::npos) << message;
  EXPECT_NE(message.find("contraction sizes differ (3 vs 4)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("A is [1, 2, 3]"), std::string::npos) << message;
}

TEST(MatmulErrorTest, MismatchedBatchAndOutput) {
  MatmulCase batch = simpleCase(DType::F32, 2, 2, 3, 5);
  batch.b = contiguousView({3, 3, 5});
  EXPECT_NE(matmulError(batch).find("batch sizes differ"), std::string::npos);
  MatmulCase out = simpleCase(DType::F32, 2, 2, 3, 5);
  out.cSizes = {2, 2, 6};
  EXPECT_NE(matmulError(out).find("C must be [2, 2, 5]"), std::string::npos);
}

} // namespace
