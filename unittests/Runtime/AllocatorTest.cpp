//===- AllocatorTest.cpp - the caching allocator --------------------------===//

#include "disc/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

using namespace disc::ral;

namespace {

bool isAligned64(const void *ptr) {
  return reinterpret_cast<uintptr_t>(ptr) % 64 == 0;
}

TEST(AllocatorTest, BlocksAre64ByteAligned) {
  Allocator allocator;
  std::vector<void *> blocks;
  for (size_t bytes : {1u, 3u, 63u, 64u, 65u, 1000u, 4097u, 100000u}) {
    void *ptr = allocator.allocate(bytes);
    ASSERT_NE(ptr, nullptr);
    EXPECT_TRUE(isAligned64(ptr)) << bytes;
    std::memset(ptr, 0xab, bytes); // the whole block is usable
    blocks.push_back(ptr);
  }
  for (void *ptr : blocks)
    allocator.deallocate(ptr);
  EXPECT_EQ(allocator.stats().bytesInUse, 0u);
}

TEST(AllocatorTest, ZeroBytesGivesAValidUniqueBlock) {
  Allocator allocator;
  void *a = allocator.allocate(0);
  void *b = allocator.allocate(0);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
  EXPECT_TRUE(isAligned64(a));
  allocator.deallocate(a);
  allocator.deallocate(b);
  EXPECT_EQ(allocator.stats().bytesInUse, 0u);
}

TEST(AllocatorTest, ReuseAfterFreeIsACacheHit) {
  Allocator allocator;
  void *a = allocator.allocate(1000);
  EXPECT_EQ(allocator.stats().numCacheHits, 0u);
  allocator.deallocate(a);
  EXPECT_GE(allocator.stats().bytesCached, 1000u);
  // 1000 and 1010 round to the same bucket.
  void *b = allocator.allocate(1010);
  EXPECT_EQ(b, a);
  Allocator::Stats stats = allocator.stats();
  EXPECT_EQ(stats.numCacheHits, 1u);
  EXPECT_EQ(stats.numAllocations, 2u);
  EXPECT_EQ(stats.bytesCached, 0u);
  allocator.deallocate(b);
}

TEST(AllocatorTest, LargeSizesUseCoarseBuckets) {
  Allocator allocator;
  void *a = allocator.allocate(1 << 20);
  allocator.deallocate(a);
  // Within 1/8 of the next power of two: the same bucket.
  void *b = allocator.allocate((1 << 20) - 1000);
  EXPECT_EQ(b, a);
  EXPECT_EQ(allocator.stats().numCacheHits, 1u);
  allocator.deallocate(b);
}

TEST(AllocatorTest, StatsTrackUseAndPeak) {
  Allocator allocator;
  void *a = allocator.allocate(64);
  void *b = allocator.allocate(128);
  Allocator::Stats stats = allocator.stats();
  EXPECT_EQ(stats.bytesInUse, 192u);
  EXPECT_EQ(stats.peakBytesInUse, 192u);
  allocator.deallocate(a);
  stats = allocator.stats();
  EXPECT_EQ(stats.bytesInUse, 128u);
  EXPECT_EQ(stats.peakBytesInUse, 192u);
  EXPECT_EQ(stats.bytesCached, 64u);
  allocator.deallocate(b);
  stats = allocator.stats();
  EXPECT_EQ(stats.bytesInUse, 0u);
  EXPECT_EQ(stats.bytesCached, 192u);
  EXPECT_EQ(stats.numAllocations, 2u);
}

TEST(AllocatorTest, ReleaseCacheEmptiesTheFreeLists) {
  Allocator allocator;
  void *a = allocator.allocate(256);
  allocator.deallocate(a);
  EXPECT_GT(allocator.stats().bytesCached, 0u);
  allocator.releaseCache();
  EXPECT_EQ(allocator.stats().bytesCached, 0u);
  void *b = allocator.allocate(256);
  EXPECT_EQ(allocator.stats().numCacheHits, 0u);
  allocator.deallocate(b);
}

TEST(AllocatorTest, DeallocateUnknownPointerThrows) {
  Allocator allocator;
  int local = 0;
  EXPECT_THROW(allocator.deallocate(&local), RuntimeError);
  void *a = allocator.allocate(8);
  allocator.deallocate(a);
  EXPECT_THROW(allocator.deallocate(a), RuntimeError); // double free
  allocator.deallocate(nullptr);                       // no-op
}

TEST(AllocatorTest, ConcurrentAllocateAndFree) {
  Allocator allocator;
  auto work = [&allocator](int seed) {
    std::vector<void *> held;
    for (int i = 0; i < 20000; ++i) {
      size_t bytes = static_cast<size_t>((i * 37 + seed * 11) % 5000);
      void *ptr = allocator.allocate(bytes);
      ASSERT_TRUE(isAligned64(ptr));
      if (bytes)
        static_cast<char *>(ptr)[bytes - 1] = static_cast<char>(seed);
      held.push_back(ptr);
      if (held.size() > 8) {
        allocator.deallocate(held.front());
        held.erase(held.begin());
      }
    }
    for (void *ptr : held)
      allocator.deallocate(ptr);
  };
  std::thread t1(work, 1), t2(work, 2);
  t1.join();
  t2.join();
  Allocator::Stats stats = allocator.stats();
  EXPECT_EQ(stats.bytesInUse, 0u);
  EXPECT_EQ(stats.numAllocations, 40000u);
  EXPECT_GT(stats.numCacheHits, 0u);
}

} // namespace
