//===- DimsTest.cpp - library operands' sizes and strides (Dims) ----------===//
//
// Dims keeps up to kInline values in place and the rest on the heap; it
// must behave as the std::vector<int64_t> it replaced: values kept across
// growing and shrinking through the boundary, copies independent, equality
// by value, conversions both ways.
//
//===----------------------------------------------------------------------===//

#include "Operand.h"
#include "StridedCopy.h"

#include <gtest/gtest.h>

#include <vector>

using disc::ral::Dims;

namespace {

std::vector<int64_t> iota(size_t n) {
  std::vector<int64_t> values(n);
  for (size_t i = 0; i < n; ++i)
    values[i] = static_cast<int64_t>(i) * 3 - 5;
  return values;
}

TEST(Dims, HoldsAnyRankAndConvertsBothWays) {
  for (size_t n : {size_t(0), size_t(1), Dims::kInline, Dims::kInline + 1,
                   size_t(40)}) {
    const std::vector<int64_t> values = iota(n);
    Dims dims = values;
    ASSERT_EQ(dims.size(), n);
    EXPECT_EQ(dims.empty(), n == 0);
    EXPECT_EQ(std::vector<int64_t>(dims), values) << n;
    Dims assigned;
    assigned.assign(values.data(), values.data() + n);
    EXPECT_EQ(assigned, dims) << n;
    EXPECT_EQ(disc::ral::numElements(dims),
              disc::ral::numElements(values)) << n;
    EXPECT_EQ(disc::ral::contiguousStrides(dims),
              disc::ral::contiguousStrides(values)) << n;
  }
}

TEST(Dims, ResizeKeepsValuesThroughTheInlineBoundary) {
  const std::vector<int64_t> values = iota(Dims::kInline);
  Dims dims = values;
  dims.resize(Dims::kInline + 4, 7); // in place -> heap
  for (size_t i = 0; i < Dims::kInline; ++i)
    EXPECT_EQ(dims[i], values[i]);
  for (size_t i = Dims::kInline; i < dims.size(); ++i)
    EXPECT_EQ(dims[i], 7);
  dims[Dims::kInline - 1] = 99;
  dims.resize(3); // heap -> in place
  EXPECT_EQ(std::vector<int64_t>(dims),
            std::vector<int64_t>(values.begin(), values.begin() + 3));
  dims.resize(5, -1); // in place, growing
  EXPECT_EQ(dims[3], -1);
  EXPECT_EQ(dims[4], -1);
}

TEST(Dims, CopiesAreIndependentAndCompareByValue) {
  for (size_t n : {size_t(3), size_t(12)}) {
    Dims a = iota(n);
    Dims b = a;
    EXPECT_EQ(a, b);
    b[n - 1] += 1;
    EXPECT_NE(a, b);
    EXPECT_EQ(a[n - 1], iota(n)[n - 1]);
    Dims moved = std::move(b);
    EXPECT_EQ(moved[n - 1], iota(n)[n - 1] + 1);
    EXPECT_TRUE(b.empty()); // NOLINT: what a moved-from Dims holds
    Dims assigned;
    assigned = std::move(moved);
    EXPECT_EQ(assigned[n - 1], iota(n)[n - 1] + 1);
    EXPECT_TRUE(moved.empty()); // NOLINT
    // Assigning a Dims its own values (same size) keeps them.
    assigned.assign(assigned.begin(), assigned.end());
    EXPECT_EQ(assigned[0], iota(n)[0]);
    EXPECT_NE(Dims(iota(n)), Dims(iota(n + 1))); // a prefix is not equal
    EXPECT_TRUE(Dims({1, 2}) == std::vector<int64_t>({1, 2}));
  }
}

} // namespace
