//===- ExecutionContext.h - per-call state of the runtime (private) -*- C++
//-*-//
//
// One ExecutionContext exists per invoke(). Compiled code receives a pointer
// to it as its first argument and passes it back to every RAL function.
//
// Errors: compiled code has no unwind tables, so no C++ exception may cross
// an extern "C" RAL function. A failing RAL function stores its message in
// `errorMessage` and longjmp()s to `jmp` (set by invoke right before calling
// the compiled function), from a frame in which no C++ object with a
// destructor is alive.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_LIB_RUNTIME_EXECUTIONCONTEXT_H
#define DISC_LIB_RUNTIME_EXECUTIONCONTEXT_H

#include "disc/Runtime/Runtime.h"

#include <csetjmp>
#include <exception>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace disc {
namespace ral {

struct ExecutionContext {
  /// Guards against compiled code passing something else as the context.
  static constexpr uint64_t kMagic = 0x444953435241ull; // "DISCRA"

  explicit ExecutionContext(Context &context) : context(context) {}
  /// Returns every allocation still live to the allocator.
  ~ExecutionContext() { releaseAll(); }
  ExecutionContext(const ExecutionContext &) = delete;
  ExecutionContext &operator=(const ExecutionContext &) = delete;

  /// Returns every live allocation of the call to the allocator.
  void releaseAll() noexcept;

  uint64_t magic = kMagic;
  Context &context;
  /// Buffers allocated by this call through disc_ral_alloc and not yet
  /// freed: pointer -> requested bytes. Compiled code runs one call on one
  /// thread, so this needs no lock.
  std::unordered_map<void *, int64_t> live;
  std::string errorMessage;
  std::jmp_buf jmp;
  /// disc_ral_profile_begin's clock (DISC_PROFILE=1): timed calls do not
  /// nest, so one start time is enough.
  int64_t profileStartNs = 0;
  /// Where the call's buffers live (InvokeOptions::device). On Cuda,
  /// `live` holds device pointers from `deviceAllocator`.
  Device device = Device::Cpu;
  /// The CUstream every launch, allocation and free of the call goes to.
  void *cudaStream = nullptr;
  /// Kernel modules of the executable being run (cuda only).
  CudaModuleCache *cudaModules = nullptr;
  /// Where the call's device buffers come from (cuda only; the invocation
  /// keeps it alive).
  DeviceAllocator *deviceAllocator = nullptr;
  /// Device blocks the call has freed, kept for its later allocations
  /// (cuda only, DISC_CUDA_REUSE_BLOCKS; lib/Runtime/Cuda/CudaRal.cpp):
  /// {block bytes, pointer}, the most recently freed last. On cuda, `live`
  /// maps each pointer to its block's bytes.
  std::vector<std::pair<size_t, void *>> freedDeviceBlocks;
  /// Whether freed device blocks are kept for reuse (read once per call).
  bool reuseDeviceBlocks = true;
  /// Whether the call's f32 library calls may use TF32 (cuda only).
  Float32Math float32Math;
  /// Kernels launched by this call.
  int64_t cudaLaunches = 0;
};

/// Runs `body`, turning every exception into `ectx.errorMessage` as
/// "<opName>: <what>"; returns whether it succeeded. For the library calls,
/// whose C entry points then fail the call (ralFailNoReturn).
template <typename Body>
bool guardedCall(ExecutionContext &ectx, const char *opName,
                 Body body) noexcept {
  try {
    try {
      body();
      return true;
    } catch (const std::exception &e) {
      ectx.errorMessage = std::string(opName) + ": " + e.what();
    } catch (...) {
      ectx.errorMessage = std::string(opName) + ": unknown error";
    }
  } catch (...) {
    // Building the message itself failed (out of memory).
    ectx.errorMessage.clear();
  }
  return false;
}

/// Unwinds to invoke() with `ectx->errorMessage` as the error. Must only be
/// called from a frame without live C++ objects that have destructors.
/// With a null or invalid context, prints the message and aborts.
[[noreturn]] void ralFailNoReturn(ExecutionContext *ectx);

/// Checks that `ctx` is an ExecutionContext (aborts otherwise).
ExecutionContext *asExecutionContext(void *ctx);

/// DISC_LOG=library (or all): whether to print each library primitive or
/// plan the runtime builds (oneDNN's on the CPU, cuDNN's on cuda). Read on
/// every build (a cache miss), so a process can turn it on late.
bool logLibraryCalls();

} // namespace ral
} // namespace disc

#endif // DISC_LIB_RUNTIME_EXECUTIONCONTEXT_H
