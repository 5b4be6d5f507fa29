//===- Allocator.cpp - caching, 64-byte aligned allocator -----------------===//
//
// Sizes are rounded up to a bucket size: multiples of 64 bytes up to 4 KiB,
// above that multiples of 1/8 of the next power of two (at most 12.5%
// waste). Freed blocks go to a free list per bucket size and are handed out
// again to any request that rounds to the same bucket.
//
//===----------------------------------------------------------------------===//

#include "disc/Runtime/Runtime.h"

#include <cstdlib>
#include <limits>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace disc {
namespace ral {

namespace {
constexpr size_t kAlignment = 64;
constexpr size_t kSmallLimit = 4096;

size_t roundUp(size_t value, size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

size_t bucketSize(size_t bytes) {
  if (bytes > std::numeric_limits<size_t>::max() / 4)
    throw RuntimeError("Allocator: cannot allocate " + std::to_string(bytes) +
                       " bytes");
  if (bytes <= kSmallLimit)
    return bytes == 0 ? kAlignment : roundUp(bytes, kAlignment);
  size_t pow2 = 1;
  while (pow2 < bytes)
    pow2 <<= 1;
  return roundUp(bytes, pow2 / 8); // pow2 / 8 >= 1024: a multiple of 64
}
} // namespace

struct Allocator::Impl {
  mutable std::mutex mutex;
  std::unordered_map<void *, size_t> inUse; // block -> bucket size
  std::unordered_map<size_t, std::vector<void *>> freeLists;
  Stats stats;

  void releaseCacheLocked(std::vector<void *> &toFree) {
    for (auto &entry : freeLists)
      toFree.insert(toFree.end(), entry.second.begin(), entry.second.end());
    freeLists.clear();
    stats.bytesCached = 0;
  }
};

Allocator::Allocator() : impl(std::make_unique<Impl>()) {}

Allocator::~Allocator() {
  // Cached blocks, and (defensively) blocks never returned.
  for (auto &entry : impl->freeLists)
    for (void *ptr : entry.second)
      std::free(ptr);
  for (auto &entry : impl->inUse)
    std::free(entry.first);
}

void *Allocator::allocate(size_t bytes) {
  const size_t size = bucketSize(bytes);
  {
    std::lock_guard<std::mutex> lock(impl->mutex);
    ++impl->stats.numAllocations;
    auto it = impl->freeLists.find(size);
    if (it != impl->freeLists.end() && !it->second.empty()) {
      void *ptr = it->second.back();
      it->second.pop_back();
      impl->inUse.emplace(ptr, size);
      ++impl->stats.numCacheHits;
      impl->stats.bytesCached -= size;
      impl->stats.bytesInUse += size;
      if (impl->stats.bytesInUse > impl->stats.peakBytesInUse)
        impl->stats.peakBytesInUse = impl->stats.bytesInUse;
      return ptr;
    }
  }
  void *ptr = std::aligned_alloc(kAlignment, size);
  if (!ptr) {
    // Out of memory: give the cached blocks back and try once more.
    releaseCache();
    ptr = std::aligned_alloc(kAlignment, size);
    if (!ptr)
      throw RuntimeError("Allocator: out of memory allocating " +
                         std::to_string(bytes) + " bytes");
  }
  std::lock_guard<std::mutex> lock(impl->mutex);
  try {
    impl->inUse.emplace(ptr, size);
  } catch (...) {
    std::free(ptr);
    throw;
  }
  impl->stats.bytesInUse += size;
  if (impl->stats.bytesInUse > impl->stats.peakBytesInUse)
    impl->stats.peakBytesInUse = impl->stats.bytesInUse;
  return ptr;
}

void Allocator::deallocate(void *ptr) {
  if (!ptr)
    return;
  std::lock_guard<std::mutex> lock(impl->mutex);
  auto it = impl->inUse.find(ptr);
  if (it == impl->inUse.end())
    throw RuntimeError("Allocator: deallocate of a pointer that is not "
                       "allocated by this allocator");
  const size_t size = it->second;
  impl->freeLists[size].push_back(ptr);
  impl->inUse.erase(it);
  impl->stats.bytesInUse -= size;
  impl->stats.bytesCached += size;
}

void Allocator::releaseCache() {
  std::vector<void *> toFree;
  {
    std::lock_guard<std::mutex> lock(impl->mutex);
    impl->releaseCacheLocked(toFree);
  }
  for (void *ptr : toFree)
    std::free(ptr);
}

void Allocator::resetPeak() {
  std::lock_guard<std::mutex> lock(impl->mutex);
  impl->stats.peakBytesInUse = impl->stats.bytesInUse;
}

Allocator::Stats Allocator::stats() const {
  std::lock_guard<std::mutex> lock(impl->mutex);
  return impl->stats;
}

} // namespace ral
} // namespace disc
