//===- Context.cpp - state shared by all calls ----------------------------===//

#include "LibraryState.h"

#include "disc/Runtime/Runtime.h"

namespace disc {
namespace ral {

Context::LibraryState::LibraryState() : engine(dnnl::engine::kind::cpu, 0) {}

std::shared_ptr<const CachedPrimitive>
Context::LibraryState::lookup(const std::string &key) {
  std::lock_guard<std::mutex> lock(cacheMutex);
  auto it = cache.find(key);
  if (it == cache.end())
    return nullptr;
  lru.splice(lru.begin(), lru, it->second); // now most recently used
  return it->second->second;
}

std::shared_ptr<const CachedPrimitive>
Context::LibraryState::insert(const std::string &key,
                              std::shared_ptr<const CachedPrimitive> value) {
  std::lock_guard<std::mutex> lock(cacheMutex);
  auto it = cache.find(key);
  if (it != cache.end()) {
    lru.splice(lru.begin(), lru, it->second);
    return it->second->second;
  }
  lru.emplace_front(key, std::move(value));
  try {
    cache.emplace(key, lru.begin());
  } catch (...) {
    lru.pop_front();
    throw;
  }
  while (cache.size() > cacheCapacity) {
    cache.erase(lru.back().first);
    lru.pop_back();
  }
  return lru.front().second;
}

size_t Context::LibraryState::cacheSize() {
  std::lock_guard<std::mutex> lock(cacheMutex);
  return cache.size();
}

struct Context::Impl {
  ContextOptions options;
  Allocator allocator;
  std::unique_ptr<LibraryState> libraries;
};

Context::Context() : impl(std::make_unique<Impl>()) {}

Context::~Context() = default;

std::shared_ptr<Context> Context::create(const ContextOptions &options) {
  if (options.numThreads < 0)
    throw RuntimeError("Context: numThreads must be >= 0, got " +
                       std::to_string(options.numThreads));
  std::shared_ptr<Context> context(new Context());
  context->impl->options = options;
  try {
    context->impl->libraries = std::make_unique<LibraryState>();
  } catch (const dnnl::error &e) {
    throw RuntimeError(std::string("Context: cannot create the oneDNN CPU "
                                   "engine: ") +
                       e.what());
  }
  context->impl->libraries->self = context;
  // numThreads is applied per call, on the calling thread (OpenMP settings
  // are per thread): ThreadsForCall in invoke().
  return context;
}

Allocator &Context::allocator() { return impl->allocator; }

Context::LibraryState &Context::libraries() { return *impl->libraries; }

const ContextOptions &Context::options() const { return impl->options; }

} // namespace ral
} // namespace disc
