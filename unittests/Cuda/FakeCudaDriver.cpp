//===- FakeCudaDriver.cpp - a libcuda stand-in for tests without a GPU ----===//
//
// Loaded by the runtime through DISC_CUDA_DRIVER. "Device" memory is host
// memory, kernels do not run: every launch is recorded with its grid, block,
// stream and argument count, so tests check the host code of the cuda
// target (launch dimensions, module loading and selection, stream-ordered
// allocation, error paths) on a machine without a GPU.
//
//===----------------------------------------------------------------------===//
#include "FakeCudaDriver.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace {
FakeCudaState state;
int contextToken, moduleToken;
} // namespace

extern "C" {

FakeCudaState *fake_cuda_state() { return &state; }

int cuInit(unsigned) { return 0; }
int cuGetErrorName(int error, const char **name) {
  *name = error == 700 ? "CUDA_ERROR_ILLEGAL_ADDRESS" : "CUDA_ERROR_UNKNOWN";
  return 0;
}
int cuGetErrorString(int error, const char **text) {
  *text = error == 700 ? "an illegal memory access was encountered"
                       : "unknown error";
  return 0;
}
int cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return 0;
}
int cuDeviceGetAttribute(int *value, int attribute, int) {
  if (attribute == 75)
    *value = state.sm / 10;
  else if (attribute == 76)
    *value = state.sm % 10;
  else
    return 1;
  return 0;
}
int cuDevicePrimaryCtxRetain(void **context, int) {
  *context = &contextToken;
  return 0;
}
int cuCtxGetCurrent(void **context) {
  *context = &contextToken;
  return 0;
}
int cuCtxSetCurrent(void *) { return 0; }
int cuCtxGetDevice(int *device) {
  *device = 0;
  return 0;
}
int cuModuleLoadData(void **module, const void *image) {
  // Every object DISC emits is a fatbin.
  const unsigned char magic[4] = {0x50, 0xed, 0x55, 0xba};
  if (std::memcmp(image, magic, 4) != 0)
    return 200; // CUDA_ERROR_INVALID_IMAGE
  ++state.moduleLoads;
  state.lastImage = image;
  *module = &moduleToken;
  return 0;
}
int cuModuleUnload(void *) {
  ++state.moduleUnloads;
  return 0;
}
int cuModuleGetFunction(void **function, void *, const char *name) {
  *function = strdup(name); // leaked: a handful per test
  return 0;
}
int cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz,
                   unsigned bx, unsigned by, unsigned bz, unsigned shared,
                   void *stream, void **params, void **) {
  if (state.failLaunches)
    return 700;
  if (state.numLaunches < FakeCudaState::kMaxLaunches) {
    FakeLaunch &l = state.launches[state.numLaunches];
    std::strncpy(l.kernel, static_cast<const char *>(function),
                 sizeof(l.kernel) - 1);
    l.grid[0] = gx, l.grid[1] = gy, l.grid[2] = gz;
    l.block[0] = bx, l.block[1] = by, l.block[2] = bz;
    l.sharedBytes = shared;
    l.stream = stream;
    l.params = params;
  }
  ++state.numLaunches;
  return 0;
}
int cuMemAllocAsync(unsigned long long *ptr, size_t bytes, void *stream) {
  void *p = std::malloc(bytes);
  if (!p)
    return 2; // CUDA_ERROR_OUT_OF_MEMORY
  *ptr = reinterpret_cast<unsigned long long>(p);
  ++state.allocations;
  state.lastAllocStream = stream;
  return 0;
}
int cuMemFreeAsync(unsigned long long ptr, void *) {
  std::free(reinterpret_cast<void *>(ptr));
  ++state.frees;
  return 0;
}
int cuMemcpyDtoDAsync_v2(unsigned long long dst, unsigned long long src,
                         size_t bytes, void *) {
  std::memcpy(reinterpret_cast<void *>(dst), reinterpret_cast<void *>(src),
              bytes);
  ++state.copies;
  return 0;
}

} // extern "C"
