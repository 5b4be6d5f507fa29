//===- ThreadScratchTest.cpp - disc_ral_thread_scratch --------------------===//

#include "disc/Runtime/RalApi.h"
#include "disc/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <thread>

using namespace disc::ral;

namespace {

bool aligned64(void *p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }

TEST(ThreadScratch, SameSlotReusesItsBufferAndGrows) {
  // Slots this test owns (other tests may have used low ones on this thread).
  constexpr int64_t slot = 40;
  auto *first = static_cast<char *>(disc_ral_thread_scratch(slot, 100));
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(aligned64(first));
  std::memset(first, 7, 100);
  // A smaller or equal request: the same memory.
  EXPECT_EQ(disc_ral_thread_scratch(slot, 10), first);
  EXPECT_EQ(disc_ral_thread_scratch(slot, 100), first);
  // A larger one: at least that many writable, aligned bytes.
  auto *grown = static_cast<char *>(disc_ral_thread_scratch(slot, 1 << 20));
  EXPECT_TRUE(aligned64(grown));
  std::memset(grown, 1, 1 << 20);
  // Zero bytes is a valid request (an empty row).
  EXPECT_NE(disc_ral_thread_scratch(slot + 1, 0), nullptr);
}

TEST(ThreadScratch, SlotsAndThreadsAreDistinct) {
  constexpr int64_t slotA = 50, slotB = 51;
  void *a = disc_ral_thread_scratch(slotA, 256);
  void *b = disc_ral_thread_scratch(slotB, 256);
  EXPECT_NE(a, b) << "two slots of one thread must not share memory";
  void *other = nullptr;
  int64_t bytesWhileOtherThreadHeldIt = 0;
  const int64_t before = threadScratchBytes();
  std::thread worker([&] {
    other = disc_ral_thread_scratch(slotA, 1 << 16);
    std::memset(other, 3, 1 << 16);
    bytesWhileOtherThreadHeldIt = threadScratchBytes();
  });
  worker.join();
  EXPECT_NE(other, a) << "two threads must not share a slot's memory";
  // The worker's buffer was counted while it lived and left the count when
  // the thread exited.
  EXPECT_GE(bytesWhileOtherThreadHeldIt - before, int64_t(1) << 16);
  EXPECT_EQ(threadScratchBytes(), before);
}

TEST(ThreadScratchDeathTest, NegativeArgumentsAbortWithAMessage) {
  EXPECT_DEATH(disc_ral_thread_scratch(-1, 8), "negative argument");
  EXPECT_DEATH(disc_ral_thread_scratch(0, -8), "negative argument");
}

} // namespace
