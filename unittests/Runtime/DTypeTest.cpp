//===- DTypeTest.cpp - dtype helpers, strided copies, RAL symbol table ----===//

#include "StridedCopy.h"

#include "disc/Runtime/RalApi.h"
#include "disc/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>

using namespace disc::ral;

namespace {

TEST(DTypeTest, SizesAndNames) {
  struct Case {
    DType dtype;
    size_t size;
    const char *name;
  };
  const Case cases[] = {
      {DType::F16, 2, "f16"}, {DType::BF16, 2, "bf16"}, {DType::F32, 4, "f32"},
      {DType::F64, 8, "f64"}, {DType::I1, 1, "i1"},     {DType::I8, 1, "i8"},
      {DType::I16, 2, "i16"}, {DType::I32, 4, "i32"},   {DType::I64, 8, "i64"},
      {DType::U8, 1, "ui8"},
  };
  for (const Case &c : cases) {
    EXPECT_EQ(dtypeSize(c.dtype), c.size) << c.name;
    EXPECT_STREQ(dtypeName(c.dtype), c.name);
  }
  EXPECT_THROW(dtypeSize(static_cast<DType>(200)), RuntimeError);
}

TEST(DTypeTest, ErrorHierarchy) {
  try {
    throw InvocationError("boom");
  } catch (const RuntimeError &e) {
    EXPECT_STREQ(e.what(), "boom");
  }
}

TEST(StridedCopyTest, ContiguityIgnoresUnitDimsAndEmptyTensors) {
  const int64_t sizes[] = {2, 1, 3};
  const int64_t contiguous[] = {3, 99, 1};
  EXPECT_TRUE(isRowMajorContiguous(sizes, contiguous, 3));
  const int64_t transposed[] = {1, 3, 2};
  EXPECT_FALSE(isRowMajorContiguous(sizes, transposed, 3));
  const int64_t empty[] = {2, 0, 3};
  const int64_t junk[] = {7, 7, 7};
  EXPECT_TRUE(isRowMajorContiguous(empty, junk, 3));
  EXPECT_TRUE(isRowMajorContiguous(nullptr, nullptr, 0));
  EXPECT_EQ(contiguousStrides({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
}

TEST(StridedCopyTest, TransposeAndBroadcast) {
  // src is a 3x2 row-major matrix read as its 2x3 transpose.
  const int src[] = {0, 1, 2, 3, 4, 5};
  int dst[6] = {};
  const int64_t sizes[] = {2, 3};
  const int64_t srcStrides[] = {1, 2};
  const int64_t dstStrides[] = {3, 1};
  stridedCopy(dst, dstStrides, src, srcStrides, sizes, 2, sizeof(int));
  const int expected[] = {0, 2, 4, 1, 3, 5};
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(dst[i], expected[i]);
  // Broadcast one element.
  const int64_t zero[] = {0, 0};
  const int seven = 7;
  stridedCopy(dst, dstStrides, &seven, zero, sizes, 2, sizeof(int));
  for (int v : dst)
    EXPECT_EQ(v, 7);
  // Rank 0.
  int scalar = 0;
  stridedCopy(&scalar, nullptr, &seven, nullptr, nullptr, 0, sizeof(int));
  EXPECT_EQ(scalar, 7);
}

TEST(RalApiTest, MemrefCopyServesMlirsRunnerUtilityAbi) {
  // A [2, 3] transposed view copied into a contiguous [2, 3] buffer.
  float src[6] = {0, 1, 2, 3, 4, 5}; // [3, 2] row-major
  float dst[6] = {};
  int64_t srcDesc[7] = {reinterpret_cast<int64_t>(src),
                        reinterpret_cast<int64_t>(src), 0, 2, 3, 1, 2};
  int64_t dstDesc[7] = {reinterpret_cast<int64_t>(dst),
                        reinterpret_cast<int64_t>(dst), 0, 2, 3, 3, 1};
  UnrankedMemRef from{2, srcDesc}, to{2, dstDesc};
  int64_t count = 0;
  const RalSymbol *symbols = ralSymbols(&count);
  void *copy = nullptr;
  for (int64_t i = 0; i < count; ++i)
    if (std::string(symbols[i].name) == "memrefCopy")
      copy = symbols[i].address;
  ASSERT_NE(copy, nullptr);
  reinterpret_cast<void (*)(int64_t, UnrankedMemRef *, UnrankedMemRef *)>(
      copy)(sizeof(float), &from, &to);
  const float expected[6] = {0, 2, 4, 1, 3, 5};
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(dst[i], expected[i]) << i;
}

TEST(RalApiTest, Bf16TruncationsRoundToNearestEven) {
  int64_t count = 0;
  const RalSymbol *symbols = ralSymbols(&count);
  void *fromF32 = nullptr, *fromF64 = nullptr;
  for (int64_t i = 0; i < count; ++i) {
    if (std::string(symbols[i].name) == "__truncsfbf2")
      fromF32 = symbols[i].address;
    if (std::string(symbols[i].name) == "__truncdfbf2")
      fromF64 = symbols[i].address;
  }
  ASSERT_NE(fromF32, nullptr);
  ASSERT_NE(fromF64, nullptr);
  auto bitsOf = [](float reg) {
    uint32_t w;
    std::memcpy(&w, &reg, 4);
    return w;
  };
  auto f32 = reinterpret_cast<float (*)(float)>(fromF32);
  auto f64 = reinterpret_cast<float (*)(double)>(fromF64);
  EXPECT_EQ(bitsOf(f32(1.0f)), 0x3f80u);
  EXPECT_EQ(bitsOf(f32(-2.5f)), 0xc020u);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1).
  EXPECT_EQ(bitsOf(f32(1.00390625f)), 0x3f80u);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: to even.
  EXPECT_EQ(bitsOf(f32(1.01171875f)), 0x3f82u);
  EXPECT_EQ(bitsOf(f32(std::numeric_limits<float>::infinity())), 0x7f80u);
  EXPECT_EQ(bitsOf(f32(std::nanf(""))) & 0x7fc0u, 0x7fc0u);
  // Just above the tie: a double that f32 would round down to the tie
  // itself must still round up (no double rounding).
  EXPECT_EQ(bitsOf(f64(1.00390625 + 1e-12)), 0x3f81u);
  EXPECT_EQ(bitsOf(f64(1.00390625)), 0x3f80u);
  EXPECT_EQ(bitsOf(f64(1e300)), 0x7f80u);
  EXPECT_EQ(bitsOf(f64(-3.0)), 0xc040u);
}

TEST(RalApiTest, SymbolTableNamesEveryEntryPoint) {
  int64_t count = 0;
  const RalSymbol *symbols = ralSymbols(&count);
  ASSERT_EQ(count, 47);
  std::set<std::string> names;
  for (int64_t i = 0; i < count; ++i) {
    names.insert(symbols[i].name);
    EXPECT_NE(symbols[i].address, nullptr);
  }
  for (const char *name :
       {"disc_ral_alloc", "disc_ral_free", "disc_ral_fail", "disc_ral_parallel_for",
        "disc_ral_note_variant", "_mlir_ciface_disc_ral_cuda_conv_f32",
        "_mlir_ciface_disc_ral_cuda_conv_f16",
        "_mlir_ciface_disc_ral_cuda_conv_bf16",
        "_mlir_ciface_disc_ral_cuda_conv_backward_weights_f32",
        "_mlir_ciface_disc_ral_cuda_conv_backward_weights_f16",
        "_mlir_ciface_disc_ral_cuda_conv_backward_weights_bf16",
        "disc_ral_thread_scratch",
        "disc_ral_profile_begin", "disc_ral_profile_end",
        "_mlir_ciface_disc_ral_matmul_f32", "_mlir_ciface_disc_ral_matmul_f16",
        "_mlir_ciface_disc_ral_matmul_bf16", "_mlir_ciface_disc_ral_conv_f32",
        "_mlir_ciface_disc_ral_conv_f16", "_mlir_ciface_disc_ral_conv_bf16",
        "_mlir_ciface_disc_ral_conv_backward_weights_f32",
        "_mlir_ciface_disc_ral_conv_backward_weights_f16",
        "_mlir_ciface_disc_ral_conv_backward_weights_bf16",
        "_mlir_ciface_disc_ral_matmul_post_f32",
        "_mlir_ciface_disc_ral_cuda_matmul_bias_f32",
        "_mlir_ciface_disc_ral_cuda_matmul_bias_f16",
        "_mlir_ciface_disc_ral_cuda_matmul_bias_bf16",
        "_mlir_ciface_disc_ral_conv_post_f32",
        "_mlir_ciface_disc_ral_attention_f32",
        "_mlir_ciface_disc_ral_sort_f32", "_mlir_ciface_disc_ral_sort_f64",
        "_mlir_ciface_disc_ral_sort_f16", "_mlir_ciface_disc_ral_sort_bf16",
        "_mlir_ciface_disc_ral_sort_i1", "_mlir_ciface_disc_ral_sort_i8",
        "_mlir_ciface_disc_ral_sort_i16", "_mlir_ciface_disc_ral_sort_i32",
        "_mlir_ciface_disc_ral_sort_i64", "memrefCopy", "__truncsfbf2",
        "__truncdfbf2",
        "disc_ral_cuda_launch", "disc_ral_cuda_alloc", "disc_ral_cuda_free",
        "_mlir_ciface_disc_ral_cuda_matmul_f32",
        "_mlir_ciface_disc_ral_cuda_matmul_f16",
        "_mlir_ciface_disc_ral_cuda_matmul_bf16"})
    EXPECT_TRUE(names.count(name)) << name;
  for (int64_t i = 0; i < count; ++i) {
    if (std::string(symbols[i].name) == "disc_ral_alloc") {
      EXPECT_EQ(symbols[i].address, reinterpret_cast<void *>(&disc_ral_alloc));
    }
  }
}

} // namespace

TEST(RalApiTest, RowVariantsAreCountedAndUnknownIdsIgnored) {
  disc::ral::RowVariantStats before = disc::ral::rowVariantStats();
  disc_ral_note_variant(0);
  disc_ral_note_variant(1);
  disc_ral_note_variant(1);
  disc_ral_note_variant(7);
  disc_ral_note_variant(-1);
  disc::ral::RowVariantStats after = disc::ral::rowVariantStats();
  EXPECT_EQ(after.rowsPerThread - before.rowsPerThread, 1);
  EXPECT_EQ(after.rowsPerBlock - before.rowsPerBlock, 2);
}
