//===- FakeCudaDriver.h - what the fake libcuda records ---------*- C++ -*-===//
#ifndef DISC_UNITTESTS_CUDA_FAKECUDADRIVER_H
#define DISC_UNITTESTS_CUDA_FAKECUDADRIVER_H

#include <atomic>
#include <cstdint>

/// The fake cuBLASLt's element types (cudaDataType: 0 f32, 2 f16, 14
/// bf16), read as and written from f32, bf16 rounded to nearest even; the
/// tests round their references with the same functions.
inline float fakeLoadElement(const void *base, int64_t index, int type) {
  if (type == 2)
    return float(static_cast<const _Float16 *>(base)[index]);
  if (type == 14) {
    uint32_t bits = uint32_t(static_cast<const uint16_t *>(base)[index])
                    << 16;
    float value;
    __builtin_memcpy(&value, &bits, 4);
    return value;
  }
  return static_cast<const float *>(base)[index];
}
inline void fakeStoreElement(void *base, int64_t index, int type,
                             float value) {
  if (type == 2) {
    static_cast<_Float16 *>(base)[index] = _Float16(value);
  } else if (type == 14) {
    uint32_t bits;
    __builtin_memcpy(&bits, &value, 4);
    if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN
      bits = 0x7fc00000u;
    else
      bits += 0x7fffu + ((bits >> 16) & 1u);
    static_cast<uint16_t *>(base)[index] = uint16_t(bits >> 16);
  } else {
    static_cast<float *>(base)[index] = value;
  }
}
/// `value` rounded to `type` and back.
inline float fakeRound(float value, int type) {
  uint32_t slot = 0;
  fakeStoreElement(&slot, 0, type, value);
  return fakeLoadElement(&slot, 0, type);
}

struct FakeLaunch {
  char kernel[64] = {};
  unsigned grid[3] = {}, block[3] = {};
  unsigned sharedBytes = 0;
  void *stream = nullptr;
  void **params = nullptr;
};

struct FakeCudaState {
  static constexpr int kMaxLaunches = 2048;
  int sm = 90;               // the device's compute capability, 10 * major + minor
  bool failLaunches = false; // cuLaunchKernel returns CUDA_ERROR_ILLEGAL_ADDRESS
  int moduleLoads = 0, moduleUnloads = 0;
  const void *lastImage = nullptr;
  int numLaunches = 0;
  FakeLaunch launches[kMaxLaunches];
  int64_t allocations = 0, frees = 0, copies = 0;
  void *lastAllocStream = nullptr;
  // cuMemPoolSetAttribute(RELEASE_THRESHOLD): the last value, and how often.
  uint64_t poolReleaseThreshold = 0;
  int poolThresholdSets = 0;
  // The fake cuBLASLt (the same library, DISC_CUBLASLT_LIBRARY): matmuls
  // computed on the host, f32 only.
  int matmuls = 0;
  void *lastMatmulStream = nullptr;
  // cublasLtMatmulDescCreate calls: one per prepared problem.
  int matmulDescriptors = 0;
  // The compute type of the last matmul (68 COMPUTE_32F, 77 with TF32).
  int lastMatmulComputeType = -1;
  // Matmuls refused because a pointer was less aligned than the heuristic
  // was told (cublasLtMatmulPreference MIN_ALIGNMENT_*, 256 if unset).
  int misalignedMatmuls = 0;
  // The epilogue of the last matmul (1 DEFAULT, 4 BIAS) and how many times
  // a bias pointer was set (preparation and each call).
  unsigned lastMatmulEpilogue = 0;
  int biasPointerSets = 0;
  // The fake cuDNN (DISC_CUDNN_LIBRARY): convolutions computed on the host,
  // f32 only, cross-correlation (or convolution: the kernel flipped) with
  // groups, strides, padding, dilation.
  int convolutions = 0;
  void *lastConvStream = nullptr;
  // The math type of the last call (3 FMA; 1 tensor cores: the fake
  // heuristic's choice under the default math).
  int lastConvMathType = -1;
  // cudnnSetConvolutionNdDescriptor calls: one per prepared problem.
  int convDescriptorSets = 0;
  // cudnnConvolutionBackwardFilter calls (kernel gradients, on the host).
  int backwardFilters = 0;
  // cudnnConvolutionBackwardData calls (transposed convolutions) and
  // cudnnTransformTensor calls.
  int backwardData = 0, transforms = 0;
  // The graph (backend) API: execution plans finalized (one per prepared
  // problem) and plans executed.
  int backendPlans = 0, backendExecutes = 0;
  // Every engine the heuristics list fails to finalize its plan.
  bool rejectEveryEngine = false;
  // Library calls check their descriptors and count, but compute nothing
  // (the host cost of a whole partition: bench/cuda_host_counts.py).
  bool skipMath = false;
  // cudnnSetStream waits this long (microseconds) after setting the
  // handle's stream, so that another thread's call can come in between.
  int setStreamDelayUs = 0;
  // Each forward convolution's input pointer and the handle's stream when
  // it ran (the first kMaxConvRecords).
  static constexpr int kMaxConvRecords = 4096;
  struct ConvRecord {
    const void *x = nullptr;
    void *stream = nullptr;
  };
  ConvRecord convRecords[kMaxConvRecords];
  std::atomic<int> numConvRecords{0};
};

extern "C" FakeCudaState *fake_cuda_state();

#endif // DISC_UNITTESTS_CUDA_FAKECUDADRIVER_H
