//===- InvokeTest.cpp - invoke() with hand-written packed kernels ---------===//
//
// The kernels below follow the packed ABI of Runtime.h exactly as compiled
// code does, and (like compiled code) keep no C++ objects with destructors
// alive when they call a RAL function that may fail.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "disc/Runtime/RalApi.h"
#include "disc/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>

using namespace disc::ral;
using namespace disc::ral::test;

namespace {

ArgSpec arg(std::string name, DType dtype, std::vector<int64_t> dims) {
  ArgSpec spec;
  spec.name = std::move(name);
  spec.dtype = dtype;
  spec.dims = std::move(dims);
  return spec;
}

TensorView input(std::vector<float> &data, std::vector<int64_t> shape) {
  TensorView view;
  view.data = data.data();
  view.dtype = DType::F32;
  view.shape = std::move(shape);
  return view;
}

// Inputs of rank 2: words args[1..7] = allocated, aligned, offset, size0,
// size1, stride0, stride1; the result storage is args[8].
constexpr int kRank2ResultSlot = 8;

/// (a) y = x + 1 on a rank-2 f32 tensor; y comes from disc_ral_alloc.
void addOneKernel(void **args) {
  void *ctx = ctxOf(args);
  const float *x = static_cast<const float *>(ptrOf(args, 2)) + wordOf(args, 3);
  const int64_t rows = wordOf(args, 4), cols = wordOf(args, 5);
  const int64_t stride0 = wordOf(args, 6), stride1 = wordOf(args, 7);
  float *y = static_cast<float *>(disc_ral_alloc(ctx, rows * cols * 4));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      y[i * cols + j] = x[i * stride0 + j * stride1] + 1.0f;
  writeResult(static_cast<int64_t *>(args[kRank2ResultSlot]), y, y, 0,
              {rows, cols}, {cols, 1});
}

Signature addOneSignature() {
  Signature signature;
  signature.args = {arg("%arg0", DType::F32, {-1, -1})};
  signature.results = {{DType::F32, 2}};
  return signature;
}

TEST(InvokeTest, AddOneOwnsItsOutput) {
  auto context = Context::create();
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  std::vector<OutputTensor> outputs =
      invoke(*context, addOneKernel, addOneSignature(), {input(x, {2, 3})});
  ASSERT_EQ(outputs.size(), 1u);
  const OutputTensor &y = outputs[0];
  EXPECT_EQ(y.dtype, DType::F32);
  EXPECT_EQ(y.shape, (std::vector<int64_t>{2, 3}));
  const float *values = static_cast<const float *>(y.data);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(values[i], x[i] + 1);
  EXPECT_GT(context->allocator().stats().bytesInUse, 0u);
  outputs.clear();
  EXPECT_EQ(context->allocator().stats().bytesInUse, 0u);
  // A second call reuses the cached block.
  outputs =
      invoke(*context, addOneKernel, addOneSignature(), {input(x, {2, 3})});
  EXPECT_EQ(context->allocator().stats().numCacheHits, 1u);
}

/// addOneKernel timed as the DISC_PROFILE=1 code times a kernel.
void profiledAddOneKernel(void **args) {
  void *ctx = ctxOf(args);
  disc_ral_profile_begin(ctx, "loop test_kernel at t.mlir:1:1");
  addOneKernel(args);
  disc_ral_profile_end(ctx, "loop test_kernel at t.mlir:1:1");
  disc_ral_profile_begin(ctx, "copy at t.mlir:2:1");
  disc_ral_profile_end(ctx, "copy at t.mlir:2:1");
}

TEST(InvokeTest, ProfileAddsUpCallsPerName) {
  auto context = Context::create();
  resetProfile();
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  for (int i = 0; i < 3; ++i)
    invoke(*context, profiledAddOneKernel, addOneSignature(),
           {input(x, {2, 3})});
  std::vector<ProfileEntry> entries = profileEntries();
  ASSERT_EQ(entries.size(), 2u);
  for (const ProfileEntry &entry : entries) {
    EXPECT_EQ(entry.calls, 3);
    EXPECT_GE(entry.seconds, 0.0);
  }
  EXPECT_GE(entries[0].seconds, entries[1].seconds); // most time first
  EXPECT_TRUE((entries[0].name == "loop test_kernel at t.mlir:1:1" &&
               entries[1].name == "copy at t.mlir:2:1") ||
              entries[0].seconds == entries[1].seconds);
  resetProfile();
  EXPECT_TRUE(profileEntries().empty());
}

TEST(InvokeTest, OutputsKeepTheContextAlive) {
  auto context = Context::create();
  std::vector<float> x = {1, 2};
  std::vector<OutputTensor> outputs =
      invoke(*context, addOneKernel, addOneSignature(), {input(x, {1, 2})});
  std::weak_ptr<Context> weak = context;
  context.reset();
  EXPECT_FALSE(weak.expired());
  EXPECT_EQ(static_cast<float *>(outputs[0].data)[1], 3.0f);
  outputs.clear();
  EXPECT_TRUE(weak.expired());
}

TEST(InvokeTest, InputCheckFailsBeforeTheKernelRuns) {
  auto context = Context::create();
  std::vector<float> x = {1, 2};
  Signature signature = addOneSignature();
  signature.args[0].dims = {-1, 3};
  try {
    invoke(*context, addOneKernel, signature, {input(x, {1, 2})});
    FAIL() << "expected InvocationError";
  } catch (const InvocationError &e) {
    EXPECT_STREQ(e.what(), "argument 0 (%arg0) dim 1 is 2, expected 3");
  }
  EXPECT_EQ(context->allocator().stats().numAllocations, 0u);
}

/// (b) allocates a temporary and the output, frees neither.
void tempAndOutputKernel(void **args) {
  void *ctx = ctxOf(args);
  const float *x = static_cast<const float *>(ptrOf(args, 2)) + wordOf(args, 3);
  const int64_t rows = wordOf(args, 4), cols = wordOf(args, 5);
  float *temp = static_cast<float *>(disc_ral_alloc(ctx, 1000));
  float *y = static_cast<float *>(disc_ral_alloc(ctx, rows * cols * 4));
  temp[0] = 2.0f;
  for (int64_t i = 0; i < rows * cols; ++i)
    y[i] = x[i] * temp[0];
  writeResult(static_cast<int64_t *>(args[kRank2ResultSlot]), y, y, 0,
              {rows, cols}, {cols, 1});
}

TEST(InvokeTest, TemporariesAreReleasedOutputsKept) {
  auto context = Context::create();
  std::vector<float> x(16, 1.5f);
  std::vector<OutputTensor> outputs = invoke(
      *context, tempAndOutputKernel, addOneSignature(), {input(x, {4, 4})});
  // Only the 64-byte output is in use; the 1000-byte temporary is cached.
  Allocator::Stats stats = context->allocator().stats();
  EXPECT_EQ(stats.bytesInUse, 64u);
  EXPECT_EQ(stats.bytesCached, 1024u);
  EXPECT_EQ(static_cast<float *>(outputs[0].data)[15], 3.0f);
  outputs.clear();
  EXPECT_EQ(context->allocator().stats().bytesInUse, 0u);
}

/// (c) returns its input (an alias): the runtime must copy.
void identityKernel(void **args) {
  writeResult(static_cast<int64_t *>(args[kRank2ResultSlot]), ptrOf(args, 1),
              ptrOf(args, 2), wordOf(args, 3),
              {wordOf(args, 4), wordOf(args, 5)},
              {wordOf(args, 6), wordOf(args, 7)});
}

TEST(InvokeTest, AliasOfAnInputIsCopied) {
  auto context = Context::create();
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  std::vector<OutputTensor> outputs =
      invoke(*context, identityKernel, addOneSignature(), {input(x, {3, 2})});
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_NE(outputs[0].data, x.data());
  EXPECT_EQ(outputs[0].shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(std::memcmp(outputs[0].data, x.data(), 6 * sizeof(float)), 0);
  x[0] = 100; // the output does not see later changes of the input
  EXPECT_EQ(static_cast<float *>(outputs[0].data)[0], 1.0f);
  outputs.clear();
  EXPECT_EQ(context->allocator().stats().bytesInUse, 0u);
}

TEST(InvokeTest, ResultWrittenIntoItsInput) {
  auto context = Context::create();
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  InvokeOptions options;
  options.resultsInto = {0};
  std::vector<OutputTensor> outputs = invoke(
      *context, addOneKernel, addOneSignature(), {input(x, {2, 3})}, options);
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].data, nullptr); // written, not returned
  EXPECT_FALSE(outputs[0].owner);
  EXPECT_EQ(x, (std::vector<float>{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(context->allocator().stats().bytesInUse, 0u);
}

TEST(InvokeTest, ResultAliasingItsDestinationIsWrittenUnchanged) {
  // The identity returns the input itself: written into the same memory
  // after a copy (a view of an input is materialised first).
  auto context = Context::create();
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  InvokeOptions options;
  options.resultsInto = {0};
  invoke(*context, identityKernel, addOneSignature(), {input(x, {3, 2})},
         options);
  EXPECT_EQ(x, (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(context->allocator().stats().bytesInUse, 0u);
}

TEST(InvokeTest, ResultsIntoIsCheckedBeforeTheCall) {
  auto context = Context::create();
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  InvokeOptions options;
  options.resultsInto = {1}; // no argument 1
  EXPECT_THROW(invoke(*context, addOneKernel, addOneSignature(),
                      {input(x, {2, 3})}, options),
               InvocationError);
  options.resultsInto = {0, 0}; // more entries than results
  EXPECT_THROW(invoke(*context, addOneKernel, addOneSignature(),
                      {input(x, {2, 3})}, options),
               InvocationError);
  EXPECT_EQ(x, (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(context->allocator().stats().bytesInUse, 0u);
}

/// Returns the transpose of its input as a strided view of a fresh buffer.
void transposeViewKernel(void **args) {
  void *ctx = ctxOf(args);
  const float *x = static_cast<const float *>(ptrOf(args, 2)) + wordOf(args, 3);
  const int64_t rows = wordOf(args, 4), cols = wordOf(args, 5);
  float *copy = static_cast<float *>(disc_ral_alloc(ctx, rows * cols * 4));
  std::memcpy(copy, x, rows * cols * 4);
  // View [cols, rows] with strides [1, cols].
  writeResult(static_cast<int64_t *>(args[kRank2ResultSlot]), copy, copy, 0,
              {cols, rows}, {1, cols});
}

TEST(InvokeTest, NonContiguousResultIsMadeContiguous) {
  auto context = Context::create();
  std::vector<float> x = {1, 2, 3, 4, 5, 6}; // [2, 3]
  std::vector<OutputTensor> outputs = invoke(
      *context, transposeViewKernel, addOneSignature(), {input(x, {2, 3})});
  ASSERT_EQ(outputs[0].shape, (std::vector<int64_t>{3, 2}));
  const float expected[] = {1, 4, 2, 5, 3, 6};
  const float *values = static_cast<const float *>(outputs[0].data);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(values[i], expected[i]);
  // The strided buffer itself went back to the allocator.
  EXPECT_EQ(context->allocator().stats().bytesInUse, 64u);
  outputs.clear();
  EXPECT_EQ(context->allocator().stats().bytesInUse, 0u);
}

// Rank-1 input: args[1..5]; result storage args[6].
constexpr int kRank1ResultSlot = 6;

/// One dynamic rank-1 f32 argument, `results` rank-1 f32 results.
Signature rank1Signature(int results) {
  Signature signature;
  signature.args = {arg("%arg0", DType::F32, {-1})};
  signature.results.assign(results, ResultSpec{DType::F32, 1});
  return signature;
}

/// (d) returns two views of one allocation: [0, n) and [n, 2n).
void sameAllocationTwiceKernel(void **args) {
  void *ctx = ctxOf(args);
  const float *x = static_cast<const float *>(ptrOf(args, 2)) + wordOf(args, 3);
  const int64_t n = wordOf(args, 4);
  float *buffer = static_cast<float *>(disc_ral_alloc(ctx, 2 * n * 4));
  for (int64_t i = 0; i < n; ++i) {
    buffer[i] = x[i] * 10;
    buffer[n + i] = x[i] * 100;
  }
  int64_t *words = static_cast<int64_t *>(args[kRank1ResultSlot]);
  words += writeResult(words, buffer, buffer, 0, {n}, {1});
  writeResult(words, buffer, buffer, n, {n}, {1});
}

TEST(InvokeTest, SameAllocationReturnedTwice) {
  auto context = Context::create();
  Signature signature = rank1Signature(2);
  std::vector<float> x = {1, 2, 3};
  std::vector<OutputTensor> outputs =
      invoke(*context, sameAllocationTwiceKernel, signature, {input(x, {3})});
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0].owner, outputs[1].owner); // one owner per allocation
  EXPECT_EQ(static_cast<float *>(outputs[1].data),
            static_cast<float *>(outputs[0].data) + 3);
  EXPECT_EQ(context->allocator().stats().numAllocations, 1u);
  OutputTensor second = outputs[1];
  outputs.clear();
  EXPECT_GT(context->allocator().stats().bytesInUse, 0u);
  const float *values = static_cast<const float *>(second.data);
  EXPECT_EQ(values[0], 100.0f);
  EXPECT_EQ(values[2], 300.0f);
  second = OutputTensor();
  EXPECT_EQ(context->allocator().stats().bytesInUse, 0u);
}

TEST(InvokeTest, ResultWrittenIntoAnInputBesideAResultOfTheSameAllocation) {
  // Result 0 (x * 10) is written into x; result 1 (x * 100), in the same
  // allocation, is returned and keeps that allocation alive.
  auto context = Context::create();
  Signature signature = rank1Signature(2);
  std::vector<float> x = {1, 2, 3};
  InvokeOptions options;
  options.resultsInto = {0, -1};
  std::vector<OutputTensor> outputs = invoke(
      *context, sameAllocationTwiceKernel, signature, {input(x, {3})}, options);
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0].data, nullptr);
  EXPECT_FALSE(outputs[0].owner);
  EXPECT_EQ(x, (std::vector<float>{10, 20, 30}));
  const float *kept = static_cast<const float *>(outputs[1].data);
  EXPECT_EQ(kept[0], 100.0f);
  EXPECT_EQ(kept[2], 300.0f);
  EXPECT_GT(context->allocator().stats().bytesInUse, 0u);
  outputs.clear();
  EXPECT_EQ(context->allocator().stats().bytesInUse, 0u);
}

/// (d') returns one buffer twice (two equal results merged), and a view of
/// its second half that overlaps both.
void oneBufferThreeTimesKernel(void **args) {
  void *ctx = ctxOf(args);
  const float *x = static_cast<const float *>(ptrOf(args, 2)) + wordOf(args, 3);
  const int64_t n = wordOf(args, 4);
  float *buffer = static_cast<float *>(disc_ral_alloc(ctx, n * 4));
  for (int64_t i = 0; i < n; ++i)
    buffer[i] = x[i] * 10;
  int64_t *words = static_cast<int64_t *>(args[kRank1ResultSlot]);
  words += writeResult(words, buffer, buffer, 0, {n}, {1});
  words += writeResult(words, buffer, buffer, 0, {n}, {1});
  writeResult(words, buffer, buffer, n / 2, {n - n / 2}, {1});
}

TEST(InvokeTest, OverlappingResultsShareOnlyWithinAShareGroup) {
  auto context = Context::create();
  Signature signature = rank1Signature(3);
  std::vector<float> x = {1, 2, 3, 4};
  auto check = [](const std::vector<OutputTensor> &outputs) {
    ASSERT_EQ(outputs.size(), 3u);
    for (int r = 0; r < 2; ++r)
      for (int i = 0; i < 4; ++i)
        EXPECT_EQ(static_cast<const float *>(outputs[r].data)[i], 10.0f * (i + 1));
    EXPECT_EQ(static_cast<const float *>(outputs[2].data)[0], 30.0f);
    EXPECT_EQ(static_cast<const float *>(outputs[2].data)[1], 40.0f);
  };
  // Default: no two results share memory; the first keeps the buffer.
  std::vector<OutputTensor> outputs =
      invoke(*context, oneBufferThreeTimesKernel, signature, {input(x, {4})});
  check(outputs);
  EXPECT_NE(outputs[0].data, outputs[1].data);
  EXPECT_NE(outputs[2].data,
            static_cast<char *>(outputs[0].data) + 2 * sizeof(float));
  EXPECT_NE(outputs[2].data,
            static_cast<char *>(outputs[1].data) + 2 * sizeof(float));
  // Results 0 and 1 in one group (one value returned twice): they share;
  // result 2, in no group, still gets its own copy.
  InvokeOptions options;
  options.resultShareGroups = {0, 0, -1};
  outputs = invoke(*context, oneBufferThreeTimesKernel, signature,
                   {input(x, {4})}, options);
  check(outputs);
  EXPECT_EQ(outputs[0].data, outputs[1].data);
  EXPECT_NE(outputs[2].data,
            static_cast<char *>(outputs[0].data) + 2 * sizeof(float));
  // All three in one group (views of one base): the view shares too.
  options.resultShareGroups = {3, 3, 3};
  outputs = invoke(*context, oneBufferThreeTimesKernel, signature,
                   {input(x, {4})}, options);
  check(outputs);
  EXPECT_EQ(outputs[2].data,
            static_cast<char *>(outputs[0].data) + 2 * sizeof(float));
  outputs.clear();
  EXPECT_EQ(context->allocator().stats().bytesInUse, 0u);
}

/// (e) allocates, then reports an error.
void failingKernel(void **args) {
  void *ctx = ctxOf(args);
  void *buffer = disc_ral_alloc(ctx, 4096);
  static_cast<char *>(buffer)[0] = 1;
  if (wordOf(args, 4) != 42)
    disc_ral_fail(ctx, "disc.assert: dim 0 of %arg0 must be 42");
  writeResult(static_cast<int64_t *>(args[kRank1ResultSlot]), buffer, buffer, 0,
              {1}, {1});
}

TEST(InvokeTest, FailureBecomesInvocationErrorAndReleasesMemory) {
  auto context = Context::create();
  Signature signature;
  signature.args = {arg("%arg0", DType::F32, {-1})};
  signature.results = {{DType::F32, 1}};
  std::vector<float> x = {1, 2, 3};
  for (int attempt = 0; attempt < 3; ++attempt) {
    try {
      invoke(*context, failingKernel, signature, {input(x, {3})});
      FAIL() << "expected InvocationError";
    } catch (const InvocationError &e) {
      EXPECT_STREQ(e.what(), "disc.assert: dim 0 of %arg0 must be 42");
    }
    EXPECT_EQ(context->allocator().stats().bytesInUse, 0u);
  }
  // The same function succeeds afterwards.
  std::vector<float> big(42, 0.0f);
  std::vector<OutputTensor> outputs =
      invoke(*context, failingKernel, signature, {input(big, {42})});
  EXPECT_EQ(outputs[0].shape, (std::vector<int64_t>{1}));
}

/// (f) two results of different ranks: sum (rank 0) and a copy (rank 2).
void sumAndCopyKernel(void **args) {
  void *ctx = ctxOf(args);
  const float *x = static_cast<const float *>(ptrOf(args, 2)) + wordOf(args, 3);
  const int64_t rows = wordOf(args, 4), cols = wordOf(args, 5);
  float *sum = static_cast<float *>(disc_ral_alloc(ctx, 4));
  float *copy = static_cast<float *>(disc_ral_alloc(ctx, rows * cols * 4));
  *sum = 0;
  for (int64_t i = 0; i < rows * cols; ++i) {
    *sum += x[i];
    copy[i] = x[i];
  }
  int64_t *words = static_cast<int64_t *>(args[kRank2ResultSlot]);
  words += writeResult(words, sum, sum, 0, {}, {});
  writeResult(words, copy, copy, 0, {rows, cols}, {cols, 1});
}

TEST(InvokeTest, ResultsOfDifferentRanksIncludingRankZero) {
  auto context = Context::create();
  Signature signature = addOneSignature();
  signature.results = {{DType::F32, 0}, {DType::F32, 2}};
  std::vector<float> x = {1, 2, 3, 4};
  std::vector<OutputTensor> outputs =
      invoke(*context, sumAndCopyKernel, signature, {input(x, {2, 2})});
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_TRUE(outputs[0].shape.empty());
  EXPECT_EQ(*static_cast<float *>(outputs[0].data), 10.0f);
  EXPECT_EQ(outputs[1].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(static_cast<float *>(outputs[1].data)[3], 4.0f);
  EXPECT_NE(outputs[0].owner, outputs[1].owner);
}

/// A rank-0 input (3 words: args[1..3]) and no results.
float gScalarSeen = 0;
void scalarInputNoResultKernel(void **args) {
  gScalarSeen = *(static_cast<const float *>(ptrOf(args, 2)) + wordOf(args, 3));
}

TEST(InvokeTest, RankZeroInputAndNoResults) {
  auto context = Context::create();
  Signature signature;
  signature.args = {arg("%s", DType::F32, {})};
  std::vector<float> x = {2.5f};
  std::vector<OutputTensor> outputs =
      invoke(*context, scalarInputNoResultKernel, signature, {input(x, {})});
  EXPECT_TRUE(outputs.empty());
  EXPECT_EQ(gScalarSeen, 2.5f);
}

/// Frees a buffer early, then frees it again (an error).
void doubleFreeKernel(void **args) {
  void *ctx = ctxOf(args);
  void *a = disc_ral_alloc(ctx, 128);
  void *b = disc_ral_alloc(ctx, 0); // zero bytes: still a valid block
  disc_ral_free(ctx, a);
  disc_ral_free(ctx, b);
  disc_ral_free(ctx, nullptr); // no-op
  disc_ral_free(ctx, a);
}

TEST(InvokeTest, FreeOfAnUnknownPointerFails) {
  auto context = Context::create();
  Signature signature;
  try {
    invoke(*context, doubleFreeKernel, signature, {});
    FAIL() << "expected InvocationError";
  } catch (const InvocationError &e) {
    EXPECT_NE(std::string(e.what()).find("disc_ral_free"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(context->allocator().stats().bytesInUse, 0u);
}

/// Asks for a negative number of bytes.
void negativeAllocKernel(void **args) { disc_ral_alloc(ctxOf(args), -5); }

TEST(InvokeTest, NegativeAllocationFails) {
  auto context = Context::create();
  try {
    invoke(*context, negativeAllocKernel, Signature(), {});
    FAIL() << "expected InvocationError";
  } catch (const InvocationError &e) {
    EXPECT_NE(std::string(e.what()).find("disc_ral_alloc: negative size"),
              std::string::npos)
        << e.what();
  }
}

/// Asks for 2^50 bytes (a pad by 2^31 on each side of a float tensor is
/// 16 GiB): more than any machine here has available.
void hugeAllocKernel(void **args) {
  disc_ral_alloc(ctxOf(args), int64_t(1) << 50);
}

TEST(InvokeTest, AllocationBeyondAvailableMemoryFailsClearly) {
  // Must not reach malloc (which would overcommit, and touching the pages
  // would have the process killed): an error naming the size.
  auto context = Context::create();
  try {
    invoke(*context, hugeAllocKernel, Signature(), {});
    FAIL() << "expected InvocationError";
  } catch (const InvocationError &e) {
    EXPECT_NE(std::string(e.what()).find(
                  "disc_ral_alloc: a buffer of 1125899906842624 bytes is more "
                  "than the memory available"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(context->allocator().stats().bytesInUse, 0u);
}

TEST(InvokeTest, ConcurrentCallsOnOneContext) {
  auto context = Context::create();
  Signature failing;
  failing.args = {arg("%arg0", DType::F32, {-1})};
  failing.results = {{DType::F32, 1}};
  auto work = [&](int seed) {
    for (int i = 0; i < 500; ++i) {
      std::vector<float> x(6, static_cast<float>(seed + i));
      auto outputs =
          invoke(*context, addOneKernel, addOneSignature(), {input(x, {2, 3})});
      ASSERT_EQ(static_cast<float *>(outputs[0].data)[5], seed + i + 1.0f);
      EXPECT_THROW(invoke(*context, failingKernel, failing, {input(x, {6})}),
                   InvocationError);
    }
  };
  std::thread t1(work, 0), t2(work, 1000);
  t1.join();
  t2.join();
  EXPECT_EQ(context->allocator().stats().bytesInUse, 0u);
}

/// x += 1 computed in x's own memory, returned aliasing x (the code of an
/// entry argument with `disc.result_into = 0`); fails when x[0] is 42,
/// after writing.
void addOneInPlaceKernel(void **args) {
  float *x = static_cast<float *>(ptrOf(args, 2)) + wordOf(args, 3);
  const int64_t n = wordOf(args, 4);
  const bool fail = n > 0 && x[0] == 42.0f;
  for (int64_t i = 0; i < n; ++i)
    x[i] += 1.0f;
  if (fail)
    disc_ral_fail(ctxOf(args), "disc.assert: x[0] was 42");
  writeResult(static_cast<int64_t *>(args[kRank1ResultSlot]), x, x, 0, {n},
              {1});
}

Signature addOneInPlaceSignature() {
  Signature signature;
  signature.args = {arg("%arg0", DType::F32, {-1})};
  ResultSpec result{DType::F32, 1};
  result.intoArg = 0;
  signature.results = {result};
  return signature;
}

TEST(InvokeTest, ResultComputedInItsArgumentIsNotCopied) {
  auto context = Context::create();
  std::vector<float> x = {1, 2, 3};
  InvokeOptions options;
  options.resultsInto = {0};
  const size_t before = context->allocator().stats().numAllocations;
  std::vector<OutputTensor> outputs = invoke(
      *context, addOneInPlaceKernel, addOneInPlaceSignature(),
      {input(x, {3})}, options);
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].data, nullptr);
  EXPECT_EQ(context->allocator().stats().numAllocations, before);
  EXPECT_EQ(x, (std::vector<float>{2, 3, 4}));
  // Not named in resultsInto: the result comes back too, in a buffer of
  // its own.
  outputs = invoke(*context, addOneInPlaceKernel, addOneInPlaceSignature(),
                   {input(x, {3})});
  ASSERT_NE(outputs[0].data, nullptr);
  EXPECT_NE(outputs[0].data, static_cast<void *>(x.data()));
  EXPECT_EQ(static_cast<float *>(outputs[0].data)[2], 5.0f);
  EXPECT_EQ(x, (std::vector<float>{3, 4, 5}));
}

TEST(InvokeTest, FailureAfterAnInPlaceWriteIsNotAnInvocationError) {
  // An InvocationError promises inputs as they were (the caller may run the
  // call another way); this call wrote its argument before it failed.
  auto context = Context::create();
  std::vector<float> x = {42, 0};
  InvokeOptions options;
  options.resultsInto = {0};
  try {
    invoke(*context, addOneInPlaceKernel, addOneInPlaceSignature(),
           {input(x, {2})}, options);
    FAIL() << "expected RuntimeError";
  } catch (const InvocationError &e) {
    FAIL() << "an InvocationError: " << e.what();
  } catch (const RuntimeError &e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("x[0] was 42"), std::string::npos) << message;
    EXPECT_NE(message.find("writes result 0 into argument 0 (%arg0) in place"),
              std::string::npos)
        << message;
  }
  EXPECT_EQ(context->allocator().stats().bytesInUse, 0u);
}

TEST(InvokeTest, AnArgumentWrittenInPlaceMustNotShareMemory) {
  // The code reads %arg1 while it writes %arg0: one buffer passed as both,
  // or overlapping parts of one, is rejected before the call.
  auto context = Context::create();
  Signature signature = addOneInPlaceSignature();
  signature.args.push_back(arg("%arg1", DType::F32, {-1}));
  std::vector<float> x = {1, 2, 3, 4};
  TensorView all = input(x, {4}), tail = input(x, {2});
  tail.data = x.data() + 2;
  for (const auto &[first, second] :
       {std::make_pair(all, all), std::make_pair(all, tail),
        std::make_pair(tail, all)}) {
    try {
      invoke(*context, addOneInPlaceKernel, signature, {first, second});
      FAIL() << "expected InvocationError";
    } catch (const InvocationError &e) {
      EXPECT_NE(std::string(e.what()).find(
                    "argument 0 (%arg0) is written in place by the compiled "
                    "code and shares memory with argument 1 (%arg1)"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(x, (std::vector<float>{1, 2, 3, 4}));
}

} // namespace
