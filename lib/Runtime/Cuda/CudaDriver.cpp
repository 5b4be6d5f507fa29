//===- CudaDriver.cpp - the CUDA driver API, loaded with dlopen -----------===//
#include "CudaDriver.h"

#include <vector>

#include "disc/Runtime/Runtime.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

namespace disc {
namespace ral {
namespace cuda {

namespace {

struct Loaded {
  Driver driver{};
  std::string error; // empty when loaded
};

template <typename Fn>
void resolve(void *library, const char *name, Fn &fn, std::string &error) {
  resolveSymbol(library, "the CUDA driver", name, fn, error);
}

const Loaded &load() {
  static Loaded loaded = [] {
    Loaded l;
    const char *path = std::getenv("DISC_CUDA_DRIVER");
    if (!path || !*path)
      path = "libcuda.so.1";
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char *why = dlerror();
      l.error = std::string("the cuda target needs the NVIDIA driver, and ") +
                path + " cannot be loaded (" + (why ? why : "unknown") +
                "): is there a GPU and a driver on this machine?";
      return l;
    }
    Driver &d = l.driver;
    std::string &e = l.error;
    resolve(library, "cuInit", d.cuInit, e);
    resolve(library, "cuGetErrorName", d.cuGetErrorName, e);
    resolve(library, "cuGetErrorString", d.cuGetErrorString, e);
    resolve(library, "cuDeviceGet", d.cuDeviceGet, e);
    resolve(library, "cuDeviceGetAttribute", d.cuDeviceGetAttribute, e);
    resolve(library, "cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain, e);
    resolve(library, "cuCtxGetCurrent", d.cuCtxGetCurrent, e);
    resolve(library, "cuCtxSetCurrent", d.cuCtxSetCurrent, e);
    resolve(library, "cuCtxGetDevice", d.cuCtxGetDevice, e);
    resolve(library, "cuModuleLoadData", d.cuModuleLoadData, e);
    resolve(library, "cuModuleUnload", d.cuModuleUnload, e);
    resolve(library, "cuModuleGetFunction", d.cuModuleGetFunction, e);
    resolve(library, "cuLaunchKernel", d.cuLaunchKernel, e);
    resolve(library, "cuMemAllocAsync", d.cuMemAllocAsync, e);
    resolve(library, "cuMemFreeAsync", d.cuMemFreeAsync, e);
    resolve(library, "cuMemcpyDtoDAsync_v2", d.cuMemcpyDtoDAsync, e);
    resolve(library, "cuDeviceGetDefaultMemPool", d.cuDeviceGetDefaultMemPool,
            e);
    resolve(library, "cuMemPoolSetAttribute", d.cuMemPoolSetAttribute, e);
    if (!e.empty())
      return l;
    CUresult init = d.cuInit(0);
    if (init != CUDA_SUCCESS) {
      l.error = "cuInit failed: " + std::to_string(init) +
                " (no usable GPU on this machine?)";
      const char *name = nullptr;
      if (d.cuGetErrorName(init, &name) == CUDA_SUCCESS && name)
        l.error = std::string("cuInit failed: ") + name +
                  " (no usable GPU on this machine?)";
    }
    return l;
  }();
  return loaded;
}

} // namespace

void *openFirstLibrary(const char *envVar,
                       std::initializer_list<const char *> names,
                       std::string &tried) {
  const char *env = std::getenv(envVar);
  std::vector<const char *> paths = {env};
  paths.insert(paths.end(), names.begin(), names.end());
  for (const char *path : paths) {
    if (!path || !*path)
      continue;
    if (void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL))
      return handle;
    tried += std::string(tried.empty() ? "" : ", ") + path;
  }
  return nullptr;
}

bool driverAvailable(std::string *why) {
  const Loaded &l = load();
  if (why)
    *why = l.error;
  return l.error.empty();
}

const Driver &driver() {
  const Loaded &l = load();
  if (!l.error.empty())
    throw RuntimeError(l.error);
  return l.driver;
}

std::string errorString(CUresult result) {
  const Driver &d = driver();
  const char *name = nullptr, *text = nullptr;
  d.cuGetErrorName(result, &name);
  d.cuGetErrorString(result, &text);
  std::string s = name ? name : "CUDA error " + std::to_string(result);
  if (text)
    s += std::string(" (") + text + ")";
  return s;
}

void check(CUresult result, const std::string &what) {
  if (result != CUDA_SUCCESS)
    throw RuntimeError(what + ": " + errorString(result));
}

CUcontext currentContext() {
  const Driver &d = driver();
  CUcontext context = nullptr;
  check(d.cuCtxGetCurrent(&context), "cuCtxGetCurrent");
  if (context)
    return context;
  CUdevice device = 0;
  check(d.cuDeviceGet(&device, 0), "cuDeviceGet(0)");
  check(d.cuDevicePrimaryCtxRetain(&context, device),
        "cuDevicePrimaryCtxRetain");
  check(d.cuCtxSetCurrent(context), "cuCtxSetCurrent");
  return context;
}

void keepPoolMemory() {
  // One bit per device that has been set (devices 64 and above: every call).
  static std::atomic<uint64_t> kept{0};
  const Driver &d = driver();
  currentContext(); // standalone use: device 0's primary context
  CUdevice device = 0;
  check(d.cuCtxGetDevice(&device), "cuCtxGetDevice");
  uint64_t bit = device >= 0 && device < 64 ? uint64_t(1) << device : 0;
  if (bit && (kept.load(std::memory_order_relaxed) & bit))
    return;
  CUmemoryPool pool = nullptr;
  check(d.cuDeviceGetDefaultMemPool(&pool, device),
        "cuDeviceGetDefaultMemPool");
  uint64_t threshold = UINT64_MAX;
  check(d.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                &threshold),
        "cuMemPoolSetAttribute(RELEASE_THRESHOLD)");
  kept.fetch_or(bit, std::memory_order_relaxed);
}

int currentSmVersion() {
  const Driver &d = driver();
  currentContext();
  CUdevice device = 0;
  check(d.cuCtxGetDevice(&device), "cuCtxGetDevice");
  int major = 0, minor = 0;
  check(d.cuDeviceGetAttribute(&major,
                               CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                               device),
        "cuDeviceGetAttribute");
  check(d.cuDeviceGetAttribute(&minor,
                               CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                               device),
        "cuDeviceGetAttribute");
  return major * 10 + minor;
}

} // namespace cuda
} // namespace ral
} // namespace disc
