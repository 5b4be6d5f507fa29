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

#include <cstddef>
#include <cstdint>
#include <dlfcn.h>
#include <string>

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

/// The compute capability of the current context's device as 10 * major +
/// minor (90 for an H100).
int currentSmVersion();

} // namespace cuda
} // namespace ral
} // namespace disc

#endif // DISC_LIB_RUNTIME_CUDA_CUDADRIVER_H
