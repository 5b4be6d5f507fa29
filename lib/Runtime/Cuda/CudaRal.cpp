//===- CudaRal.cpp - the RAL's CUDA entry points --------------------------===//
//
// disc_ral_cuda_launch / _alloc / _free, called by code compiled for the
// cuda target (disc-ral-lower-gpu-launch, disc-ral-inject-context), and the
// per-executable cache of loaded kernel modules. Errors name the kernel and
// reach the caller as a Python exception (ralFailNoReturn), never an abort.
//
//===----------------------------------------------------------------------===//
#include "CudaDriver.h"
#include "CudaRal.h"

#include "../ExecutionContext.h"
#include "disc/Runtime/RalApi.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace disc {
namespace ral {

struct CudaModuleCache {
  struct Loaded {
    cuda::CUmodule module = nullptr;
    // Keyed by the name's address: names are constants of the executable
    // (no string built per launch).
    std::map<const char *, cuda::CUfunction> functions;
  };
  std::mutex mutex;
  // (context, image) -> module. Images are constants of the executable
  // that owns this cache, so their addresses are stable keys.
  std::map<std::pair<cuda::CUcontext, const void *>, Loaded> modules;

  ~CudaModuleCache() {
    std::string why;
    if (!cuda::driverAvailable(&why))
      return;
    const cuda::Driver &d = cuda::driver();
    for (auto &entry : modules)
      if (entry.second.module)
        d.cuModuleUnload(entry.second.module); // errors ignored at teardown
  }
};

std::shared_ptr<CudaModuleCache> makeCudaModuleCache() {
  return std::make_shared<CudaModuleCache>();
}

void copyDevice(void *stream, void *dst, const void *src, size_t bytes) {
  if (bytes == 0)
    return;
  cuda::check(cuda::driver().cuMemcpyDtoDAsync(
                  reinterpret_cast<cuda::CUdeviceptr>(dst),
                  reinterpret_cast<cuda::CUdeviceptr>(src), bytes,
                  static_cast<cuda::CUstream>(stream)),
              "cuMemcpyDtoDAsync");
}

bool cudaDriverAvailable(std::string *why) {
  return cuda::driverAvailable(why);
}

namespace cuda {

KernelImage parseKernelImage(const void *data, int64_t bytes) {
  auto fail = [](const std::string &why) -> KernelImage {
    throw RuntimeError("malformed kernel image: " + why);
  };
  const char *p = static_cast<const char *>(data);
  if (bytes < 16 || std::memcmp(p, "DISCGPU1", 8) != 0)
    return fail("no DISCGPU1 header");
  auto readInt = [&](int64_t offset) {
    int64_t v;
    std::memcpy(&v, p + offset, 8);
    return v;
  };
  int64_t count = readInt(8);
  if (count < 1 || count > 64)
    return fail("object count " + std::to_string(count));
  KernelImage image;
  int64_t offset = 16;
  for (int64_t i = 0; i < count; ++i) {
    if (offset + 16 > bytes)
      return fail("truncated object header");
    KernelImage::Object object;
    object.sm = readInt(offset);
    int64_t size = readInt(offset + 8);
    offset += 16;
    if (size < 0 || size > bytes - offset)
      return fail("object size " + std::to_string(size) + " past the end");
    object.data = p + offset;
    object.bytes = size;
    offset += size;
    image.objects.push_back(object);
  }
  return image;
}

const KernelImage::Object *selectObject(const KernelImage &image, int sm) {
  const KernelImage::Object *best = nullptr;
  for (const KernelImage::Object &object : image.objects)
    if (object.sm <= sm && (!best || object.sm > best->sm))
      best = &object;
  return best;
}

} // namespace cuda

namespace {

cuda::CUfunction lookupKernel(ExecutionContext &ectx, const void *image,
                              int64_t imageBytes, const char *name) {
  if (!ectx.cudaModules)
    throw RuntimeError("the call has no CUDA module cache (an executable "
                       "compiled for cuda run as a CPU one?)");
  cuda::CUcontext context = cuda::currentContext();
  CudaModuleCache &cache = *ectx.cudaModules;
  std::lock_guard<std::mutex> lock(cache.mutex);
  CudaModuleCache::Loaded &loaded = cache.modules[{context, image}];
  if (!loaded.module) {
    cuda::KernelImage parsed = cuda::parseKernelImage(image, imageBytes);
    int sm = cuda::currentSmVersion();
    const cuda::KernelImage::Object *object = cuda::selectObject(parsed, sm);
    if (!object) {
      std::string have;
      for (const auto &o : parsed.objects)
        have += (have.empty() ? "sm_" : ", sm_") + std::to_string(o.sm);
      throw RuntimeError("the kernels were compiled for " + have +
                         ", but the device is sm_" + std::to_string(sm));
    }
    cuda::check(cuda::driver().cuModuleLoadData(&loaded.module, object->data),
                "cuModuleLoadData (sm_" + std::to_string(object->sm) + ")");
  }
  cuda::CUfunction &function = loaded.functions[name];
  if (!function)
    cuda::check(
        cuda::driver().cuModuleGetFunction(&function, loaded.module, name),
        "cuModuleGetFunction");
  return function;
}

} // namespace

namespace {

/// cuMemAllocAsync's pool of the current device.
class StreamOrderedDevicePool final : public DeviceAllocator {
public:
  void *allocate(size_t bytes, void *stream) override {
    cuda::keepPoolMemory();
    cuda::CUdeviceptr ptr = 0;
    // The message is built only on failure (host time per allocation).
    if (cuda::CUresult result = cuda::driver().cuMemAllocAsync(
            &ptr, bytes, static_cast<cuda::CUstream>(stream)))
      cuda::check(result,
                  "cuMemAllocAsync(" + std::to_string(bytes) + " bytes)");
    return reinterpret_cast<void *>(ptr);
  }
  void deallocate(void *ptr, void *stream) noexcept override {
    std::string why;
    if (!ptr || !cuda::driverAvailable(&why))
      return;
    cuda::driver().cuMemFreeAsync(reinterpret_cast<cuda::CUdeviceptr>(ptr),
                                  static_cast<cuda::CUstream>(stream));
  }
};

} // namespace

std::shared_ptr<DeviceAllocator> streamOrderedDevicePool() {
  static std::shared_ptr<DeviceAllocator> pool =
      std::make_shared<StreamOrderedDevicePool>();
  return pool;
}

namespace {

/// Device blocks are asked for in multiples of this (PyTorch's caching
/// allocator rounds to it too).
constexpr size_t kDeviceBlockGranule = 512;
/// Blocks larger than this that the call keeps go back to the allocator
/// when a request no kept block serves is larger than this too, so that
/// the allocator may reuse their memory. A request takes a kept block at
/// most twice its size, so the call holds at most twice what it would
/// without reuse, besides the small blocks it keeps (a reduction's slots, a
/// scalar: these stay until the call ends).
constexpr size_t kSmallDeviceBlock = 64 << 10;

std::atomic<int64_t> deviceAllocations{0};
std::atomic<int64_t> deviceBlocksReused{0};

size_t roundedDeviceBytes(int64_t bytes) {
  // Allocators may reject 0 bytes; a granule keeps pointers unique.
  const size_t requested = bytes <= 0 ? 1 : static_cast<size_t>(bytes);
  return (requested + kDeviceBlockGranule - 1) / kDeviceBlockGranule *
         kDeviceBlockGranule;
}

/// Takes `ptr` out of the call's live set: kept for the call's later
/// requests (stream order makes that safe: every use of the block so far
/// was queued on the call's stream before the next user's), or returned to
/// the allocator.
void retireDeviceBlock(ExecutionContext &ectx,
                       std::unordered_map<void *, int64_t>::iterator it) {
  void *ptr = it->first;
  const size_t rounded = static_cast<size_t>(it->second);
  ectx.live.erase(it);
  if (ectx.reuseDeviceBlocks) {
    try {
      ectx.freedDeviceBlocks.emplace_back(rounded, ptr);
      return;
    } catch (...) {
    }
  }
  ectx.deviceAllocator->deallocate(ptr, ectx.cudaStream);
}

} // namespace

void releaseKeptDeviceBlocks(ExecutionContext &ectx,
                             size_t largerThan) noexcept {
  std::vector<std::pair<size_t, void *>> &freed = ectx.freedDeviceBlocks;
  size_t kept = 0;
  for (auto &block : freed)
    if (block.first > largerThan)
      ectx.deviceAllocator->deallocate(block.second, ectx.cudaStream);
    else
      freed[kept++] = block;
  freed.resize(kept);
}

bool reuseDeviceBlocksSetting() {
  const char *env = std::getenv("DISC_CUDA_REUSE_BLOCKS");
  if (!env || !*env || std::strcmp(env, "1") == 0)
    return true;
  if (std::strcmp(env, "0") == 0)
    return false;
  throw RuntimeError(std::string("DISC_CUDA_REUSE_BLOCKS='") + env +
                     "': expected 1 (a block a call frees serves its later "
                     "requests, the default) or 0 (every request goes to "
                     "the allocator)");
}

DeviceBlockStats deviceBlockStats() {
  return {deviceAllocations.load(), deviceBlocksReused.load()};
}

void *allocateDeviceForCall(ExecutionContext *ectx, int64_t bytes) noexcept {
  void *result = nullptr;
  bool ok = guardedCall(*ectx, "disc_ral_cuda_alloc", [&] {
    if (bytes < 0)
      throw RuntimeError("negative size " + std::to_string(bytes));
    if (!ectx->deviceAllocator)
      throw RuntimeError("the call has no device allocator");
    const size_t rounded = roundedDeviceBytes(bytes);
    // The smallest freed block that holds the request and is at most twice
    // its size (the call holds it either way), the most recently freed of
    // those first (likely still in the GPU's L2).
    std::vector<std::pair<size_t, void *>> &freed = ectx->freedDeviceBlocks;
    size_t best = freed.size();
    for (size_t i = freed.size(); i-- > 0;)
      if (freed[i].first >= rounded && freed[i].first / 2 <= rounded &&
          (best == freed.size() || freed[i].first < freed[best].first))
        best = i;
    if (best != freed.size()) {
      result = freed[best].second;
      // Recorded live before it leaves the kept list: never in neither.
      ectx->live.emplace(result, static_cast<int64_t>(freed[best].first));
      freed.erase(freed.begin() + static_cast<std::ptrdiff_t>(best));
      deviceBlocksReused.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    if (rounded > kSmallDeviceBlock)
      releaseKeptDeviceBlocks(*ectx, kSmallDeviceBlock);
    result = ectx->deviceAllocator->allocate(rounded, ectx->cudaStream);
    if (!result)
      throw RuntimeError("the device allocator returned null for " +
                         std::to_string(bytes) + " bytes");
    deviceAllocations.fetch_add(1, std::memory_order_relaxed);
    try {
      ectx->live.emplace(result, static_cast<int64_t>(rounded));
    } catch (...) {
      ectx->deviceAllocator->deallocate(result, ectx->cudaStream);
      throw;
    }
  });
  return ok ? result : nullptr;
}

void releaseDeviceForCall(ExecutionContext &ectx, void *ptr) noexcept {
  if (!ptr)
    return;
  auto it = ectx.live.find(ptr);
  if (it == ectx.live.end()) {
    ectx.deviceAllocator->deallocate(ptr, ectx.cudaStream);
    return;
  }
  retireDeviceBlock(ectx, it);
}

void launchChecked(ExecutionContext &ectx, const void *image,
                   int64_t imageBytes, const char *kernelName, int64_t gridX,
                   int64_t gridY, int64_t gridZ, int64_t blockX,
                   int64_t blockY, int64_t blockZ, int32_t sharedBytes,
                   void **args) {
  if (gridX == 0 || gridY == 0 || gridZ == 0)
    return; // an empty tensor: nothing to run
  const int64_t limit = (1ll << 31) - 1;
  if (gridX < 0 || gridY < 0 || gridZ < 0 || gridX > limit ||
      gridY > 65535 || gridZ > 65535)
    throw RuntimeError("grid " + std::to_string(gridX) + "x" +
                       std::to_string(gridY) + "x" + std::to_string(gridZ) +
                       " is out of the device's range");
  if (blockX < 1 || blockY < 1 || blockZ < 1 ||
      blockX * blockY * blockZ > 1024)
    throw RuntimeError("block " + std::to_string(blockX) + "x" +
                       std::to_string(blockY) + "x" + std::to_string(blockZ) +
                       " is out of the device's range");
  cuda::CUfunction function =
      lookupKernel(ectx, image, imageBytes, kernelName);
  cuda::check(cuda::driver().cuLaunchKernel(
                  function, (unsigned)gridX, (unsigned)gridY,
                  (unsigned)gridZ, (unsigned)blockX, (unsigned)blockY,
                  (unsigned)blockZ, (unsigned)sharedBytes,
                  static_cast<cuda::CUstream>(ectx.cudaStream), args,
                  nullptr),
              "cuLaunchKernel");
  ++ectx.cudaLaunches;
}

bool launchKernel(ExecutionContext &ectx, const void *image,
                  int64_t imageBytes, const char *kernelName, int64_t gridX,
                  int64_t gridY, int64_t gridZ, int64_t blockX, int64_t blockY,
                  int64_t blockZ, int32_t sharedBytes, void **args) noexcept {
  // The error names the kernel; nothing is built on the successful path.
  return guardedCall(ectx, "disc_ral_cuda_launch", [&] {
    try {
      launchChecked(ectx, image, imageBytes, kernelName, gridX, gridY, gridZ,
                    blockX, blockY, blockZ, sharedBytes, args);
    } catch (const std::exception &e) {
      throw RuntimeError(std::string("kernel ") +
                         (kernelName ? kernelName : "<unnamed>") + ": " +
                         e.what());
    }
  });
}

bool freeDeviceForCall(ExecutionContext &ectx, void *ptr) noexcept {
  if (!ptr)
    return true;
  auto it = ectx.live.find(ptr);
  if (it == ectx.live.end()) {
    try {
      ectx.errorMessage = "disc_ral_cuda_free: pointer was not allocated by "
                          "this call (or was already freed)";
    } catch (...) {
    }
    return false;
  }
  retireDeviceBlock(ectx, it);
  return true;
}

} // namespace ral
} // namespace disc

using disc::ral::asExecutionContext;
using disc::ral::ExecutionContext;
using disc::ral::ralFailNoReturn;

extern "C" {

void disc_ral_cuda_launch(void *ctx, const void *image, int64_t imageBytes,
                          const char *kernelName, int64_t gridX, int64_t gridY,
                          int64_t gridZ, int64_t blockX, int64_t blockY,
                          int64_t blockZ, int32_t sharedBytes, void **args,
                          int64_t numArgs) {
  (void)numArgs;
  ExecutionContext *ectx = asExecutionContext(ctx);
  if (!disc::ral::launchKernel(*ectx, image, imageBytes, kernelName, gridX,
                               gridY, gridZ, blockX, blockY, blockZ,
                               sharedBytes, args))
    ralFailNoReturn(ectx);
}

void *disc_ral_cuda_alloc(void *ctx, int64_t bytes) {
  ExecutionContext *ectx = asExecutionContext(ctx);
  void *ptr = disc::ral::allocateDeviceForCall(ectx, bytes);
  if (!ptr)
    ralFailNoReturn(ectx);
  return ptr;
}

void disc_ral_cuda_free(void *ctx, void *ptr) {
  ExecutionContext *ectx = asExecutionContext(ctx);
  if (!disc::ral::freeDeviceForCall(*ectx, ptr))
    ralFailNoReturn(ectx);
}

} // extern "C"
