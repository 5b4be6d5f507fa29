//===- Cudnn.h - cuDNN for the convolutions, loaded with dlopen -*- C++ -*-===//
//
// What Cudnn.cpp (the entry points, the legacy descriptor API) and
// CudnnGraph.cpp (the graph API's plans) share: the few cuDNN types and
// names used, the loaded library, and one call's problem in cuDNN's terms.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_LIB_RUNTIME_CUDA_CUDNN_H
#define DISC_LIB_RUNTIME_CUDA_CUDNN_H

#include "CudaDriver.h"
#include "../Operand.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace disc {
namespace ral {
namespace cudnn {


// The few cuDNN types and constants used (cudnn.h, cuDNN 8/9).
using Status = int;
using Handle = struct OpaqueHandle *;
using TensorDesc = struct OpaqueTensor *;
using FilterDesc = struct OpaqueFilter *;
using ConvDesc = struct OpaqueConv *;
using BackendDesc = void *; // cudnnBackendDescriptor_t
constexpr int kFloat = 0, kHalf = 2, kBFloat16 = 9; // cudnnDataType_t
constexpr int kNCHW = 0;                            // cudnnTensorFormat_t
constexpr int kConvolution = 0, kCrossCorrelation = 1; // ConvolutionMode_t
constexpr int kDefaultMath = 0, kTensorOpMath = 1, kFmaMath = 3; // MathType_t
struct AlgoPerf { // cudnnConvolutionFwdAlgoPerf_t
  int algo;
  Status status;
  float time;
  size_t memory;
  int determinism;
  int mathType;
  int reserved[3];
};

// The graph (backend) API's names (cudnn_graph.h, cuDNN 9; the same values
// in cuDNN 8's cudnn_backend.h).
namespace backend {
// cudnnBackendDescriptorType_t
constexpr int kConvolution = 1, kEngine = 2, kEngineConfig = 3,
              kEngineHeuristics = 4, kExecutionPlan = 5,
              kConvolutionForward = 10, kConvolutionBackwardFilter = 11,
              kConvolutionBackwardData = 12, kOperationGraph = 15,
              kVariantPack = 16, kTensor = 17;
// cudnnBackendAttributeType_t
constexpr int kTypeHandle = 0, kTypeDataType = 1, kTypeInt64 = 3,
              kTypeFloat = 4, kTypeVoidPtr = 6, kTypeConvolutionMode = 7,
              kTypeHeuristicMode = 8, kTypeNumericalNote = 11,
              kTypeDescriptor = 15;
// cudnnBackendAttributeName_t
constexpr int kConvComputeType = 100, kConvMode = 101, kConvDilations = 102,
              kConvFilterStrides = 103, kConvPostPaddings = 104,
              kConvPrePaddings = 105, kConvSpatialDims = 106;
constexpr int kHeuristicsMode = 200, kHeuristicsGraph = 201,
              kHeuristicsResults = 202;
constexpr int kConfigEngine = 300;
constexpr int kPlanHandle = 400, kPlanConfig = 401, kPlanWorkspaceSize = 402;
// The operations' alpha, beta, convolution, x, w, y (their order in
// cudnn_graph.h differs per operation: OperationAttributes below).
constexpr int kGraphHandle = 800, kGraphOperations = 801;
constexpr int kTensorAlignment = 900, kTensorDataType = 901,
              kTensorDims = 902, kTensorStrides = 903, kTensorUid = 906;
constexpr int kPackUids = 1000, kPackPointers = 1001, kPackWorkspace = 1003;
constexpr int kEngineGlobalIndex = 1301, kEngineNumericalNotes = 1303;
// cudnnBackendHeurMode_t
constexpr int kHeuristicsModeA = 3, kHeuristicsFallback = 2;
// cudnnBackendNumericalNote_t
constexpr int kNoteTensorCore = 0, kNoteDownConvertInputs = 1,
              kNoteCount = 10;
} // namespace backend

struct Library {
  Status (*create)(Handle *);
  Status (*setStream)(Handle, void *);
  const char *(*errorString)(Status);
  Status (*createTensor)(TensorDesc *);
  Status (*destroyTensor)(TensorDesc);
  Status (*setTensorNd)(TensorDesc, int type, int rank, const int *dims,
                        const int *strides);
  Status (*createFilter)(FilterDesc *);
  Status (*destroyFilter)(FilterDesc);
  Status (*setFilterNd)(FilterDesc, int type, int format, int rank,
                        const int *dims);
  Status (*createConv)(ConvDesc *);
  Status (*destroyConv)(ConvDesc);
  Status (*setConvNd)(ConvDesc, int spatial, const int *pads,
                      const int *strides, const int *dilations, int mode,
                      int computeType);
  Status (*setGroupCount)(ConvDesc, int);
  Status (*setMathType)(ConvDesc, int);
  Status (*getForwardAlgorithm)(Handle, TensorDesc, FilterDesc, ConvDesc,
                                TensorDesc, int requested, int *returned,
                                AlgoPerf *);
  Status (*getWorkspaceSize)(Handle, TensorDesc, FilterDesc, ConvDesc,
                             TensorDesc, int algo, size_t *);
  Status (*forward)(Handle, const void *alpha, TensorDesc, const void *x,
                    FilterDesc, const void *w, ConvDesc, int algo,
                    void *workspace, size_t workspaceBytes, const void *beta,
                    TensorDesc, void *y);
  // cudnnConvolutionBwdFilterAlgoPerf_t has AlgoPerf's layout.
  Status (*getBackwardFilterAlgorithm)(Handle, TensorDesc x, TensorDesc dy,
                                       ConvDesc, FilterDesc dw, int requested,
                                       int *returned, AlgoPerf *);
  Status (*getBackwardFilterWorkspaceSize)(Handle, TensorDesc x, TensorDesc dy,
                                           ConvDesc, FilterDesc dw, int algo,
                                           size_t *);
  Status (*backwardFilter)(Handle, const void *alpha, TensorDesc x,
                           const void *xData, TensorDesc dy, const void *dyData,
                           ConvDesc, int algo, void *workspace,
                           size_t workspaceBytes, const void *beta,
                           FilterDesc dw, void *dwData);
  // cudnnConvolutionBwdDataAlgoPerf_t has AlgoPerf's layout too.
  Status (*getBackwardDataAlgorithm)(Handle, FilterDesc w, TensorDesc dy,
                                     ConvDesc, TensorDesc dx, int requested,
                                     int *returned, AlgoPerf *);
  Status (*getBackwardDataWorkspaceSize)(Handle, FilterDesc w, TensorDesc dy,
                                         ConvDesc, TensorDesc dx, int algo,
                                         size_t *);
  Status (*backwardData)(Handle, const void *alpha, FilterDesc w,
                         const void *wData, TensorDesc dy, const void *dyData,
                         ConvDesc, int algo, void *workspace,
                         size_t workspaceBytes, const void *beta,
                         TensorDesc dx, void *dxData);
  Status (*transformTensor)(Handle, const void *alpha, TensorDesc x,
                            const void *xData, const void *beta, TensorDesc y,
                            void *yData);
  // The graph (backend) API.
  Status (*createDescriptor)(int type, BackendDesc *);
  Status (*destroyDescriptor)(BackendDesc);
  Status (*finalize)(BackendDesc);
  Status (*setAttribute)(BackendDesc, int name, int type, int64_t count,
                         const void *values);
  Status (*getAttribute)(BackendDesc, int name, int type, int64_t requested,
                         int64_t *returned, void *values);
  Status (*execute)(Handle, BackendDesc plan, BackendDesc variantPack);
};

/// The loaded library (Cudnn.cpp): dlopen of $DISC_CUDNN_LIBRARY, else
/// libcudnn.so.9 or .8. Throws RuntimeError when it cannot be loaded.
const Library &library();

/// Throws RuntimeError "<what> failed: <cuDNN's message>" unless `status`
/// is success.
void check(Status status, const char *what);

/// One handle per CUDA context; the stream is set per call.
Handle handleFor(cuda::CUcontext context);

/// A graph-API descriptor, destroyed with its owner. It keeps the loaded
/// library it was made with (no lookup per attribute on the call path).
class BackendDescriptor {
public:
  BackendDescriptor() = default;
  BackendDescriptor(int type, const char *what) : lib(&library()) {
    check(lib->createDescriptor(type, &desc), what);
  }
  BackendDescriptor(BackendDescriptor &&other) noexcept
      : lib(other.lib), desc(other.desc) {
    other.desc = nullptr;
  }
  BackendDescriptor &operator=(BackendDescriptor &&other) noexcept {
    std::swap(lib, other.lib);
    std::swap(desc, other.desc);
    return *this;
  }
  BackendDescriptor(const BackendDescriptor &) = delete;
  BackendDescriptor &operator=(const BackendDescriptor &) = delete;
  ~BackendDescriptor() {
    if (desc)
      lib->destroyDescriptor(desc);
  }
  BackendDesc get() const { return desc; }
  /// cudnnBackendSetAttribute; `what` names the attribute in errors.
  void set(int name, int type, int64_t count, const void *values,
           const char *what) const {
    check(lib->setAttribute(desc, name, type, count, values), what);
  }
  void setDescriptor(int name, const BackendDescriptor &value,
                     const char *what) const {
    BackendDesc raw = value.get();
    set(name, backend::kTypeDescriptor, 1, &raw, what);
  }
  void setInt64s(int name, const std::vector<int64_t> &values,
                 const char *what) const {
    set(name, backend::kTypeInt64, static_cast<int64_t>(values.size()),
        values.data(), what);
  }
  void finalize(const char *what) const {
    check(lib->finalize(desc), what);
  }

private:
  const Library *lib = nullptr;
  BackendDesc desc = nullptr;
};

} // namespace cudnn

/// Which cuDNN call: the convolution, its kernel gradient, or its input
/// gradient (a transposed convolution: DISC's convolution with an input
/// dilation).
enum class Direction { Forward, BackwardFilter, BackwardData };

/// What differs between the directions. cuDNN's roles: x the forward's
/// input, w its filter, y its output. DISC's operands (input, kernel or
/// kernel gradient, output or output gradient) map onto them: Forward x =
/// input, w = kernel, y = output (computed); BackwardFilter x = input, w =
/// kernel gradient (computed), y = output gradient; BackwardData x = output
/// (computed: the transposed convolution's result is the forward's input
/// gradient), w = the kernel rearranged, y = input.
struct DirectionFacts {
  const char *kernelName, *outputName, *what, *call;
  // The graph API's operation: its descriptor type and the names of its
  // attributes (CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA = 700 ...
  // BWD_FILTER_DY = 717 in cudnn_graph.h).
  int operation, alpha, beta, convolution, x, w, y;
};

/// Up to kCapacity ints: one of a cuDNN problem's dims, strides or
/// parameter lists. Fixed storage, so that a call builds its problem and
/// key without touching the heap (per-call host time: before, the eight
/// vectors and the key's were about half of DISC's own instructions in a
/// convolution call, bench/cuda_host_counts.py on mobilenet_v3_small).
struct ConvInts {
  static constexpr int kCapacity = 8;
  int count = 0;
  int values[kCapacity] = {};

  void push_back(int value) {
    if (count == kCapacity)
      throw OpError("a convolution of more than " +
                    std::to_string(kCapacity) + " dims");
    values[count++] = value;
  }
  int size() const { return count; }
  const int *data() const { return values; }
  const int *begin() const { return values; }
  const int *end() const { return values + count; }
  int &operator[](int i) { return values[i]; }
  int operator[](int i) const { return values[i]; }
};

/// Everything a prepared descriptor, algorithm or plan depends on: a
/// header, the eight lists of a problem, unused slots 0, and the last
/// kAlignmentSlots slots for the graph API's pointer alignments.
struct CudnnProblemKey {
  static constexpr int kHeader = 5, kAlignmentSlots = 3;
  static constexpr int kSize =
      kHeader + 8 * ConvInts::kCapacity + kAlignmentSlots;
  std::array<int64_t, kSize> values{};

  /// Any strict order does for the caches: bytes, compared at once.
  bool operator<(const CudnnProblemKey &other) const {
    return std::memcmp(values.data(), other.values.data(),
                       sizeof(values)) < 0;
  }
};

/// One call's problem in cuDNN's terms: x, w and y as the DirectionFacts
/// map them, 1-d already as 2-d.
struct CudnnProblem {
  Direction direction;
  int type;     // cudnnDataType_t
  int mathType; // the legacy API's cudnnMathType_t
  bool tensorCoresAllowed;
  int64_t groups;
  ConvInts xDims, xStrides, yDims, yStrides, wDims;
  ConvInts pads, convStrides, dilations;

  int rank() const { return xDims.size(); }
  /// The key of this problem, its alignment slots 0. The lists' lengths
  /// follow from the rank (in the header), so the concatenation is
  /// unambiguous.
  CudnnProblemKey key() const {
    CudnnProblemKey key;
    int64_t *out = key.values.data();
    *out++ = static_cast<int64_t>(direction);
    *out++ = type;
    *out++ = rank();
    *out++ = groups;
    *out++ = mathType;
    for (const ConvInts *list : {&xDims, &xStrides, &yDims, &yStrides,
                                 &wDims, &pads, &convStrides, &dilations})
      out = std::copy(list->begin(), list->end(), out);
    return key;
  }
};

/// Runs one call through the graph API (CudnnGraph.cpp): the problem's
/// plan, prepared once per (handle, problem, pointer alignments), executed
/// on the handle's stream with cuDNN's x, w and y at `data`. `key` is
/// `problem.key()`, which the caller has made already. `allocate` gives
/// device scratch freed after the call; `describe` names the operands in
/// errors and logs.
void executeConvolutionPlan(cudnn::Handle handle, const CudnnProblem &problem,
                            CudnnProblemKey key,
                            const DirectionFacts &facts, void *const data[3],
                            const std::function<void *(int64_t)> &allocate,
                            const std::function<std::string()> &describe);

} // namespace ral
} // namespace disc

#endif // DISC_LIB_RUNTIME_CUDA_CUDNN_H
