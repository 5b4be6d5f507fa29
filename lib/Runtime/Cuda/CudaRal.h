//===- CudaRal.h - the RAL's CUDA internals (private) -----------*- C++ -*-===//
#ifndef DISC_LIB_RUNTIME_CUDA_CUDARAL_H
#define DISC_LIB_RUNTIME_CUDA_CUDARAL_H

#include "disc/Runtime/Runtime.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace disc {
namespace ral {
struct ExecutionContext;

namespace cuda {
/// A kernel image as disc-ral-lower-gpu-launch emits it: "DISCGPU1", the
/// object count, then per object {sm (i64), bytes (i64), bytes...}.
struct KernelImage {
  struct Object {
    int64_t sm = 0;
    const void *data = nullptr;
    int64_t bytes = 0;
  };
  std::vector<Object> objects;
};
/// Throws RuntimeError on a malformed image.
KernelImage parseKernelImage(const void *data, int64_t bytes);
/// The object of the newest chip not newer than `sm`, or null.
const KernelImage::Object *selectObject(const KernelImage &image, int sm);
} // namespace cuda

/// A device buffer for the call from its allocator (stream-ordered on its
/// stream), recorded in its live set; null with the error message set on
/// failure.
void *allocateDeviceForCall(ExecutionContext *ectx, int64_t bytes) noexcept;
/// Returns the device blocks the call keeps for reuse that are larger than
/// `largerThan` bytes (all of them by default) to the call's allocator.
void releaseKeptDeviceBlocks(ExecutionContext &ectx,
                             size_t largerThan = 0) noexcept;
/// DISC_CUDA_REUSE_BLOCKS (read per call, so that a process may switch):
/// whether a device block a call frees serves its later requests (one at
/// most twice as large) instead of going back to the allocator. Throws
/// RuntimeError naming the variable on a value other than 0 or 1.
bool reuseDeviceBlocksSetting();
/// Takes a buffer of allocateDeviceForCall out of the call's live set and
/// returns it to the call's allocator, stream-ordered after the work queued
/// so far (scratch of a library call).
void releaseDeviceForCall(ExecutionContext &ectx, void *ptr) noexcept;
/// Device-to-device copy on `stream` (throws RuntimeError).
void copyDevice(void *stream, void *dst, const void *src, size_t bytes);

} // namespace ral
} // namespace disc

#endif // DISC_LIB_RUNTIME_CUDA_CUDARAL_H
