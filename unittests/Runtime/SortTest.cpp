//===- SortTest.cpp - the runtime's stable sort (runSort) -----------------===//
//
// runSort on hand-built memref descriptors: order with NaN and ties, the
// strided input, descending, a middle dimension, and the error paths
// (message naming the entry point, no exception escaping).
//
//===----------------------------------------------------------------------===//

#include "ExecutionContext.h"
#include "Sort.h"

#include "disc/Runtime/RalApi.h"
#include "disc/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace disc::ral;

namespace {

/// A rank-`R` descriptor {allocated, aligned, offset, sizes[R], strides[R]}.
template <int R> struct Descriptor {
  void *allocated, *aligned;
  int64_t offset, sizes[R], strides[R];
};

template <int R>
Descriptor<R> descriptor(void *data, std::vector<int64_t> sizes,
                         std::vector<int64_t> strides) {
  Descriptor<R> d{data, data, 0, {}, {}};
  for (int i = 0; i < R; ++i) {
    d.sizes[i] = sizes[i];
    d.strides[i] = strides[i];
  }
  return d;
}

struct SortTest : ::testing::Test {
  std::shared_ptr<Context> context = Context::create();
  ExecutionContext ectx{*context};
};

TEST_F(SortTest, NanIsGreatestAndTiesKeepTheirOrder) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> in = {2, nan, 1, 2, -1, nan, 1};
  std::vector<float> values(7);
  std::vector<int64_t> indices(7);
  auto dIn = descriptor<1>(in.data(), {7}, {1});
  auto dValues = descriptor<1>(values.data(), {7}, {1});
  auto dIndices = descriptor<1>(indices.data(), {7}, {1});
  UnrankedMemRef mIn{1, &dIn}, mValues{1, &dValues}, mIndices{1, &dIndices};
  ASSERT_TRUE(runSort(ectx, DType::F32, "sort", &mIn, &mValues, &mIndices, 0,
                      /*descending=*/false));
  EXPECT_EQ(indices, (std::vector<int64_t>{4, 2, 6, 0, 3, 1, 5}));
  EXPECT_TRUE(std::isnan(values[5]) && std::isnan(values[6]));
  ASSERT_TRUE(runSort(ectx, DType::F32, "sort", &mIn, &mValues, &mIndices, 0,
                      /*descending=*/true));
  EXPECT_EQ(indices, (std::vector<int64_t>{1, 5, 0, 3, 2, 6, 4}));
}

TEST_F(SortTest, StridedInputAlongTheMiddleDim) {
  // in[i][j][k] of sizes [2, 3, 2], read transposed from a [3, 2, 2]
  // buffer: strides {2, 4, 1}.
  std::vector<int64_t> buffer(12);
  for (int64_t i = 0; i < 12; ++i)
    buffer[i] = (i * 7) % 5 - 2;
  std::vector<int64_t> values(12), indices(12);
  auto dIn = descriptor<3>(buffer.data(), {2, 3, 2}, {2, 4, 1});
  auto dValues = descriptor<3>(values.data(), {2, 3, 2}, {6, 2, 1});
  auto dIndices = descriptor<3>(indices.data(), {2, 3, 2}, {6, 2, 1});
  UnrankedMemRef mIn{3, &dIn}, mValues{3, &dValues}, mIndices{3, &dIndices};
  ASSERT_TRUE(runSort(ectx, DType::I64, "sort", &mIn, &mValues, &mIndices, 1,
                      false));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t k = 0; k < 2; ++k)
      for (int64_t j = 0; j < 3; ++j) {
        int64_t from = indices[i * 6 + j * 2 + k];
        EXPECT_EQ(values[i * 6 + j * 2 + k], buffer[i * 2 + from * 4 + k]);
        if (j > 0)
          EXPECT_LE(values[i * 6 + (j - 1) * 2 + k], values[i * 6 + j * 2 + k]);
      }
}

TEST_F(SortTest, BadOperandsAreErrorsNamingTheCall) {
  std::vector<int32_t> in(4), values(5);
  std::vector<int64_t> indices(4);
  auto dIn = descriptor<1>(in.data(), {4}, {1});
  auto dValues = descriptor<1>(values.data(), {5}, {1});
  auto dIndices = descriptor<1>(indices.data(), {4}, {1});
  UnrankedMemRef mIn{1, &dIn}, mValues{1, &dValues}, mIndices{1, &dIndices};
  EXPECT_FALSE(runSort(ectx, DType::I32, "disc_ral_sort_i32", &mIn, &mValues,
                       &mIndices, 0, false));
  EXPECT_NE(ectx.errorMessage.find("disc_ral_sort_i32: values [5]"),
            std::string::npos)
      << ectx.errorMessage;
  EXPECT_FALSE(runSort(ectx, DType::I32, "disc_ral_sort_i32", &mIn, &mIn,
                       &mIndices, 1, false));
  EXPECT_NE(ectx.errorMessage.find("dimension 1 is out of range"),
            std::string::npos)
      << ectx.errorMessage;
}

} // namespace
