//===- CudaDriver.h - the CUDA driver API, loaded with dlopen ---*- C++ -*-===//
//
// The runtime never links libcuda: a CPU-only build and a machine without a
// driver load and run everything but the CUDA target. The first CUDA call
// loads libcuda.so.1 (or $DISC_CUDA_DRIVER, for tests) and resolves the few
// entry points DISC uses; a missing driver is a RuntimeError saying so.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_LIB_RUNTIME_CUDA_CUDADRIVER_H
#define DISC_LIB_RUNTIME_CUDA_CUDADRIVER_H

#include "disc/Runtime/Runtime.h"

#include <cstddef>
#include <cstdint>
#include <dlfcn.h>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace disc {
namespace ral {
namespace cuda {

// The driver API's types, as cuda.h declares them (no CUDA headers needed).
using CUresult = int;
using CUdevice = int;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUdeviceptr = unsigned long long;
using CUmemoryPool = struct CUmemPoolHandle_st *;
constexpr int CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4;
constexpr CUresult CUDA_SUCCESS = 0;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;

struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxGetCurrent)(CUcontext *);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxGetDevice)(CUdevice *);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, unsigned, CUstream,
                             void **, void **);
  CUresult (*cuMemAllocAsync)(CUdeviceptr *, size_t, CUstream);
  CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuDeviceGetDefaultMemPool)(CUmemoryPool *, CUdevice);
  CUresult (*cuMemPoolSetAttribute)(CUmemoryPool, int, void *);
};

/// `fn` = dlsym(library, name); when missing, `error` (if still empty)
/// says "<what> has no entry point <name>". Shared by the driver and the
/// CUDA libraries loaded with dlopen.
template <typename Fn>
bool resolveSymbol(void *library, const char *what, const char *name, Fn &fn,
                   std::string &error) {
  fn = reinterpret_cast<Fn>(dlsym(library, name));
  if (!fn && error.empty())
    error = std::string(what) + " has no entry point " + name;
  return fn != nullptr;
}

/// dlopen (RTLD_NOW | RTLD_LOCAL) of $`envVar` if set, else of each of
/// `names` in turn: the first handle that loads, or null with `tried`
/// listing every path attempted.
void *openFirstLibrary(const char *envVar,
                       std::initializer_list<const char *> names,
                       std::string &tried);

/// A CUDA library's entry points `Lib`, loaded once per process: dlopen
/// of the first of $`envVar` / `names` that loads (openFirstLibrary), then
/// `resolve(handle, lib, error)` (resolveSymbol for each entry point).
/// Throws RuntimeError when nothing loads ("`needed`, and none of ... can
/// be loaded (`hint`)") or an entry point is missing; later calls rethrow
/// the first error.
template <typename Lib>
const Lib &loadLibraryOnce(const char *envVar,
                           std::initializer_list<const char *> names,
                           const char *needed, const char *hint,
                           void (*resolve)(void *, Lib &, std::string &)) {
  static std::mutex mutex;
  static std::unique_ptr<Lib> loaded;
  static std::string error;
  std::lock_guard<std::mutex> lock(mutex);
  if (loaded)
    return *loaded;
  if (error.empty()) {
    std::string tried;
    if (void *handle = openFirstLibrary(envVar, names, tried)) {
      auto lib = std::make_unique<Lib>();
      resolve(handle, *lib, error);
      if (error.empty())
        loaded = std::move(lib);
    } else {
      error = std::string(needed) + ", and none of " + tried +
              " can be loaded (" + hint + ")";
    }
  }
  if (!loaded)
    throw RuntimeError(error);
  return *loaded;
}

/// A library handle per CUDA context, made by `create(&handle)` (which
/// throws on failure) the first time a context asks. Each call site (its
/// `create` type) keeps its own handles.
template <typename Handle, typename Create>
Handle handlePerContext(CUcontext context, Create create) {
  static std::mutex mutex;
  static std::map<CUcontext, Handle> *handles =
      new std::map<CUcontext, Handle>; // outlives every caller
  std::lock_guard<std::mutex> lock(mutex);
  Handle &handle = (*handles)[context];
  if (!handle)
    create(&handle);
  return handle;
}

/// What a library call prepares for one problem (descriptors, the chosen
/// algorithm), made by `prepare()` the first time a (handle, problem) pair
/// is seen and kept for the process: one cache per instantiation (each
/// call site's `prepare` is a lambda of its own type, so per call site).
/// `prepare` runs without the lock (it calls the library); when two
/// threads prepare one problem, the first entry stays and the other is
/// dropped. Entries never move, so the reference stays valid.
template <typename Prepared, typename ProblemKey, typename Prepare>
const Prepared &preparedPerProblem(const void *handle,
                                   const ProblemKey &problem,
                                   Prepare prepare) {
  using Key = std::pair<const void *, ProblemKey>;
  static std::mutex mutex;
  static auto *cache = new std::map<Key, Prepared>; // outlives every caller
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache->find(Key{handle, problem});
    if (it != cache->end())
      return it->second;
  }
  Prepared made = prepare();
  std::lock_guard<std::mutex> lock(mutex);
  return cache->try_emplace(Key{handle, problem}, std::move(made))
      .first->second;
}

/// The loaded driver, initialised (cuInit) once per process. Throws
/// RuntimeError when the library or an entry point is missing, or cuInit
/// fails (no GPU).
const Driver &driver();

/// Whether driver() would succeed; otherwise why not in `why`.
bool driverAvailable(std::string *why);

/// "CUDA_ERROR_INVALID_VALUE (invalid argument)" for `result`.
std::string errorString(CUresult result);

/// Throws RuntimeError "<what>: <errorString>" unless `result` is success.
void check(CUresult result, const std::string &what);

/// The calling thread's current context; when there is none (standalone
/// use), device 0's primary context, made current.
CUcontext currentContext();

/// Sets the current device's default memory pool (cuMemAllocAsync's) to
/// keep freed memory however much it holds: with the default threshold (0)
/// the pool returns its memory to the driver at every synchronisation, and
/// the next call's allocations map it again. Once per device (PyTorch's
/// cudaMallocAsync backend does the same).
void keepPoolMemory();

/// The compute capability of the current context's device as 10 * major +
/// minor (90 for an H100).
int currentSmVersion();

} // namespace cuda
} // namespace ral
} // namespace disc

#endif // DISC_LIB_RUNTIME_CUDA_CUDADRIVER_H
