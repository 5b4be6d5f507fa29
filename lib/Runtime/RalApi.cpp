//===- RalApi.cpp - the C ABI called by compiled code ---------------------===//
//
// No C++ exception may leave these functions (compiled code has no unwind
// tables). Each one does its work in a noexcept helper that reports failure
// through ExecutionContext::errorMessage, then -- in a frame where no object
// with a destructor is alive -- calls ralFailNoReturn, which longjmp()s back
// to invoke().
//
//===----------------------------------------------------------------------===//

#include "disc/Runtime/RalApi.h"

#include "Cuda/CudaRal.h"
#include "ExecutionContext.h"
#include "StridedCopy.h"
#include "Attention.h"
#include "OneDnn.h"
#include "Sort.h"

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <cmath>

namespace disc {
namespace ral {

void ExecutionContext::releaseAll() noexcept {
  if (device == Device::Cuda) {
    for (auto &entry : live)
      deviceAllocator->deallocate(entry.first, cudaStream);
    live.clear();
    releaseKeptDeviceBlocks(*this);
    return;
  }
  Allocator &allocator = context.allocator();
  for (auto &entry : live) {
    try {
      allocator.deallocate(entry.first);
    } catch (...) {
    }
  }
  live.clear();
}

ExecutionContext *asExecutionContext(void *ctx) {
  auto *ectx = static_cast<ExecutionContext *>(ctx);
  if (!ectx || ectx->magic != ExecutionContext::kMagic) {
    std::fprintf(stderr, "disc runtime: invalid execution context %p\n", ctx);
    std::abort();
  }
  return ectx;
}

[[noreturn]] void ralFailNoReturn(ExecutionContext *ectx) {
  if (!ectx || ectx->magic != ExecutionContext::kMagic) {
    std::fprintf(stderr, "disc runtime: failure without a valid execution "
                         "context\n");
    std::abort();
  }
  std::longjmp(ectx->jmp, 1);
}

namespace {

/// The first integer in the file at `path`; -1 where it cannot be read or
/// holds none ("max" in a cgroup limit file).
static int64_t readIntegerFile(const char *path) {
  std::FILE *file = std::fopen(path, "r");
  if (!file)
    return -1;
  long long value = -1;
  if (std::fscanf(file, "%lld", &value) != 1)
    value = -1;
  std::fclose(file);
  return value;
}

/// The memory the process's cgroup may still use before its out-of-memory
/// killer acts (a container's limit, whatever the host has free), in bytes;
/// -1 where there is no readable limit. cgroup v2 ("0::/path" in
/// /proc/self/cgroup: memory.max, memory.current) or v1 ("N:memory:/path":
/// memory.limit_in_bytes, memory.usage_in_bytes), at the process's path
/// and at the mount's root (inside a cgroup namespace the root is its own).
static int64_t cgroupMemoryLeft() {
  struct Candidate {
    std::string limit, used; // file paths
  };
  // Where the files are does not change while the process runs: found once.
  static const std::vector<Candidate> candidates = [] {
    std::string v2Path, v1Path;
    if (std::FILE *self = std::fopen("/proc/self/cgroup", "r")) {
      char line[512];
      while (std::fgets(line, sizeof(line), self)) {
        std::string entry(line);
        while (!entry.empty() && (entry.back() == '\n' || entry.back() == '/'))
          entry.pop_back();
        if (entry.rfind("0::", 0) == 0)
          v2Path = entry.substr(3);
        else if (size_t at = entry.find(":memory:"); at != std::string::npos)
          v1Path = entry.substr(at + 8);
      }
      std::fclose(self);
    }
    std::vector<Candidate> found;
    for (const std::string &dir :
         {"/sys/fs/cgroup" + v2Path, std::string("/sys/fs/cgroup")})
      found.push_back({dir + "/memory.max", dir + "/memory.current"});
    for (const std::string &dir : {"/sys/fs/cgroup/memory" + v1Path,
                                   std::string("/sys/fs/cgroup/memory")})
      found.push_back(
          {dir + "/memory.limit_in_bytes", dir + "/memory.usage_in_bytes"});
    return found;
  }();
  for (const Candidate &candidate : candidates) {
    const int64_t limit = readIntegerFile(candidate.limit.c_str());
    const int64_t used = readIntegerFile(candidate.used.c_str());
    if (limit >= 0 && used >= 0)
      return limit > used ? limit - used : 0;
  }
  return -1;
}

/// The memory available for new allocations without swapping, in bytes; -1
/// where unknown: the kernel's MemAvailable (/proc/meminfo), or what the
/// process's cgroup has left where that is less.
static int64_t availableMemoryBytes() {
  int64_t bytes = -1;
  if (std::FILE *meminfo = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    while (std::fgets(line, sizeof(line), meminfo)) {
      long long kib = 0;
      if (std::sscanf(line, "MemAvailable: %lld kB", &kib) == 1) {
        bytes = static_cast<int64_t>(kib) * 1024;
        break;
      }
    }
    std::fclose(meminfo);
  }
  const int64_t cgroupLeft = cgroupMemoryLeft();
  if (cgroupLeft >= 0 && (bytes < 0 || cgroupLeft < bytes))
    bytes = cgroupLeft;
  return bytes;
}

void *allocateForCall(ExecutionContext *ectx, int64_t bytes) noexcept {
  try {
    if (bytes < 0) {
      ectx->errorMessage =
          "disc_ral_alloc: negative size " + std::to_string(bytes);
      return nullptr;
    }
    // A buffer larger than the memory left would be killed by the kernel's
    // out-of-memory killer when its pages are touched (malloc overcommits),
    // taking the caller's process with it: a size from absurd input (a pad
    // by 2^31) is an error naming it instead. Checked for large buffers
    // only (reading /proc/meminfo costs microseconds).
    constexpr int64_t kCheckedAbove = int64_t(1) << 30;
    if (bytes > kCheckedAbove) {
      const int64_t available = availableMemoryBytes();
      if (available >= 0 && bytes > available) {
        ectx->errorMessage = "disc_ral_alloc: a buffer of " +
                             std::to_string(bytes) +
                             " bytes is more than the memory available (" +
                             std::to_string(available) + " bytes)";
        return nullptr;
      }
    }
    void *ptr = ectx->context.allocator().allocate(static_cast<size_t>(bytes));
    try {
      ectx->live.emplace(ptr, bytes);
    } catch (...) {
      ectx->context.allocator().deallocate(ptr);
      throw;
    }
    return ptr;
  } catch (const std::exception &e) {
    try {
      ectx->errorMessage = std::string("disc_ral_alloc: ") + e.what();
    } catch (...) {
    }
  } catch (...) {
    try {
      ectx->errorMessage = "disc_ral_alloc: allocation failed";
    } catch (...) {
    }
  }
  return nullptr;
}

bool freeForCall(ExecutionContext *ectx, void *ptr) noexcept {
  if (!ptr)
    return true;
  try {
    auto it = ectx->live.find(ptr);
    if (it == ectx->live.end()) {
      ectx->errorMessage =
          "disc_ral_free: pointer was not allocated by this call (or was "
          "already freed)";
      return false;
    }
    ectx->live.erase(it);
    ectx->context.allocator().deallocate(ptr);
    return true;
  } catch (const std::exception &e) {
    try {
      ectx->errorMessage = std::string("disc_ral_free: ") + e.what();
    } catch (...) {
    }
  }
  return false;
}

void setMessage(ExecutionContext *ectx, const char *message) noexcept {
  try {
    ectx->errorMessage = message ? message : "disc_ral_fail";
  } catch (...) {
    ectx->errorMessage.clear();
  }
}

} // namespace
} // namespace ral
} // namespace disc

using disc::ral::asExecutionContext;
using disc::ral::ExecutionContext;
using disc::ral::ralFailNoReturn;

extern "C" {

void *disc_ral_alloc(void *ctx, int64_t bytes) {
  ExecutionContext *ectx = asExecutionContext(ctx);
  void *ptr = disc::ral::allocateForCall(ectx, bytes);
  if (!ptr)
    ralFailNoReturn(ectx);
  return ptr;
}

void disc_ral_free(void *ctx, void *ptr) {
  ExecutionContext *ectx = asExecutionContext(ctx);
  if (!disc::ral::freeForCall(ectx, ptr))
    ralFailNoReturn(ectx);
}

void disc_ral_fail(void *ctx, const char *message) {
  ExecutionContext *ectx = static_cast<ExecutionContext *>(ctx);
  if (!ectx || ectx->magic != ExecutionContext::kMagic) {
    std::fprintf(stderr, "disc runtime: %s\n", message ? message : "failure");
    std::abort();
  }
  disc::ral::setMessage(ectx, message);
  ralFailNoReturn(ectx);
}

#define DISC_RAL_DEFINE_MATMUL(SUFFIX, DTYPE)                                  \
  void _mlir_ciface_disc_ral_matmul_##SUFFIX(                                  \
      void *ctx, disc::ral::UnrankedMemRef *a, disc::ral::UnrankedMemRef *b,   \
      disc::ral::UnrankedMemRef *c, int64_t transA, int64_t transB) {          \
    ExecutionContext *ectx = asExecutionContext(ctx);                          \
    if (!disc::ral::runMatmul(*ectx, disc::ral::DType::DTYPE,                  \
                              "disc_ral_matmul_" #SUFFIX, a, b, c, transA,     \
                              transB))                                         \
      ralFailNoReturn(ectx);                                                   \
  }
DISC_RAL_DEFINE_MATMUL(f32, F32)
DISC_RAL_DEFINE_MATMUL(f16, F16)
DISC_RAL_DEFINE_MATMUL(bf16, BF16)
#undef DISC_RAL_DEFINE_MATMUL

#define DISC_RAL_DEFINE_CONV(SUFFIX, DTYPE)                                    \
  void _mlir_ciface_disc_ral_conv_##SUFFIX(DISC_RAL_CONV_PARAMETERS) {          \
    ExecutionContext *ectx = asExecutionContext(ctx);                          \
    const disc::ral::ConvParams params = DISC_RAL_CONV_PARAMS_OF_ARGUMENTS;     \
    if (!disc::ral::runConv(*ectx, disc::ral::DType::DTYPE,                    \
                            "disc_ral_conv_" #SUFFIX, input, kernel, output,   \
                            params))                                           \
      ralFailNoReturn(ectx);                                                   \
  }
DISC_RAL_DEFINE_CONV(f32, F32)
DISC_RAL_DEFINE_CONV(f16, F16)
DISC_RAL_DEFINE_CONV(bf16, BF16)
#undef DISC_RAL_DEFINE_CONV

#define DISC_RAL_DEFINE_CONV_BACKWARD_WEIGHTS(SUFFIX, DTYPE)                   \
  void _mlir_ciface_disc_ral_conv_backward_weights_##SUFFIX(                   \
      DISC_RAL_CONV_BACKWARD_WEIGHTS_PARAMETERS) {                             \
    ExecutionContext *ectx = asExecutionContext(ctx);                          \
    const disc::ral::ConvParams params = DISC_RAL_CONV_PARAMS_OF_ARGUMENTS;     \
    if (!disc::ral::runConvBackwardWeights(                                    \
            *ectx, disc::ral::DType::DTYPE,                                    \
            "disc_ral_conv_backward_weights_" #SUFFIX, input, outputGradient,  \
            kernelGradient, params))                                           \
      ralFailNoReturn(ectx);                                                   \
  }
DISC_RAL_DEFINE_CONV_BACKWARD_WEIGHTS(f32, F32)
DISC_RAL_DEFINE_CONV_BACKWARD_WEIGHTS(f16, F16)
DISC_RAL_DEFINE_CONV_BACKWARD_WEIGHTS(bf16, BF16)
#undef DISC_RAL_DEFINE_CONV_BACKWARD_WEIGHTS

void _mlir_ciface_disc_ral_matmul_post_f32(
    void *ctx, disc::ral::UnrankedMemRef *a, disc::ral::UnrankedMemRef *b,
    disc::ral::UnrankedMemRef *c, int64_t transA, int64_t transB,
    disc::ral::UnrankedMemRef *steps, disc::ral::UnrankedMemRef *e0,
    disc::ral::UnrankedMemRef *e1, disc::ral::UnrankedMemRef *e2,
    disc::ral::UnrankedMemRef *e3, disc::ral::UnrankedMemRef *e4,
    disc::ral::UnrankedMemRef *e5) {
  ExecutionContext *ectx = asExecutionContext(ctx);
  const disc::ral::EpilogueArgs epilogue = {steps, {e0, e1, e2, e3, e4, e5}};
  if (!disc::ral::runMatmul(*ectx, disc::ral::DType::F32,
                            "disc_ral_matmul_post_f32", a, b, c, transA,
                            transB, &epilogue))
    ralFailNoReturn(ectx);
}

void _mlir_ciface_disc_ral_conv_post_f32(
    void *ctx, disc::ral::UnrankedMemRef *input,
    disc::ral::UnrankedMemRef *kernel, disc::ral::UnrankedMemRef *output,
    int64_t stride0, int64_t stride1, int64_t stride2, int64_t padLo0,
    int64_t padLo1, int64_t padLo2, int64_t padHi0, int64_t padHi1,
    int64_t padHi2, int64_t dilation0, int64_t dilation1, int64_t dilation2,
    int64_t lhsDilation0, int64_t lhsDilation1, int64_t lhsDilation2,
    int64_t groups, disc::ral::UnrankedMemRef *steps,
    disc::ral::UnrankedMemRef *e0, disc::ral::UnrankedMemRef *e1,
    disc::ral::UnrankedMemRef *e2, disc::ral::UnrankedMemRef *e3,
    disc::ral::UnrankedMemRef *e4, disc::ral::UnrankedMemRef *e5) {
  ExecutionContext *ectx = asExecutionContext(ctx);
  const disc::ral::ConvParams params = DISC_RAL_CONV_PARAMS_OF_ARGUMENTS;
  const disc::ral::EpilogueArgs epilogue = {steps, {e0, e1, e2, e3, e4, e5}};
  if (!disc::ral::runConv(*ectx, disc::ral::DType::F32,
                          "disc_ral_conv_post_f32", input, kernel, output,
                          params, &epilogue))
    ralFailNoReturn(ectx);
}

void _mlir_ciface_disc_ral_attention_f32(
    void *ctx, disc::ral::UnrankedMemRef *q, disc::ral::UnrankedMemRef *k,
    disc::ral::UnrankedMemRef *v, disc::ral::UnrankedMemRef *mask,
    disc::ral::UnrankedMemRef *out, int64_t hasMask, int64_t causal,
    double scale) {
  ExecutionContext *ectx = asExecutionContext(ctx);
  if (!disc::ral::runAttention(*ectx, "disc_ral_attention_f32", q, k, v, mask,
                               out, hasMask != 0, causal != 0, scale))
    ralFailNoReturn(ectx);
}

#define DISC_RAL_DEFINE_SORT(SUFFIX, DTYPE)                                    \
  void _mlir_ciface_disc_ral_sort_##SUFFIX(                                    \
      void *ctx, disc::ral::UnrankedMemRef *input,                             \
      disc::ral::UnrankedMemRef *values, disc::ral::UnrankedMemRef *indices,   \
      int64_t dim, int64_t descending) {                                       \
    ExecutionContext *ectx = asExecutionContext(ctx);                          \
    if (!disc::ral::runSort(*ectx, disc::ral::DType::DTYPE,                    \
                            "disc_ral_sort_" #SUFFIX, input, values, indices,  \
                            dim, descending != 0))                             \
      ralFailNoReturn(ectx);                                                   \
  }
DISC_RAL_FOR_EACH_SORT_TYPE(DISC_RAL_DEFINE_SORT)
#undef DISC_RAL_DEFINE_SORT

} // extern "C"

namespace {
/// bf16 bits of `f`, rounded to nearest even; NaN stays a (quiet) NaN.
uint16_t bf16BitsOf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}
/// On x86-64 a bf16 travels in an SSE register like a float (MLIR's
/// runner utilities use the same convention): the bits in the low half.
float asBf16Register(uint16_t bf16) {
  uint32_t word = bf16;
  float f;
  std::memcpy(&f, &word, sizeof(f));
  return f;
}
} // namespace

// f32/f64 -> bf16 conversions LLVM emits as libcalls on x86 (libgcc has
// them only from GCC 13). MLIR's runner utilities served them when the JIT
// loaded that library; the RAL serves them now.
extern "C" float disc_ral_truncsfbf2(float f) {
  return asBf16Register(bf16BitsOf(f));
}

extern "C" float disc_ral_truncdfbf2(double d) {
  if (std::isnan(d))
    return asBf16Register(0x7fc0);
  // Round to odd into f32 (truncate, then set the sticky bit when inexact),
  // then to nearest even into bf16: no double rounding.
  float t = static_cast<float>(d);
  if (std::fabs(static_cast<double>(t)) > std::fabs(d))
    t = std::nextafter(t, 0.0f);
  if (static_cast<double>(t) != d && std::isfinite(t)) {
    uint32_t bits;
    std::memcpy(&bits, &t, sizeof(bits));
    bits |= 1u;
    std::memcpy(&t, &bits, sizeof(bits));
  }
  return asBf16Register(bf16BitsOf(t));
}

// The names LLVM's libcalls use: compiled shared objects link against this
// library for them.
extern "C" float __truncsfbf2(float)
    __attribute__((alias("disc_ral_truncsfbf2"), visibility("default")));
extern "C" float __truncdfbf2(double)
    __attribute__((alias("disc_ral_truncdfbf2"), visibility("default")));

extern "C" void disc_ral_memref_copy(int64_t elemSize,
                                     disc::ral::UnrankedMemRef *src,
                                     disc::ral::UnrankedMemRef *dst) {
  disc::ral::MemRefView from = disc::ral::viewOf(src);
  disc::ral::MemRefView to = disc::ral::viewOf(dst);
  disc::ral::stridedCopy(
      static_cast<char *>(to.aligned) + to.offset * elemSize, to.strides,
      static_cast<const char *>(from.aligned) + from.offset * elemSize,
      from.strides, to.sizes, to.rank, static_cast<size_t>(elemSize));
}

namespace disc {
namespace ral {

const RalSymbol *ralSymbols(int64_t *count) {
#define DISC_RAL_SYMBOL(NAME) {#NAME, reinterpret_cast<void *>(&NAME)}
  static const RalSymbol symbols[] = {
      DISC_RAL_SYMBOL(disc_ral_alloc),
      DISC_RAL_SYMBOL(disc_ral_free),
      // memref.copy that LLVM lowering leaves as a call (MLIR's runner
      // utilities' ABI): served here, so no MLIR library is loaded at run
      // time.
      {"memrefCopy", reinterpret_cast<void *>(&disc_ral_memref_copy)},
      {"__truncsfbf2", reinterpret_cast<void *>(&disc_ral_truncsfbf2)},
      {"__truncdfbf2", reinterpret_cast<void *>(&disc_ral_truncdfbf2)},
      DISC_RAL_SYMBOL(disc_ral_cuda_launch),
      DISC_RAL_SYMBOL(_mlir_ciface_disc_ral_cuda_matmul_f32),
      DISC_RAL_SYMBOL(_mlir_ciface_disc_ral_cuda_matmul_f16),
      DISC_RAL_SYMBOL(_mlir_ciface_disc_ral_cuda_matmul_bf16),
      DISC_RAL_SYMBOL(_mlir_ciface_disc_ral_cuda_matmul_bias_f32),
      DISC_RAL_SYMBOL(_mlir_ciface_disc_ral_cuda_matmul_bias_f16),
      DISC_RAL_SYMBOL(_mlir_ciface_disc_ral_cuda_matmul_bias_bf16),
      DISC_RAL_SYMBOL(_mlir_ciface_disc_ral_cuda_conv_f32),
      DISC_RAL_SYMBOL(_mlir_ciface_disc_ral_cuda_conv_f16),
      DISC_RAL_SYMBOL(_mlir_ciface_disc_ral_cuda_conv_bf16),
      DISC_RAL_SYMBOL(_mlir_ciface_disc_ral_cuda_conv_backward_weights_f32),
      DISC_RAL_SYMBOL(_mlir_ciface_disc_ral_cuda_conv_backward_weights_f16),
      DISC_RAL_SYMBOL(_mlir_ciface_disc_ral_cuda_conv_backward_weights_bf16),
      DISC_RAL_SYMBOL(disc_ral_cuda_alloc),
      DISC_RAL_SYMBOL(disc_ral_cuda_free),
      DISC_RAL_SYMBOL(disc_ral_fail),
      DISC_RAL_SYMBOL(disc_ral_parallel_for),
      DISC_RAL_SYMBOL(disc_ral_note_variant),
      DISC_RAL_SYMBOL(disc_ral_thread_scratch),
      DISC_RAL_SYMBOL(disc_ral_profile_begin),
      DISC_RAL_SYMBOL(disc_ral_profile_end),
      DISC_RAL_SYMBOL(_mlir_ciface_disc_ral_matmul_f32),
      DISC_RAL_SYMBOL(_mlir_ciface_disc_ral_matmul_f16),
      DISC_RAL_SYMBOL(_mlir_ciface_disc_ral_matmul_bf16),
      DISC_RAL_SYMBOL(_mlir_ciface_disc_ral_conv_f32),
      DISC_RAL_SYMBOL(_mlir_ciface_disc_ral_conv_f16),
      DISC_RAL_SYMBOL(_mlir_ciface_disc_ral_conv_bf16),
      DISC_RAL_SYMBOL(_mlir_ciface_disc_ral_conv_backward_weights_f32),
      DISC_RAL_SYMBOL(_mlir_ciface_disc_ral_conv_backward_weights_f16),
      DISC_RAL_SYMBOL(_mlir_ciface_disc_ral_conv_backward_weights_bf16),
      DISC_RAL_SYMBOL(_mlir_ciface_disc_ral_matmul_post_f32),
      DISC_RAL_SYMBOL(_mlir_ciface_disc_ral_conv_post_f32),
      DISC_RAL_SYMBOL(_mlir_ciface_disc_ral_attention_f32),
#define DISC_RAL_SORT_SYMBOL(SUFFIX, DTYPE)                                    \
  DISC_RAL_SYMBOL(_mlir_ciface_disc_ral_sort_##SUFFIX),
      DISC_RAL_FOR_EACH_SORT_TYPE(DISC_RAL_SORT_SYMBOL)
#undef DISC_RAL_SORT_SYMBOL
  };
#undef DISC_RAL_SYMBOL
  if (count)
    *count = static_cast<int64_t>(sizeof(symbols) / sizeof(symbols[0]));
  return symbols;
}

} // namespace ral
} // namespace disc
