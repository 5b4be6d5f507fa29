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

#include <algorithm>
#include <chrono>
#include <thread>
#include <cstdint>
#include <initializer_list>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {
FakeCudaState state;
int contextToken;

/// A loaded module: its fatbin's bytes (header and payload; the cubins'
/// symbol names are plain strings there).
struct FakeModule {
  const unsigned char *image;
  size_t size;
};

void recordConvolution(const void *x, void *stream) {
  int index = state.numConvRecords.fetch_add(1);
  if (index < FakeCudaState::kMaxConvRecords)
    state.convRecords[index] = {x, stream};
}
} // namespace

extern "C" {

FakeCudaState *fake_cuda_state() { return &state; }

int cuInit(unsigned) { return 0; }
int cuGetErrorName(int error, const char **name) {
  *name = error == 700   ? "CUDA_ERROR_ILLEGAL_ADDRESS"
          : error == 500 ? "CUDA_ERROR_NOT_FOUND"
                         : "CUDA_ERROR_UNKNOWN";
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
  // The fatbin header: magic (4 bytes), version (2), header size (2),
  // payload size (8).
  uint16_t headerSize;
  uint64_t payloadSize;
  std::memcpy(&headerSize, static_cast<const char *>(image) + 6, 2);
  std::memcpy(&payloadSize, static_cast<const char *>(image) + 8, 8);
  *module = new FakeModule{static_cast<const unsigned char *>(image),
                           headerSize + payloadSize};
  return 0;
}
int cuModuleUnload(void *module) {
  ++state.moduleUnloads;
  delete static_cast<FakeModule *>(module);
  return 0;
}
int cuModuleGetFunction(void **function, void *module, const char *name) {
  // A kernel the module does not define is CUDA_ERROR_NOT_FOUND, as on a
  // GPU: a launch pointed at the wrong module fails here too.
  const FakeModule *loaded = static_cast<const FakeModule *>(module);
  const size_t length = std::strlen(name) + 1; // with its NUL
  const unsigned char *end = loaded->image + loaded->size;
  if (std::search(loaded->image, end, name, name + length) == end)
    return 500;
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
  // 256-byte aligned, as cudaMallocAsync's blocks are.
  void *p = std::aligned_alloc(256, (std::max<size_t>(bytes, 1) + 255) / 256 *
                                        256);
  if (!p)
    return 2; // CUDA_ERROR_OUT_OF_MEMORY
  *ptr = reinterpret_cast<unsigned long long>(p);
  ++state.allocations;
  state.lastAllocStream = stream;
  return 0;
}
int cuDeviceGetDefaultMemPool(void **pool, int device) {
  static int pools[8];
  *pool = &pools[device & 7];
  return 0;
}
int cuMemPoolSetAttribute(void *, int attr, void *value) {
  if (attr == 4) { // CU_MEMPOOL_ATTR_RELEASE_THRESHOLD
    std::memcpy(&state.poolReleaseThreshold, value, 8);
    ++state.poolThresholdSets;
  }
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

// ---- cuBLASLt, column-major, computed on the host (f32) -------------------

struct FakeDesc {
  int transA = 0, transB = 0, computeType = 0;
  uint32_t epilogue = 1; // CUBLASLT_EPILOGUE_DEFAULT; 4 is BIAS
  const void *bias = nullptr;
};
struct FakeLayout {
  int type = 0;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int32_t batch = 1;
  int64_t batchOffset = 0;
};
int cublasLtCreate(void **handle) {
  *handle = &contextToken;
  return 0;
}
int cublasLtMatmulDescCreate(FakeDesc **desc, int computeType, int scaleType) {
  ++state.matmulDescriptors;
  // COMPUTE_32F or COMPUTE_32F_FAST_TF32, f32 scaling.
  if ((computeType != 68 && computeType != 77) || scaleType != 0)
    return 7; // CUBLAS_STATUS_INVALID_VALUE
  *desc = new FakeDesc;
  (*desc)->computeType = computeType;
  return 0;
}
int cublasLtMatmulDescDestroy(FakeDesc *desc) {
  delete desc;
  return 0;
}
int cublasLtMatmulDescSetAttribute(FakeDesc *desc, int attribute,
                                   const void *value, size_t bytes) {
  if (attribute == 7) { // EPILOGUE: DEFAULT or BIAS
    uint32_t epilogue = 0;
    if (bytes != sizeof(epilogue))
      return 7;
    std::memcpy(&epilogue, value, bytes);
    if (epilogue != 1 && epilogue != 4)
      return 15;
    desc->epilogue = epilogue;
    return 0;
  }
  if (attribute == 8) { // BIAS_POINTER
    if (bytes != sizeof(void *))
      return 7;
    std::memcpy(&desc->bias, value, bytes);
    ++state.biasPointerSets;
    return 0;
  }
  if (bytes != sizeof(int))
    return 7;
  int op = *static_cast<const int *>(value);
  if (op != 0 && op != 1)
    return 7;
  if (attribute == 3)
    desc->transA = op;
  else if (attribute == 4)
    desc->transB = op;
  else
    return 7;
  return 0;
}
int cublasLtMatrixLayoutCreate(FakeLayout **layout, int type, uint64_t rows,
                               uint64_t cols, int64_t ld) {
  if (ld < (int64_t)rows || ld < 1)
    return 7; // column-major: ld >= rows
  *layout = new FakeLayout{type, rows, cols, ld};
  return 0;
}
int cublasLtMatrixLayoutDestroy(FakeLayout *layout) {
  delete layout;
  return 0;
}
int cublasLtMatrixLayoutSetAttribute(FakeLayout *layout, int attribute,
                                     const void *value, size_t bytes) {
  if (attribute == 5 && bytes == 4)
    layout->batch = *static_cast<const int32_t *>(value);
  else if (attribute == 6 && bytes == 8)
    layout->batchOffset = *static_cast<const int64_t *>(value);
  else
    return 7;
  return 0;
}
// A preference: the minimum pointer alignments (A, B, C, D) the caller
// promises, 256 bytes each unless set, as in cuBLASLt.
struct FakePreference {
  uint32_t minAlignment[4] = {256, 256, 256, 256};
};
int cublasLtMatmulPreferenceCreate(FakePreference **preference) {
  *preference = new FakePreference;
  return 0;
}
int cublasLtMatmulPreferenceDestroy(FakePreference *preference) {
  delete preference;
  return 0;
}
int cublasLtMatmulPreferenceSetAttribute(FakePreference *preference,
                                         int attribute, const void *value,
                                         size_t bytes) {
  if (attribute == 1 && bytes == 8) // MAX_WORKSPACE_BYTES
    return 0;
  if (attribute >= 5 && attribute <= 8 && bytes == 4) { // MIN_ALIGNMENT_*
    uint32_t alignment = *static_cast<const uint32_t *>(value);
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
      return 7;
    preference->minAlignment[attribute - 5] = alignment;
    return 0;
  }
  return 7;
}
struct FakeHeuristic {
  uint64_t algo[8];
  size_t workspaceSize;
  int state;
  float waves;
  int reserved[4];
};
// The algorithm remembers the alignments it was chosen for (algo[0..3]):
// cublasLtMatmul refuses pointers less aligned, as cuBLASLt's kernels may.
int cublasLtMatmulAlgoGetHeuristic(void *, FakeDesc *, FakeLayout *,
                                   FakeLayout *, FakeLayout *, FakeLayout *,
                                   FakePreference *preference, int requested,
                                   FakeHeuristic *results, int *found) {
  if (requested < 1)
    return 7;
  std::memset(results, 0, sizeof(FakeHeuristic));
  for (int i = 0; i < 4; ++i)
    results[0].algo[i] = preference->minAlignment[i];
  results[0].workspaceSize = 4096; // exercises the workspace allocation
  *found = 1;
  return 0;
}
int cublasLtMatmul(void *, FakeDesc *desc, const float *alpha, const void *a,
                   FakeLayout *la, const void *b, FakeLayout *lb,
                   const float *beta, const void *c, FakeLayout *lc, void *d,
                   FakeLayout *ld, const uint64_t *algo, void *workspace,
                   size_t workspaceBytes, void *stream) {
  // f32, f16 or bf16, the same for every matrix (and the bias).
  const int type = ld->type;
  if ((type != 0 && type != 2 && type != 14) || la->type != type ||
      lb->type != type || lc->type != type)
    return 15; // CUBLAS_STATUS_NOT_SUPPORTED
  if (workspaceBytes && !workspace)
    return 7;
  if (desc->epilogue == 4 && !desc->bias)
    return 7; // BIAS without a bias pointer
  const void *pointers[4] = {a, b, c, d};
  for (int i = 0; i < 4; ++i)
    if (reinterpret_cast<uintptr_t>(pointers[i]) % algo[i] != 0) {
      ++state.misalignedMatmuls;
      return 15; // the algorithm needs more alignment than the pointer has
    }
  if (state.skipMath) { // counting only (bench/cuda_host_counts.py)
    ++state.matmuls;
    state.lastMatmulStream = stream;
    return 0;
  }
  // op(A): m x k, op(B): k x n, D: m x n, all column-major.
  uint64_t m = desc->transA ? la->cols : la->rows;
  uint64_t k = desc->transA ? la->rows : la->cols;
  uint64_t kb = desc->transB ? lb->cols : lb->rows;
  uint64_t n = desc->transB ? lb->rows : lb->cols;
  if (k != kb || ld->rows != m || ld->cols != n || lc->rows != m ||
      lc->cols != n || la->batch != ld->batch || lb->batch != ld->batch)
    return 7;
  for (int32_t batch = 0; batch < ld->batch; ++batch) {
    const int64_t ao = batch * la->batchOffset, bo = batch * lb->batchOffset,
                  co = batch * lc->batchOffset, dout = batch * ld->batchOffset;
    for (uint64_t i = 0; i < m; ++i)
      for (uint64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (uint64_t p = 0; p < k; ++p) {
          float x = fakeLoadElement(
              a, ao + (desc->transA ? p + i * la->ld : i + p * la->ld), type);
          float y = fakeLoadElement(
              b, bo + (desc->transB ? j + p * lb->ld : p + j * lb->ld), type);
          sum += double(x) * y;
        }
        float prior =
            *beta != 0 ? fakeLoadElement(c, co + i + j * lc->ld, type) : 0.0f;
        float value = *alpha * float(sum) + *beta * prior;
        if (desc->epilogue == 4) // one bias per row of column-major D
          value += fakeLoadElement(desc->bias, i, type);
        fakeStoreElement(d, dout + i + j * ld->ld, type, value);
      }
  }
  ++state.matmuls;
  state.lastMatmulStream = stream;
  state.lastMatmulComputeType = desc->computeType;
  state.lastMatmulEpilogue = desc->epilogue;
  return 0;
}

// ---- cuDNN (legacy descriptors), computed on the host (f32) ---------------

struct FakeTensor {
  int type = -1, rank = 0;
  int dims[8] = {}, strides[8] = {};
};
struct FakeConv {
  int spatial = 0, pads[6] = {}, strides[6] = {}, dilations[6] = {};
  int mode = -1, groups = 1, math = 0;
};
struct FakeHandle {
  void *stream = nullptr;
};
int cudnnCreate(FakeHandle **handle) {
  *handle = new FakeHandle;
  return 0;
}
int cudnnSetStream(FakeHandle *handle, void *stream) {
  handle->stream = stream;
  if (state.setStreamDelayUs > 0)
    std::this_thread::sleep_for(
        std::chrono::microseconds(state.setStreamDelayUs));
  return 0;
}
const char *cudnnGetErrorString(int status) {
  return status == 3 ? "CUDNN_STATUS_BAD_PARAM" : "CUDNN_STATUS_NOT_SUPPORTED";
}
int cudnnCreateTensorDescriptor(FakeTensor **t) {
  *t = new FakeTensor;
  return 0;
}
int cudnnDestroyTensorDescriptor(FakeTensor *t) {
  delete t;
  return 0;
}
int cudnnSetTensorNdDescriptor(FakeTensor *t, int type, int rank,
                               const int *dims, const int *strides) {
  if (rank < 4 || rank > 8)
    return 3;
  t->type = type, t->rank = rank;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] < 1 || strides[i] < 1)
      return 3; // CUDNN_STATUS_BAD_PARAM
    t->dims[i] = dims[i], t->strides[i] = strides[i];
  }
  return 0;
}
int cudnnCreateFilterDescriptor(FakeTensor **t) {
  *t = new FakeTensor;
  return 0;
}
int cudnnDestroyFilterDescriptor(FakeTensor *t) {
  delete t;
  return 0;
}
int cudnnSetFilterNdDescriptor(FakeTensor *t, int type, int format, int rank,
                               const int *dims) {
  if (format != 0 || rank < 4 || rank > 8)
    return 3;
  t->type = type, t->rank = rank;
  int stride = 1;
  for (int i = rank - 1; i >= 0; --i) {
    if (dims[i] < 1)
      return 3;
    t->dims[i] = dims[i], t->strides[i] = stride;
    stride *= dims[i];
  }
  return 0;
}
int cudnnCreateConvolutionDescriptor(FakeConv **c) {
  *c = new FakeConv;
  return 0;
}
int cudnnDestroyConvolutionDescriptor(FakeConv *c) {
  delete c;
  return 0;
}
int cudnnSetConvolutionNdDescriptor(FakeConv *c, int spatial, const int *pads,
                                    const int *strides, const int *dilations,
                                    int mode, int computeType) {
  ++state.convDescriptorSets;
  if (spatial < 2 || spatial > 6 || computeType != 0)
    return 3;
  c->spatial = spatial, c->mode = mode;
  for (int i = 0; i < spatial; ++i) {
    if (pads[i] < 0 || strides[i] < 1 || dilations[i] < 1)
      return 3;
    c->pads[i] = pads[i], c->strides[i] = strides[i];
    c->dilations[i] = dilations[i];
  }
  return 0;
}
int cudnnSetConvolutionGroupCount(FakeConv *c, int groups) {
  if (groups < 1)
    return 3;
  c->groups = groups;
  return 0;
}
int cudnnSetConvolutionMathType(FakeConv *c, int math) {
  c->math = math;
  return 0;
}
struct FakeAlgoPerf {
  int algo, status;
  float time;
  size_t memory;
  int determinism, mathType, reserved[3];
};
} // extern "C"

namespace {
/// The heuristics' answer: one algorithm (1 forward, 2 backward filter, 3
/// backward data), so each call can check it gets its own.
/// Its math type is the descriptor's, except that under the default math
/// (TF32 allowed) it picks a tensor-core algorithm, as cuDNN does on sm_80
/// and newer.
int oneAlgorithm(int algo, const FakeConv *conv, int requested, int *returned,
                 FakeAlgoPerf *results) {
  if (requested < 1)
    return 3;
  std::memset(results, 0, sizeof(FakeAlgoPerf));
  results[0].algo = algo;
  results[0].mathType = conv->math == 0 ? 1 : conv->math;
  *returned = 1;
  return 0;
}
} // namespace

extern "C" {
int cudnnGetConvolutionForwardAlgorithm_v7(FakeHandle *, FakeTensor *,
                                           FakeTensor *, FakeConv *conv,
                                           FakeTensor *, int requested,
                                           int *returned,
                                           FakeAlgoPerf *results) {
  return oneAlgorithm(1, conv, requested, returned, results);
}
int cudnnGetConvolutionForwardWorkspaceSize(FakeHandle *, FakeTensor *,
                                            FakeTensor *, FakeConv *,
                                            FakeTensor *, int algo,
                                            size_t *bytes) {
  *bytes = algo == 1 ? 2048 : 0; // exercises the workspace allocation
  return 0;
}
} // extern "C"

namespace {

/// Checks the descriptors of x (input), w (filter) and y (output) against
/// each other, then calls tap(xOffset, wOffset, yOffset, yIndex) for every
/// multiply-add inside x, in the order n, o, output position, c, kernel
/// offset (yIndex: the output element's dense index). Mode 1 is
/// cross-correlation, mode 0 convolution (the kernel read flipped).
/// Returns a cuDNN status.
template <typename Tap>
int forEachConvTap(FakeTensor *x, FakeTensor *w, FakeTensor *y,
                   FakeConv *conv, Tap tap) {
  if (x->type != 0 || w->type != 0 || y->type != 0)
    return 9; // CUDNN_STATUS_NOT_SUPPORTED: the fake does f32 only
  if ((conv->mode != 0 && conv->mode != 1) || x->rank != w->rank ||
      x->rank != y->rank ||
      conv->spatial != x->rank - 2)
    return 3;
  const int spatial = conv->spatial, groups = conv->groups;
  const int n = x->dims[0], c = x->dims[1], o = y->dims[1];
  const int cPerGroup = w->dims[1], oPerGroup = o / groups;
  if (w->dims[0] != o || cPerGroup * groups != c || y->dims[0] != n)
    return 3;
  for (int s = 0; s < spatial; ++s) {
    int span = (w->dims[2 + s] - 1) * conv->dilations[s] + 1;
    int expected =
        (x->dims[2 + s] + 2 * conv->pads[s] - span) / conv->strides[s] + 1;
    if (y->dims[2 + s] != expected)
      return 3;
  }
  int outSpatial = 1, window = 1;
  for (int s = 0; s < spatial; ++s)
    outSpatial *= y->dims[2 + s], window *= w->dims[2 + s];
  for (int b = 0; b < n; ++b)
    for (int oc = 0; oc < o; ++oc)
      for (int p = 0; p < outSpatial; ++p) {
        int outPos[6], rem = p;
        for (int s = spatial - 1; s >= 0; --s)
          outPos[s] = rem % y->dims[2 + s], rem /= y->dims[2 + s];
        int64_t yOffset =
            (int64_t)b * y->strides[0] + (int64_t)oc * y->strides[1];
        for (int s = 0; s < spatial; ++s)
          yOffset += (int64_t)outPos[s] * y->strides[2 + s];
        const int64_t yIndex = ((int64_t)b * o + oc) * outSpatial + p;
        int g = oc / oPerGroup;
        for (int ic = 0; ic < cPerGroup; ++ic)
          for (int q = 0; q < window; ++q) {
            int k[6], r = q;
            for (int s = spatial - 1; s >= 0; --s)
              k[s] = r % w->dims[2 + s], r /= w->dims[2 + s];
            int64_t xOffset = (int64_t)b * x->strides[0] +
                              (int64_t)(g * cPerGroup + ic) * x->strides[1];
            int64_t wOffset = (int64_t)oc * w->strides[0] +
                              (int64_t)ic * w->strides[1];
            bool inside = true;
            for (int s = 0; s < spatial; ++s) {
              int pos = outPos[s] * conv->strides[s] - conv->pads[s] +
                        k[s] * conv->dilations[s];
              inside &= pos >= 0 && pos < x->dims[2 + s];
              xOffset += (int64_t)pos * x->strides[2 + s];
              const int kw = conv->mode == 0 ? w->dims[2 + s] - 1 - k[s] : k[s];
              wOffset += (int64_t)kw * w->strides[2 + s];
            }
            if (inside)
              tap(xOffset, wOffset, yOffset, yIndex);
          }
      }
  return 0;
}

int64_t elementsOf(const FakeTensor *t) {
  int64_t count = 1;
  for (int i = 0; i < t->rank; ++i)
    count *= t->dims[i];
  return count;
}

/// Calls visit(offset, index) for every element of t (dense row-major
/// index, offset from t's strides).
template <typename Visit> void forEachOffset(const FakeTensor *t, Visit visit) {
  const int64_t count = elementsOf(t);
  for (int64_t index = 0; index < count; ++index) {
    int64_t offset = 0, rest = index;
    for (int d = t->rank - 1; d >= 0; --d)
      offset += (rest % t->dims[d]) * t->strides[d], rest /= t->dims[d];
    visit(offset, index);
  }
}

/// The three computations, shared by the legacy entry points and the
/// graph API's execute: y from x and w; dw from x and dy (a packed filter,
/// so its offsets are dense); dx from w and dy (the transpose of the
/// forward's taps, the kernel read flipped in mode 0). Each returns a
/// cuDNN status and records the call.
int forwardOnHost(FakeTensor *x, const float *xData, FakeTensor *w,
                  const float *wData, FakeConv *conv, float alpha, float beta,
                  FakeTensor *y, float *yData) {
  if (state.skipMath) { // counting only (bench/cuda_host_counts.py)
    ++state.convolutions;
    return 0;
  }
  // Sums per output element (dense), then written where y's strides say.
  std::vector<double> sums(elementsOf(y));
  int status = forEachConvTap(
      x, w, y, conv,
      [&](int64_t xOffset, int64_t wOffset, int64_t, int64_t yIndex) {
        sums[yIndex] += double(xData[xOffset]) * wData[wOffset];
      });
  if (status)
    return status;
  forEachOffset(y, [&](int64_t yOffset, int64_t yIndex) {
    float prior = beta != 0 ? yData[yOffset] : 0.0f;
    yData[yOffset] = alpha * float(sums[yIndex]) + beta * prior;
  });
  ++state.convolutions;
  return 0;
}

int backwardFilterOnHost(FakeTensor *x, const float *xData, FakeTensor *dy,
                         const float *dyData, FakeConv *conv, float alpha,
                         float beta, FakeTensor *dw, float *dwData) {
  if (state.skipMath) { // counting only (bench/cuda_host_counts.py)
    ++state.backwardFilters;
    return 0;
  }
  std::vector<double> sums(elementsOf(dw));
  int status = forEachConvTap(
      x, dw, dy, conv,
      [&](int64_t xOffset, int64_t wOffset, int64_t yOffset, int64_t) {
        sums[wOffset] += double(xData[xOffset]) * dyData[yOffset];
      });
  if (status)
    return status;
  for (size_t i = 0; i < sums.size(); ++i) {
    float prior = beta != 0 ? dwData[i] : 0.0f;
    dwData[i] = alpha * float(sums[i]) + beta * prior;
  }
  ++state.backwardFilters;
  return 0;
}

int backwardDataOnHost(FakeTensor *w, const float *wData, FakeTensor *dy,
                       const float *dyData, FakeConv *conv, float alpha,
                       float beta, FakeTensor *dx, float *dxData) {
  if (state.skipMath) { // counting only (bench/cuda_host_counts.py)
    ++state.backwardData;
    return 0;
  }
  std::map<int64_t, double> sums; // by dx offset
  int status = forEachConvTap(
      dx, w, dy, conv,
      [&](int64_t xOffset, int64_t wOffset, int64_t yOffset, int64_t) {
        sums[xOffset] += double(wData[wOffset]) * dyData[yOffset];
      });
  if (status)
    return status;
  forEachOffset(dx, [&](int64_t xOffset, int64_t) {
    float prior = beta != 0 ? dxData[xOffset] : 0.0f;
    auto it = sums.find(xOffset);
    dxData[xOffset] =
        alpha * float(it == sums.end() ? 0.0 : it->second) + beta * prior;
  });
  ++state.backwardData;
  return 0;
}

} // namespace

extern "C" {

int cudnnConvolutionForward(FakeHandle *handle, const float *alpha,
                            FakeTensor *x, const float *xData, FakeTensor *w,
                            const float *wData, FakeConv *conv, int algo,
                            void *workspace, size_t workspaceBytes,
                            const float *beta, FakeTensor *y, float *yData) {
  if ((workspaceBytes && !workspace) || algo != 1)
    return 3;
  if (int status =
          forwardOnHost(x, xData, w, wData, conv, *alpha, *beta, y, yData))
    return status;
  state.lastConvStream = handle->stream;
  state.lastConvMathType = conv->math;
  recordConvolution(xData, handle->stream);
  return 0;
}
int cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    FakeHandle *, FakeTensor *, FakeTensor *, FakeConv *conv, FakeTensor *,
    int requested, int *returned, FakeAlgoPerf *results) {
  return oneAlgorithm(2, conv, requested, returned, results);
}
int cudnnGetConvolutionBackwardFilterWorkspaceSize(FakeHandle *, FakeTensor *,
                                                   FakeTensor *, FakeConv *,
                                                   FakeTensor *, int algo,
                                                   size_t *bytes) {
  *bytes = algo == 2 ? 4096 : 0;
  return 0;
}
int cudnnConvolutionBackwardFilter(FakeHandle *handle, const float *alpha,
                                   FakeTensor *x, const float *xData,
                                   FakeTensor *dy, const float *dyData,
                                   FakeConv *conv, int algo, void *workspace,
                                   size_t workspaceBytes, const float *beta,
                                   FakeTensor *dw, float *dwData) {
  if ((workspaceBytes && !workspace) || algo != 2)
    return 3;
  if (int status = backwardFilterOnHost(x, xData, dy, dyData, conv, *alpha,
                                        *beta, dw, dwData))
    return status;
  state.lastConvStream = handle->stream;
  state.lastConvMathType = conv->math;
  return 0;
}
int cudnnGetConvolutionBackwardDataAlgorithm_v7(
    FakeHandle *, FakeTensor *, FakeTensor *, FakeConv *conv, FakeTensor *,
    int requested, int *returned, FakeAlgoPerf *results) {
  return oneAlgorithm(3, conv, requested, returned, results);
}
int cudnnGetConvolutionBackwardDataWorkspaceSize(FakeHandle *, FakeTensor *,
                                                 FakeTensor *, FakeConv *,
                                                 FakeTensor *, int algo,
                                                 size_t *bytes) {
  *bytes = algo == 3 ? 1024 : 0;
  return 0;
}
int cudnnConvolutionBackwardData(FakeHandle *handle, const float *alpha,
                                 FakeTensor *w, const float *wData,
                                 FakeTensor *dy, const float *dyData,
                                 FakeConv *conv, int algo, void *workspace,
                                 size_t workspaceBytes, const float *beta,
                                 FakeTensor *dx, float *dxData) {
  if ((workspaceBytes && !workspace) || algo != 3 || w->strides[0] < 1)
    return 3;
  if (int status = backwardDataOnHost(w, wData, dy, dyData, conv, *alpha,
                                      *beta, dx, dxData))
    return status;
  state.lastConvStream = handle->stream;
  state.lastConvMathType = conv->math;
  return 0;
}
// y = alpha * x + beta * y elementwise, each read through its strides.
int cudnnTransformTensor(FakeHandle *, const float *alpha, FakeTensor *x,
                         const float *xData, const float *beta, FakeTensor *y,
                         float *yData) {
  if (x->rank != y->rank || x->type != 0 || y->type != 0)
    return 3;
  for (int d = 0; d < x->rank; ++d)
    if (x->dims[d] != y->dims[d])
      return 3;
  std::vector<int64_t> from;
  forEachOffset(x, [&](int64_t offset, int64_t) { from.push_back(offset); });
  forEachOffset(y, [&](int64_t offset, int64_t index) {
    float prior = *beta != 0 ? yData[offset] : 0.0f;
    yData[offset] = *alpha * xData[from[index]] + *beta * prior;
  });
  ++state.transforms;
  return 0;
}

} // extern "C"

// ---- cuDNN's graph (backend) API, computed on the host (f32) ------------
//
// Descriptors keep their attributes as given; setting one checks its name
// against the descriptor's type and its attribute type (cudnn_graph.h's
// numbers), finalizing checks that everything the descriptor needs is
// there, and executing a plan rebuilds the legacy fake's tensors and
// convolution from the graph and computes on the host. The fake engines:
// 0 uses tensor cores, 1 is FMA, 2 takes no problem (its plan does not
// finalize), 3 down-converts its inputs. Heuristic mode A lists 3, 0, 2, 1
// (for backward data only 0), the fallback list 1.

namespace {

enum : int {
  kBadParam = 3,
  // Descriptor types.
  kDescConvolution = 1,
  kDescEngine = 2,
  kDescEngineConfig = 3,
  kDescHeuristics = 4,
  kDescPlan = 5,
  kDescForward = 10,
  kDescBackwardFilter = 11,
  kDescBackwardData = 12,
  kDescGraph = 15,
  kDescPack = 16,
  kDescTensor = 17,
  // Attribute types.
  kAttrHandle = 0,
  kAttrDataType = 1,
  kAttrInt64 = 3,
  kAttrFloat = 4,
  kAttrVoidPtr = 6,
  kAttrConvMode = 7,
  kAttrHeurMode = 8,
  kAttrNumericalNote = 11,
  kAttrDescriptor = 15,
};

struct FakeBackend {
  int type;
  bool finalized = false;
  struct Attribute {
    int type = -1;
    int64_t count = 0;
    std::vector<char> bytes;
  };
  std::map<int, Attribute> attributes;
  int engine = -1;             // engine configs and engines
  FakeBackend *graph = nullptr; // engine configs and engines
  int64_t workspace = 0;        // plans

  bool has(int name) const { return attributes.count(name) != 0; }
  template <typename T> std::vector<T> values(int name) const {
    const Attribute &a = attributes.at(name);
    std::vector<T> out(a.count);
    std::memcpy(out.data(), a.bytes.data(), a.bytes.size());
    return out;
  }
  template <typename T> T value(int name) const { return values<T>(name)[0]; }
};

/// For each attribute name: the descriptor type it belongs to, its
/// attribute type, and for descriptor values the type they must have.
struct AttributeRule {
  int descriptor, type, valueDescriptor;
};
const std::map<int, AttributeRule> &attributeRules() {
  static const std::map<int, AttributeRule> rules = {
      {100, {kDescConvolution, kAttrDataType, -1}},
      {101, {kDescConvolution, kAttrConvMode, -1}},
      {102, {kDescConvolution, kAttrInt64, -1}},
      {103, {kDescConvolution, kAttrInt64, -1}},
      {104, {kDescConvolution, kAttrInt64, -1}},
      {105, {kDescConvolution, kAttrInt64, -1}},
      {106, {kDescConvolution, kAttrInt64, -1}},
      {200, {kDescHeuristics, kAttrHeurMode, -1}},
      {201, {kDescHeuristics, kAttrDescriptor, kDescGraph}},
      {400, {kDescPlan, kAttrHandle, -1}},
      {401, {kDescPlan, kAttrDescriptor, kDescEngineConfig}},
      {700, {kDescForward, kAttrFloat, -1}},
      {701, {kDescForward, kAttrFloat, -1}},
      {702, {kDescForward, kAttrDescriptor, kDescConvolution}},
      {703, {kDescForward, kAttrDescriptor, kDescTensor}},
      {704, {kDescForward, kAttrDescriptor, kDescTensor}},
      {705, {kDescForward, kAttrDescriptor, kDescTensor}},
      {706, {kDescBackwardData, kAttrFloat, -1}},
      {707, {kDescBackwardData, kAttrFloat, -1}},
      {708, {kDescBackwardData, kAttrDescriptor, kDescConvolution}},
      {709, {kDescBackwardData, kAttrDescriptor, kDescTensor}},
      {710, {kDescBackwardData, kAttrDescriptor, kDescTensor}},
      {711, {kDescBackwardData, kAttrDescriptor, kDescTensor}},
      {712, {kDescBackwardFilter, kAttrFloat, -1}},
      {713, {kDescBackwardFilter, kAttrFloat, -1}},
      {714, {kDescBackwardFilter, kAttrDescriptor, kDescConvolution}},
      {715, {kDescBackwardFilter, kAttrDescriptor, kDescTensor}},
      {716, {kDescBackwardFilter, kAttrDescriptor, kDescTensor}},
      {717, {kDescBackwardFilter, kAttrDescriptor, kDescTensor}},
      {800, {kDescGraph, kAttrHandle, -1}},
      {801, {kDescGraph, kAttrDescriptor, -2}}, // any operation
      {900, {kDescTensor, kAttrInt64, -1}},
      {901, {kDescTensor, kAttrDataType, -1}},
      {902, {kDescTensor, kAttrInt64, -1}},
      {903, {kDescTensor, kAttrInt64, -1}},
      {906, {kDescTensor, kAttrInt64, -1}},
      {1000, {kDescPack, kAttrInt64, -1}},
      {1001, {kDescPack, kAttrVoidPtr, -1}},
      {1003, {kDescPack, kAttrVoidPtr, -1}},
  };
  return rules;
}

size_t attributeBytes(int type) {
  switch (type) {
  case kAttrInt64:
    return 8;
  case kAttrHandle:
  case kAttrVoidPtr:
  case kAttrDescriptor:
    return sizeof(void *);
  default:
    return 4; // enums and float
  }
}

bool isOperation(int type) {
  return type == kDescForward || type == kDescBackwardFilter ||
         type == kDescBackwardData;
}

/// The operation's alpha, beta, convolution, x, w, y attribute names.
const int *operationNames(int type) {
  static const int forward[6] = {700, 701, 702, 704, 703, 705};
  static const int backwardData[6] = {706, 707, 708, 710, 709, 711};
  static const int backwardFilter[6] = {712, 713, 714, 716, 715, 717};
  return type == kDescForward      ? forward
         : type == kDescBackwardData ? backwardData
                                     : backwardFilter;
}

std::vector<int> heuristicEngines(int mode, const FakeBackend *graph) {
  if (mode == 2)
    return {1};
  const FakeBackend *op = graph->value<FakeBackend *>(801);
  if (op->type == kDescBackwardData)
    return {0};
  return {3, 0, 2, 1};
}

int finalizeChecks(FakeBackend *d) {
  auto all = [&](std::initializer_list<int> names) {
    for (int name : names)
      if (!d->has(name))
        return false;
    return true;
  };
  switch (d->type) {
  case kDescTensor: {
    if (!all({900, 901, 902, 903, 906}))
      return kBadParam;
    auto dims = d->values<int64_t>(902), strides = d->values<int64_t>(903);
    if (dims.size() != strides.size() || dims.size() < 3 || dims.size() > 8)
      return kBadParam;
    for (size_t i = 0; i < dims.size(); ++i)
      if (dims[i] < 1 || strides[i] < 1)
        return kBadParam;
    int64_t alignment = d->value<int64_t>(900);
    if (alignment < 1 || alignment > 16 || (alignment & (alignment - 1)))
      return kBadParam;
    return 0;
  }
  case kDescConvolution: {
    if (!all({100, 101, 102, 103, 104, 105, 106}))
      return kBadParam;
    int64_t spatial = d->value<int64_t>(106);
    for (int name : {102, 103, 104, 105})
      if (d->attributes[name].count != spatial)
        return kBadParam;
    ++state.convDescriptorSets;
    return 0;
  }
  case kDescForward:
  case kDescBackwardFilter:
  case kDescBackwardData: {
    const int *names = operationNames(d->type);
    for (int i = 0; i < 6; ++i)
      if (!d->has(names[i]))
        return kBadParam;
    return 0;
  }
  case kDescGraph:
    return all({800, 801}) ? 0 : kBadParam;
  case kDescHeuristics:
    return all({200, 201}) ? 0 : kBadParam;
  case kDescPlan: {
    if (!all({400, 401}))
      return kBadParam;
    const FakeBackend *config = d->value<FakeBackend *>(401);
    if (config->engine == 2 || state.rejectEveryEngine)
      return 9; // the fake's CUDNN_STATUS_NOT_SUPPORTED
    const FakeBackend *op = config->graph->value<FakeBackend *>(801);
    d->workspace = op->type == kDescForward          ? 2048
                   : op->type == kDescBackwardFilter ? 4096
                                                     : 1024;
    ++state.backendPlans;
    return 0;
  }
  case kDescPack:
    if (!all({1000, 1001, 1003}) ||
        d->attributes[1000].count != d->attributes[1001].count)
      return kBadParam;
    return 0;
  default:
    return kBadParam;
  }
}

/// The legacy fake's tensor from a graph tensor.
FakeTensor asTensor(const FakeBackend *t) {
  FakeTensor out;
  auto dims = t->values<int64_t>(902), strides = t->values<int64_t>(903);
  out.type = t->value<int>(901);
  out.rank = static_cast<int>(dims.size());
  for (int i = 0; i < out.rank; ++i)
    out.dims[i] = int(dims[i]), out.strides[i] = int(strides[i]);
  return out;
}

} // namespace

extern "C" {

int cudnnBackendCreateDescriptor(int type, FakeBackend **d) {
  *d = new FakeBackend{type};
  return 0;
}
int cudnnBackendDestroyDescriptor(FakeBackend *d) {
  delete d;
  return 0;
}
int cudnnBackendSetAttribute(FakeBackend *d, int name, int type,
                             int64_t count, const void *values) {
  auto rule = attributeRules().find(name);
  if (d->finalized || rule == attributeRules().end() ||
      rule->second.descriptor != d->type || rule->second.type != type ||
      count < 1 || !values)
    return kBadParam;
  if (rule->second.valueDescriptor != -1) {
    auto *const *given = static_cast<FakeBackend *const *>(values);
    for (int64_t i = 0; i < count; ++i) {
      const int want = rule->second.valueDescriptor;
      if (!given[i] || !given[i]->finalized ||
          (want == -2 ? !isOperation(given[i]->type)
                      : given[i]->type != want))
        return kBadParam;
    }
  }
  FakeBackend::Attribute &a = d->attributes[name];
  a.type = type, a.count = count;
  const char *bytes = static_cast<const char *>(values);
  a.bytes.assign(bytes, bytes + count * attributeBytes(type));
  return 0;
}
int cudnnBackendFinalize(FakeBackend *d) {
  if (d->finalized)
    return kBadParam;
  if (int status = finalizeChecks(d))
    return status;
  d->finalized = true;
  return 0;
}
int cudnnBackendGetAttribute(FakeBackend *d, int name, int type,
                             int64_t requested, int64_t *returned,
                             void *values) {
  if (!d->finalized || !returned)
    return kBadParam;
  if (d->type == kDescHeuristics && name == 202 && type == kAttrDescriptor) {
    const FakeBackend *graph = d->value<FakeBackend *>(201);
    std::vector<int> engines =
        heuristicEngines(d->value<int>(200), graph);
    if (requested == 0) {
      *returned = static_cast<int64_t>(engines.size());
      return 0;
    }
    auto **configs = static_cast<FakeBackend **>(values);
    int64_t n = std::min<int64_t>(requested, engines.size());
    for (int64_t i = 0; i < n; ++i) {
      if (configs[i]->type != kDescEngineConfig)
        return kBadParam;
      configs[i]->engine = engines[i];
      configs[i]->graph = const_cast<FakeBackend *>(graph);
      configs[i]->finalized = true;
    }
    *returned = n;
    return 0;
  }
  if (d->type == kDescEngineConfig && name == 300 &&
      type == kAttrDescriptor && requested >= 1) {
    auto *engine = *static_cast<FakeBackend **>(values);
    if (engine->type != kDescEngine)
      return kBadParam;
    engine->engine = d->engine, engine->graph = d->graph;
    engine->finalized = true;
    *returned = 1;
    return 0;
  }
  if (d->type == kDescEngine && name == 1303 && type == kAttrNumericalNote) {
    int *notes = static_cast<int *>(values);
    *returned = 0;
    if (d->engine == 0 && requested >= 1)
      notes[(*returned)++] = 0; // tensor cores
    if (d->engine == 3 && requested >= 1)
      notes[(*returned)++] = 1; // down-converts its inputs
    return 0;
  }
  if (d->type == kDescEngine && name == 1301 && type == kAttrInt64) {
    *static_cast<int64_t *>(values) = 100 + d->engine;
    *returned = 1;
    return 0;
  }
  if (d->type == kDescPlan && name == 402 && type == kAttrInt64) {
    *static_cast<int64_t *>(values) = d->workspace;
    *returned = 1;
    return 0;
  }
  return kBadParam;
}
int cudnnBackendExecute(FakeHandle *handle, FakeBackend *plan,
                        FakeBackend *pack) {
  if (!plan->finalized || plan->type != kDescPlan || !pack->finalized ||
      pack->type != kDescPack || plan->value<FakeHandle *>(400) != handle)
    return kBadParam;
  const FakeBackend *config = plan->value<FakeBackend *>(401);
  const FakeBackend *graph = config->graph;
  if (graph->value<FakeHandle *>(800) != handle)
    return kBadParam;
  const FakeBackend *op = graph->value<FakeBackend *>(801);
  const int *names = operationNames(op->type);
  const FakeBackend *convolution = op->value<FakeBackend *>(names[2]);
  const FakeBackend *tensors[3] = {op->value<FakeBackend *>(names[3]),
                                   op->value<FakeBackend *>(names[4]),
                                   op->value<FakeBackend *>(names[5])};
  // The pointers by uid, each aligned as its tensor says.
  auto uids = pack->values<int64_t>(1000);
  auto pointers = pack->values<void *>(1001);
  float *data[3] = {};
  for (int t = 0; t < 3; ++t) {
    const int64_t uid = tensors[t]->value<int64_t>(906);
    for (size_t i = 0; i < uids.size(); ++i)
      if (uids[i] == uid)
        data[t] = static_cast<float *>(pointers[i]);
    const int64_t alignment = tensors[t]->value<int64_t>(900);
    if (!data[t] || reinterpret_cast<uintptr_t>(data[t]) % alignment)
      return kBadParam;
  }
  if (plan->workspace > 0 && !pack->value<void *>(1003))
    return kBadParam;
  // The legacy fake's descriptors: groups from the channel counts, the
  // padding symmetric (as the fake computes it).
  FakeTensor x = asTensor(tensors[0]), w = asTensor(tensors[1]),
             y = asTensor(tensors[2]);
  FakeConv conv;
  auto pre = convolution->values<int64_t>(105);
  auto post = convolution->values<int64_t>(104);
  auto strides = convolution->values<int64_t>(103);
  auto dilations = convolution->values<int64_t>(102);
  if (pre != post || convolution->value<int>(100) != 0 || w.dims[1] < 1 ||
      x.dims[1] % w.dims[1])
    return kBadParam;
  conv.spatial = static_cast<int>(pre.size());
  conv.mode = convolution->value<int>(101);
  conv.groups = x.dims[1] / w.dims[1];
  for (int s = 0; s < conv.spatial; ++s)
    conv.pads[s] = int(pre[s]), conv.strides[s] = int(strides[s]),
    conv.dilations[s] = int(dilations[s]);
  const float alpha = op->value<float>(names[0]);
  const float beta = op->value<float>(names[1]);
  int status = 0;
  switch (op->type) {
  case kDescForward:
    status = forwardOnHost(&x, data[0], &w, data[1], &conv, alpha, beta, &y,
                           data[2]);
    break;
  case kDescBackwardFilter:
    status = backwardFilterOnHost(&x, data[0], &y, data[2], &conv, alpha,
                                  beta, &w, data[1]);
    break;
  default:
    status = backwardDataOnHost(&w, data[1], &y, data[2], &conv, alpha, beta,
                                &x, data[0]);
  }
  if (status)
    return status;
  ++state.backendExecutes;
  state.lastConvStream = handle->stream;
  if (op->type == kDescForward)
    recordConvolution(data[0], handle->stream);
  // As the legacy fake reports it: 1 tensor cores, 3 FMA.
  state.lastConvMathType = config->engine == 0 ? 1 : 3;
  return 0;
}

} // extern "C"
