//===- ParallelForTest.cpp - disc_ral_parallel_for ------------------------===//

#include "disc/Runtime/RalApi.h"
#include "disc/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <vector>

using namespace disc::ral;

namespace {

TEST(ParallelFor, ThreadsForWork) {
  // Tiny work or a single unit: the calling thread.
  EXPECT_EQ(threadsForWork(1, int64_t(1) << 30, 8), 1);
  EXPECT_EQ(threadsForWork(100, 1, 8), 1);
  EXPECT_EQ(threadsForWork(1000, 1000, 1), 1);
  EXPECT_EQ(threadsForWork(0, 1000, 8), 1);
  // Enough work: every thread, but never more threads than units.
  EXPECT_EQ(threadsForWork(1000, 1000, 2), 2);
  EXPECT_EQ(threadsForWork(3, int64_t(1) << 20, 8), 3);
  // Just enough for two threads of 32768 elements each.
  EXPECT_EQ(threadsForWork(65536, 1, 8), 2);
  // No overflow for huge products.
  EXPECT_EQ(threadsForWork(INT64_MAX / 2, INT64_MAX / 2, 4), 4);
}

struct Range {
  std::vector<std::atomic<int>> *hits;
};

void markUnits(void *args, int64_t lo, int64_t hi) {
  auto *range = static_cast<Range *>(args);
  for (int64_t i = lo; i < hi; ++i)
    (*range->hits)[i].fetch_add(1);
}

void runAndCheck(int64_t units, int64_t work, int threads) {
  std::vector<std::atomic<int>> hits(units);
  Range range{&hits};
  ParallelStats before = parallelStats();
  {
    ThreadsForCall scope(threads);
    disc_ral_parallel_for(&markUnits, &range, units, work);
  }
  ParallelStats after = parallelStats();
  for (int64_t i = 0; i < units; ++i)
    ASSERT_EQ(hits[i].load(), 1) << "unit " << i << " of " << units;
  bool parallel = threadsForWork(units, work, threads) > 1;
  EXPECT_EQ(after.parallelLaunches - before.parallelLaunches, parallel ? 1 : 0);
  EXPECT_EQ(after.serialRuns - before.serialRuns, parallel ? 0 : 1);
}

TEST(ParallelFor, EveryUnitRunsOnceInBothVariants) {
  runAndCheck(1, 1, 2);          // serial
  runAndCheck(10, 10, 2);        // serial
  runAndCheck(7, 100000, 2);     // parallel, uneven split
  runAndCheck(7, 100000, 3);     // parallel, 3 threads
  runAndCheck(100003, 1000, 4);  // parallel, remainder units
}

TEST(ParallelFor, EmptyRangeDoesNothing) {
  ParallelStats before = parallelStats();
  disc_ral_parallel_for(&markUnits, nullptr, 0, 1000);
  ParallelStats after = parallelStats();
  EXPECT_EQ(after.parallelLaunches, before.parallelLaunches);
  EXPECT_EQ(after.serialRuns, before.serialRuns);
}

} // namespace
