//===- DeviceBlockReuseTest.cpp - a cuda call's freed blocks --------------===//
//
// The blocks a cuda call frees serve its later requests
// (lib/Runtime/Cuda/CudaRal.cpp): which request takes which block, what
// goes back to the allocator when, and that nothing is left at the end.
// The allocator records every call; no driver is needed.
//
//===----------------------------------------------------------------------===//
#include "Cuda/CudaRal.h"
#include "ExecutionContext.h"

#include "disc/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

using namespace disc::ral;

namespace {

class RecordingAllocator final : public DeviceAllocator {
public:
  void *allocate(size_t bytes, void *stream) override {
    EXPECT_EQ(stream, kStream);
    ++allocations;
    void *ptr = std::malloc(bytes);
    live[ptr] = bytes;
    liveBytes += bytes;
    peakBytes = std::max(peakBytes, liveBytes);
    return ptr;
  }
  void deallocate(void *ptr, void *stream) noexcept override {
    EXPECT_EQ(stream, kStream);
    ++frees;
    auto it = live.find(ptr);
    EXPECT_NE(it, live.end()) << "a pointer freed twice or never allocated";
    if (it == live.end())
      return;
    liveBytes -= it->second;
    live.erase(it);
    std::free(ptr);
  }

  static inline void *const kStream = reinterpret_cast<void *>(0x5157);
  int64_t allocations = 0, frees = 0;
  size_t liveBytes = 0, peakBytes = 0;
  std::map<void *, size_t> live;
};

class DeviceBlockReuse : public ::testing::Test {
protected:
  void SetUp() override {
    ectx.device = Device::Cuda;
    ectx.cudaStream = RecordingAllocator::kStream;
    ectx.deviceAllocator = &allocator;
  }
  void *allocate(int64_t bytes) {
    void *ptr = allocateDeviceForCall(&ectx, bytes);
    EXPECT_NE(ptr, nullptr) << ectx.errorMessage;
    return ptr;
  }
  void free(void *ptr) { releaseDeviceForCall(ectx, ptr); }

  RecordingAllocator allocator;
  std::shared_ptr<Context> context = Context::create();
  ExecutionContext ectx{*context};
};

TEST_F(DeviceBlockReuse, RequestsAreRoundedAndAFreedBlockServesItsSize) {
  void *a = allocate(1000);
  EXPECT_EQ(allocator.live[a], 1024u);
  void *zero = allocate(0); // a block of its own all the same
  EXPECT_EQ(allocator.live[zero], 512u);
  free(a);
  EXPECT_EQ(allocator.frees, 0);
  EXPECT_EQ(allocate(1024), a); // the same rounded size
  EXPECT_EQ(allocator.allocations, 2);
}

TEST_F(DeviceBlockReuse, AKeptBlockAtMostTwiceTheRequestServesIt) {
  void *big = allocate(4096);
  void *mid = allocate(2560);
  free(big);
  free(mid);
  // The smallest block that holds it: 2560 for 2048, not 4096.
  EXPECT_EQ(allocate(2048), mid);
  // 4096 is more than twice 1536: a new block.
  void *small = allocate(1536);
  EXPECT_NE(small, big);
  EXPECT_EQ(allocate(2048), big); // exactly twice
  EXPECT_EQ(allocator.allocations, 3);
}

TEST_F(DeviceBlockReuse, TheMostRecentlyFreedOfEqualBlocksFirst) {
  void *first = allocate(800 << 10);
  void *second = allocate(800 << 10);
  free(first);
  free(second);
  EXPECT_EQ(allocate(800 << 10), second);
  EXPECT_EQ(allocate(800 << 10), first);
}

TEST_F(DeviceBlockReuse, ALargeMissReturnsTheLargeKeptBlocksFirst) {
  void *large = allocate(1 << 20);
  void *small = allocate(1 << 10);
  free(large);
  free(small);
  // 4 MiB: no kept block serves it. The 1 MiB block goes back before the
  // new one is asked for (the allocator may reuse its memory); the small
  // one stays.
  allocate(4 << 20);
  EXPECT_EQ(allocator.frees, 1);
  EXPECT_EQ(allocator.live.count(large), 0u);
  EXPECT_EQ(allocator.peakBytes, size_t(4 << 20) + (1 << 10));
  // A small miss returns nothing.
  allocate(16 << 10);
  EXPECT_EQ(allocator.frees, 1);
  EXPECT_EQ(allocate(1 << 10), small);
}

TEST_F(DeviceBlockReuse, EverythingGoesBackWhenTheCallEnds) {
  void *a = allocate(3000);
  void *b = allocate(70 << 10);
  allocate(5);
  free(a);
  free(b);
  ectx.releaseAll(); // what ~ExecutionContext does
  EXPECT_EQ(allocator.frees, allocator.allocations);
  EXPECT_TRUE(allocator.live.empty());
  EXPECT_TRUE(ectx.freedDeviceBlocks.empty());
}

TEST_F(DeviceBlockReuse, OffEveryFreeGoesToTheAllocator) {
  ectx.reuseDeviceBlocks = false;
  void *a = allocate(1024);
  free(a);
  EXPECT_EQ(allocator.frees, 1);
  allocate(1024);
  EXPECT_EQ(allocator.allocations, 2);
  ectx.releaseAll();
  EXPECT_TRUE(allocator.live.empty());
}

TEST_F(DeviceBlockReuse, TheCountsAreProcessWide) {
  const DeviceBlockStats before = deviceBlockStats();
  void *a = allocate(1024);
  free(a);
  allocate(1024);
  const DeviceBlockStats after = deviceBlockStats();
  EXPECT_EQ(after.allocations - before.allocations, 1);
  EXPECT_EQ(after.reused - before.reused, 1);
}

TEST_F(DeviceBlockReuse, TheSettingIsZeroOrOne) {
  unsetenv("DISC_CUDA_REUSE_BLOCKS");
  EXPECT_TRUE(reuseDeviceBlocksSetting());
  setenv("DISC_CUDA_REUSE_BLOCKS", "0", 1);
  EXPECT_FALSE(reuseDeviceBlocksSetting());
  setenv("DISC_CUDA_REUSE_BLOCKS", "2", 1);
  try {
    reuseDeviceBlocksSetting();
    ADD_FAILURE() << "DISC_CUDA_REUSE_BLOCKS=2 accepted";
  } catch (const RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find("DISC_CUDA_REUSE_BLOCKS='2'"),
              std::string::npos)
        << e.what();
  }
  unsetenv("DISC_CUDA_REUSE_BLOCKS");
}

} // namespace
