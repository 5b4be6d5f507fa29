//===- LibraryState.h - per-Context library state (private) -----*- C++ -*-===//
//
// The state a Context keeps for the library calls of RalApi.cpp: the oneDNN
// CPU engine and a cache of oneDNN primitives keyed by a string that names
// the operation, the data types, dims, strides and flags (so a primitive is
// built once per distinct shape and reused by every later call).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_LIB_RUNTIME_LIBRARYSTATE_H
#define DISC_LIB_RUNTIME_LIBRARYSTATE_H

#include "disc/Runtime/Runtime.h"

#include <dnnl.hpp>

#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace disc {
namespace ral {

/// A oneDNN primitive and the scratchpad it needs per execution.
///
/// Every primitive is created with scratchpad_mode::user: the Debian build of
/// oneDNN 2.x is not built with DNNL_ENABLE_CONCURRENT_EXEC, so with the
/// default (library) mode a primitive uses a thread-local "global"
/// scratchpad sized on the thread that *created* it, and a cached primitive
/// executed on another thread (or concurrently) computes garbage. With a
/// scratchpad supplied per execution, one primitive object can be executed
/// from any thread, concurrently.
struct PrimitiveStep {
  dnnl::primitive primitive;
  dnnl::memory::desc scratchpad; // size 0 when none is needed
};

/// A compute primitive (three operands: src, weights, dst) together with the
/// reorders that move the caller's buffers into the layouts/data types the
/// primitive was created for. A reorder is present only where the layouts or
/// data types differ (for example the f32 fallback of a bf16/f16 operation,
/// or the blocked layouts a convolution picks with format_tag::any).
/// A convolution's backward-weights primitive (OneDnn.cpp) uses the fields
/// with its own roles: `dst` is the output gradient (reordered in) and
/// `weights` the kernel gradient (computed, reordered out).
struct CachedPrimitive {
  PrimitiveStep compute;
  /// Memory descriptors the compute primitive expects.
  dnnl::memory::desc src, weights, dst;
  bool hasSrcReorder = false, hasWeightsReorder = false, hasDstReorder = false;
  PrimitiveStep srcReorder, weightsReorder, dstReorder;
  /// True when the operation runs in f32 because oneDNN has no
  /// implementation for the requested low-precision type on this CPU.
  bool computesInF32 = false;
  /// True when the epilogue's post-ops run as a separate in-place binary
  /// primitive on the compute primitive's result (`separateEpilogue`)
  /// instead of inside it: oneDNN's gemm-based convolution applies binary
  /// post-ops per element in reference code.
  bool hasSeparateEpilogue = false;
  PrimitiveStep separateEpilogue;
  /// True for a cached "no": a cheaper formulation of the operation (a
  /// pointwise convolution as a matmul) that oneDNN could only run with
  /// its reference implementation; the caller uses its general path.
  bool declined = false;
};

} // namespace ral
} // namespace disc

struct disc::ral::Context::LibraryState {
  LibraryState();

  /// The CPU engine every primitive of this Context runs on.
  dnnl::engine engine;

  /// The Context that owns this state, so that code holding only a
  /// `Context &` (invoke) can keep the Context alive from the deleters of
  /// the output tensors it hands out. Set by Context::create.
  std::weak_ptr<Context> self;

  /// Returns the cached primitive for `key`, or null.
  std::shared_ptr<const CachedPrimitive> lookup(const std::string &key);
  /// Inserts `value` for `key` unless another thread got there first;
  /// returns the entry now in the cache. Evicts the least recently used
  /// entry beyond `cacheCapacity`.
  std::shared_ptr<const CachedPrimitive>
  insert(const std::string &key, std::shared_ptr<const CachedPrimitive> value);
  size_t cacheSize();

  static constexpr size_t cacheCapacity = 1024;

private:
  using LruList =
      std::list<std::pair<std::string, std::shared_ptr<const CachedPrimitive>>>;
  std::mutex cacheMutex;
  LruList lru; // most recently used first
  std::unordered_map<std::string, LruList::iterator> cache;
};

#endif // DISC_LIB_RUNTIME_LIBRARYSTATE_H
