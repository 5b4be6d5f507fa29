//===- ThreadScratch.cpp - per-thread scratch buffers for loop bodies -----===//
//
// A loop body's temporary of a dynamic size (a stitch kernel's row buffer)
// comes from here instead of disc_ral_alloc: one request per row would be a
// trip through the caching allocator per row, and the allocator's per-call
// bookkeeping is not made for the worker threads that run parallel bodies.
// Each thread keeps one buffer per slot, grown on demand and reused by every
// later request; nothing is freed before the thread exits.
//
//===----------------------------------------------------------------------===//

#include "disc/Runtime/RalApi.h"
#include "disc/Runtime/Runtime.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

namespace disc {
namespace ral {
namespace {

constexpr int64_t kScratchAlignment = 64;

struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};

struct ScratchBuffer {
  std::unique_ptr<void, FreeDeleter> data;
  int64_t capacity = 0;
};

std::atomic<int64_t> scratchBytes{0};

/// One thread's buffers; what they hold leaves the count when it exits.
struct ThreadScratchBuffers {
  std::vector<ScratchBuffer> slots;
  ~ThreadScratchBuffers() {
    for (const ScratchBuffer &buffer : slots)
      scratchBytes.fetch_sub(buffer.capacity);
  }
};

thread_local ThreadScratchBuffers threadScratch;

} // namespace

int64_t threadScratchBytes() { return scratchBytes.load(); }

} // namespace ral
} // namespace disc

extern "C" void *disc_ral_thread_scratch(int64_t slot, int64_t bytes) {
  using namespace disc::ral;
  if (slot < 0 || bytes < 0) {
    std::fprintf(stderr,
                 "disc runtime: disc_ral_thread_scratch(slot %lld, %lld "
                 "bytes): negative argument\n",
                 static_cast<long long>(slot), static_cast<long long>(bytes));
    std::abort();
  }
  std::vector<ScratchBuffer> &slots = threadScratch.slots;
  if (static_cast<size_t>(slot) >= slots.size())
    slots.resize(slot + 1);
  ScratchBuffer &buffer = slots[slot];
  if (buffer.capacity < bytes || !buffer.data) {
    // Grow by half again, so a slowly growing row length reallocates rarely.
    int64_t capacity = std::max<int64_t>(bytes, buffer.capacity * 3 / 2);
    capacity = (std::max<int64_t>(capacity, 1) + kScratchAlignment - 1) /
               kScratchAlignment * kScratchAlignment;
    void *data = std::aligned_alloc(kScratchAlignment, capacity);
    if (!data) {
      // Called from compiled loops (maybe on a worker thread) that cannot
      // unwind: out of memory here ends the process with a message.
      std::fprintf(stderr,
                   "disc runtime: out of memory for a %lld-byte loop "
                   "scratch buffer\n",
                   static_cast<long long>(capacity));
      std::abort();
    }
    scratchBytes.fetch_add(capacity - buffer.capacity);
    buffer.data.reset(data);
    buffer.capacity = capacity;
  }
  return buffer.data.get();
}
