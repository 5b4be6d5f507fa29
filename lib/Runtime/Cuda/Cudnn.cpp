//===- Cudnn.cpp - convolution on the GPU through cuDNN -------------------===//
//
// _mlir_ciface_disc_ral_cuda_conv_<f32|f16|bf16>(ctx, input, kernel, output,
// strides, padLo, padHi, dilations, lhsDilations, groups): the CPU
// convolution's operands and parameters (RalApi.h), computed by cuDNN's
// cudnnConvolutionForward on the call's stream; and
// _mlir_ciface_disc_ral_cuda_conv_backward_weights_<...>(ctx, input,
// outputGradient, kernelGradient, <the same parameters>), the kernel
// gradient by cudnnConvolutionBackwardFilter; a convolution with input
// dilation (a transposed convolution) by cudnnConvolutionBackwardData of
// the forward it transposes. cuDNN is loaded with dlopen
// ($DISC_CUDNN_LIBRARY, else libcudnn.so.9, which a PyTorch CUDA process
// has loaded already): the CPU build never needs it.
//
// The legacy (descriptor) API: N-d tensor descriptors with the operands'
// strides, a packed NCHW filter, cross-correlation (PyTorch's convolution),
// f32 accumulation; for f32 operands, FMA math unless the call allows TF32
// (Float32Math::tf32Convolution: PyTorch's torch.backends.cudnn.allow_tf32,
// True by default), tensor cores for f16/bf16. The algorithm is cuDNN's
// heuristic choice (cudnnGet*Algorithm_v7) with the math type it returns,
// kept per context and problem. A 1-d convolution runs as a 2-d one of
// height 1.
// Not supported (OpError naming the call): padding that differs between
// the low and high side (other than a transposed convolution's output
// padding), empty reductions.
//
//===----------------------------------------------------------------------===//
#include "CudaDriver.h"
#include "CudaRal.h"

#include "../ExecutionContext.h"
#include "../Operand.h"
#include "../StridedCopy.h"
#include "disc/Runtime/RalApi.h"

#include <climits>
#include <cstdlib>
#include <dlfcn.h>
#include <map>
#include <memory>
#include <mutex>
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
};

void resolve(void *handle, Library &lib, std::string &error) {
  auto get = [&](const char *name, auto &fn) {
    cuda::resolveSymbol(handle, "cuDNN", name, fn, error);
  };
  get("cudnnCreate", lib.create);
  get("cudnnSetStream", lib.setStream);
  get("cudnnGetErrorString", lib.errorString);
  get("cudnnCreateTensorDescriptor", lib.createTensor);
  get("cudnnDestroyTensorDescriptor", lib.destroyTensor);
  get("cudnnSetTensorNdDescriptor", lib.setTensorNd);
  get("cudnnCreateFilterDescriptor", lib.createFilter);
  get("cudnnDestroyFilterDescriptor", lib.destroyFilter);
  get("cudnnSetFilterNdDescriptor", lib.setFilterNd);
  get("cudnnCreateConvolutionDescriptor", lib.createConv);
  get("cudnnDestroyConvolutionDescriptor", lib.destroyConv);
  get("cudnnSetConvolutionNdDescriptor", lib.setConvNd);
  get("cudnnSetConvolutionGroupCount", lib.setGroupCount);
  get("cudnnSetConvolutionMathType", lib.setMathType);
  get("cudnnGetConvolutionForwardAlgorithm_v7", lib.getForwardAlgorithm);
  get("cudnnGetConvolutionForwardWorkspaceSize", lib.getWorkspaceSize);
  get("cudnnConvolutionForward", lib.forward);
  get("cudnnGetConvolutionBackwardFilterAlgorithm_v7",
      lib.getBackwardFilterAlgorithm);
  get("cudnnGetConvolutionBackwardFilterWorkspaceSize",
      lib.getBackwardFilterWorkspaceSize);
  get("cudnnConvolutionBackwardFilter", lib.backwardFilter);
  get("cudnnGetConvolutionBackwardDataAlgorithm_v7",
      lib.getBackwardDataAlgorithm);
  get("cudnnGetConvolutionBackwardDataWorkspaceSize",
      lib.getBackwardDataWorkspaceSize);
  get("cudnnConvolutionBackwardData", lib.backwardData);
  get("cudnnTransformTensor", lib.transformTensor);
}

const Library &library() {
  return cuda::loadLibraryOnce<Library>(
      "DISC_CUDNN_LIBRARY", {"libcudnn.so.9", "libcudnn.so.8"},
      "convolution on cuda needs cuDNN",
      "PyTorch's CUDA build ships it in the nvidia-cudnn wheel; set "
      "DISC_CUDNN_LIBRARY to its path",
      resolve);
}

void check(Status status, const char *what) {
  if (status == 0)
    return;
  const char *text = library().errorString(status);
  throw RuntimeError(std::string(what) + " failed: " +
                     (text ? text : "cuDNN status " + std::to_string(status)));
}

/// One handle per CUDA context; the stream is set per call.
Handle handleFor(cuda::CUcontext context) {
  return cuda::handlePerContext<Handle>(context, [](Handle *handle) {
    check(library().create(handle), "cudnnCreate");
  });
}

/// Releases cuDNN descriptors on every path.
struct Descriptors {
  const Library &lib;
  TensorDesc x = nullptr, y = nullptr;
  FilterDesc w = nullptr;
  ConvDesc conv = nullptr;
  // Backward data: the kernel as given and as cuDNN's filter (4-d views).
  TensorDesc swapFrom = nullptr, swapTo = nullptr;
  explicit Descriptors(const Library &lib) : lib(lib) {}
  ~Descriptors() {
    for (TensorDesc t : {x, y, swapFrom, swapTo})
      if (t)
        lib.destroyTensor(t);
    if (w)
      lib.destroyFilter(w);
    if (conv)
      lib.destroyConv(conv);
  }
};

} // namespace cudnn

namespace {

int cudnnTypeOf(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return cudnn::kFloat;
  case DType::F16:
    return cudnn::kHalf;
  case DType::BF16:
    return cudnn::kBFloat16;
  default:
    throw OpError(std::string("no cuDNN type for ") + dtypeName(dtype));
  }
}

int toInt(int64_t value, const char *what) {
  if (value < 0 || value > INT_MAX)
    throw OpError(std::string(what) + " " + std::to_string(value) +
                  " does not fit cuDNN's 32-bit descriptors");
  return static_cast<int>(value);
}

/// What a convolution problem needs from cuDNN, made once per (handle,
/// problem) and kept for the process: the descriptors, set, and the
/// heuristic's algorithm and workspace. Building and destroying the
/// descriptors on every call was host time in every convolution (an H200
/// run measured about 90 us of host time per cuDNN call in ResNet-18).
/// Descriptors are only read once set, so calls on several threads share
/// them.
struct PreparedConvolution {
  std::unique_ptr<cudnn::Descriptors> descriptors;
  cudnn::AlgoPerf choice{};
};

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
};
constexpr DirectionFacts kDirections[] = {
    {"kernel", "output", "a convolution", "cudnnConvolutionForward"},
    {"kernel gradient", "output gradient", "a kernel gradient",
     "cudnnConvolutionBackwardFilter"},
    {"kernel", "output", "a transposed convolution",
     "cudnnConvolutionBackwardData"},
};

/// The convolution, its kernel gradient, or a transposed convolution on
/// the call's stream; `xRef`, `wRef`, `yRef` are DISC's input, kernel (or
/// kernel gradient) and output (or output gradient).
///
/// A transposed convolution is DISC's convolution of the input dilated by
/// s (lhs_dilation) with padding lo = d * (k - 1) - p and hi = lo + op, and
/// a kernel K' [C', K/G, k...] that is the forward's [K, C'/G, k...]
/// flipped with its channel dims swapped per group. cuDNN's backward data
/// of the forward convolution (stride s, padding p, dilation d) computes
/// it: the kernel is un-swapped per group by cudnnTransformTensor into a
/// scratch buffer, and the convolution descriptor's mode is
/// CUDNN_CONVOLUTION (the flip). The output padding op (0 <= op < s) is
/// the part of the result that no input reaches at the high end, which the
/// result's size gives cuDNN.
void cudaConvolution(ExecutionContext &ectx, DType dtype, Direction direction,
                     const UnrankedMemRef *xRef, const UnrankedMemRef *wRef,
                     const UnrankedMemRef *yRef, const ConvParams &call) {
  using namespace cudnn;
  const size_t elemSize = dtypeSize(dtype);
  const int64_t rank = convolutionRank(xRef);
  const int64_t spatial = rank - 2;
  // A convolution with input dilation is the backward data of the forward
  // it transposes.
  for (int64_t s = 0; s < spatial; ++s)
    if (direction == Direction::Forward && call.lhsDilations[s] != 1)
      direction = Direction::BackwardData;
  const DirectionFacts &facts = kDirections[static_cast<int>(direction)];
  const bool backwardData = direction == Direction::BackwardData;
  const char *wName = facts.kernelName;
  const char *yName = facts.outputName;
  Operand input = readOperand("input", xRef, rank, elemSize);
  Operand kernel = readOperand(wName, wRef, rank, elemSize);
  Operand output = readOperand(yName, yRef, rank, elemSize);
  auto describe = [&]() {
    return "input is " + shapeString(input.sizes) + ", " + wName + " is " +
           shapeString(kernel.sizes) + ", " + yName + " is " +
           shapeString(output.sizes) + ", groups " +
           std::to_string(call.groups);
  };
  const int64_t groups = call.groups;
  checkConvChannels(groups, input, kernel, output, wName, yName, describe);
  // The forward sums over the input's channels, the kernel gradient over
  // its batch (no channels: an empty kernel gradient, returned below), a
  // transposed convolution over its input's channels too.
  bool emptyReduction =
      input.sizes[direction == Direction::BackwardFilter ? 0 : 1] == 0;
  // cuDNN's parameters: padding, stride and dilation per spatial dim.
  std::vector<int64_t> cudnnPads(spatial), cudnnStrides(spatial);
  for (int64_t s = 0; s < spatial; ++s) {
    const int64_t in = input.sizes[2 + s], window = kernel.sizes[2 + s];
    const int64_t lhsDilation = call.lhsDilations[s];
    if (call.strides[s] < 1 || call.dilations[s] < 1 || lhsDilation < 1)
      throw OpError("strides and dilations must be >= 1: " + describe());
    if (backwardData) {
      // lo = d * (k - 1) - p, hi = lo + op with 0 <= op < s.
      const int64_t reach = call.dilations[s] * (window - 1);
      const int64_t outputPadding = call.padHi[s] - call.padLo[s];
      if (call.strides[s] != 1 || call.padLo[s] > reach ||
          outputPadding < 0 || outputPadding >= lhsDilation)
        throw OpError("a transposed convolution on cuda needs window "
                      "strides 1, low padding at most dilation * (k - 1) "
                      "and high padding from it to it + input dilation - 1 "
                      "(cuDNN's backward data): " +
                      describe());
      cudnnPads[s] = reach - call.padLo[s];
      cudnnStrides[s] = lhsDilation;
    } else {
      if (lhsDilation != 1)
        throw OpError(std::string(facts.what) +
                      " with input dilation is not supported on cuda: " +
                      describe());
      if (call.padLo[s] != call.padHi[s])
        throw OpError("padding that differs between the low and high side "
                      "is not supported on cuda yet: " +
                      describe());
      if (call.padLo[s] < 0)
        throw OpError("padding must be >= 0: " + describe());
      cudnnPads[s] = call.padLo[s];
      cudnnStrides[s] = call.strides[s];
    }
    const int64_t expected =
        convOutputSize(in, window, call.padLo[s], call.padHi[s],
                       call.strides[s], call.dilations[s], lhsDilation);
    if (output.sizes[2 + s] != expected)
      throw OpError(std::string(yName) + " spatial dim " + std::to_string(s) +
                    " is " + std::to_string(output.sizes[2 + s]) +
                    ", expected " + std::to_string(expected) + ": " +
                    describe());
    // The forward sums over windows, the kernel gradient over the batch
    // and the output positions.
    emptyReduction |=
        in == 0 ||
        (direction == Direction::BackwardFilter ? expected == 0 : window == 0);
  }
  if (numElements((direction == Direction::BackwardFilter ? kernel : output)
                      .sizes) == 0)
    return;
  if (emptyReduction)
    throw OpError(std::string(facts.what) +
                  " over an empty dim is not supported on cuda yet: " +
                  describe());
  // The filter must be packed: [O, C/G, K...] row-major.
  if (kernel.strides != contiguousStrides(kernel.sizes))
    throw OpError(std::string("the ") + wName +
                  " must be contiguous on cuda: " + describe());

  // cuDNN's x and y: DISC's input and output, swapped for backward data;
  // its filter: DISC's kernel, for backward data with its channel dims
  // swapped ([K, C'/G, k...] for the forward with K input channels of the
  // transposed convolution and C' its outputs).
  const Operand &xOperand = backwardData ? output : input;
  const Operand &yOperand = backwardData ? input : output;
  std::vector<int64_t> filterSizes = kernel.sizes;
  if (backwardData) {
    filterSizes[0] = input.sizes[1];
    filterSizes[1] = output.sizes[1] / groups;
  }
  // 1-d as 2-d of height 1: dims, strides and parameters get a leading
  // spatial slot.
  std::vector<int> xDims, xStrides, yDims, yStrides, wDims;
  std::vector<int> pads, convStrides, dilations;
  const bool oneD = spatial == 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (oneD && d == 2) {
      xDims.push_back(1);
      xStrides.push_back(
          toInt(xOperand.sizes[2] * xOperand.strides[2], "stride"));
      yDims.push_back(1);
      yStrides.push_back(
          toInt(yOperand.sizes[2] * yOperand.strides[2], "stride"));
      wDims.push_back(1);
    }
    xDims.push_back(toInt(xOperand.sizes[d], "input size"));
    xStrides.push_back(toInt(xOperand.strides[d], "input stride"));
    yDims.push_back(toInt(yOperand.sizes[d], "output size"));
    yStrides.push_back(toInt(yOperand.strides[d], "output stride"));
    wDims.push_back(toInt(filterSizes[d], "kernel size"));
  }
  if (oneD) {
    pads.push_back(0), convStrides.push_back(1), dilations.push_back(1);
  }
  for (int64_t s = 0; s < spatial; ++s) {
    pads.push_back(toInt(cudnnPads[s], "padding"));
    convStrides.push_back(toInt(cudnnStrides[s], "stride"));
    dilations.push_back(toInt(call.dilations[s], "dilation"));
  }
  // A size-1 dim may carry any stride; cuDNN wants positive ones.
  for (size_t d = 0; d < xStrides.size(); ++d) {
    xStrides[d] = std::max(xStrides[d], 1);
    yStrides[d] = std::max(yStrides[d], 1);
  }
  const Library &lib = library();
  Handle handle = handleFor(cuda::currentContext());
  check(lib.setStream(handle, ectx.cudaStream), "cudnnSetStream");
  const int type = cudnnTypeOf(dtype);
  const int nd = static_cast<int>(xDims.size());
  // The math cuDNN may use, as PyTorch sets it: f32 with TF32 allowed is
  // the default math (TF32 tensor cores on sm_80 and newer), without it FMA
  // only; f16 and bf16 tensor cores.
  const int mathType = dtype != DType::F32 ? kTensorOpMath
                       : ectx.float32Math.tf32Convolution ? kDefaultMath
                                                          : kFmaMath;
  // The problem: everything the descriptors and the algorithm depend on.
  std::vector<int64_t> problem = {static_cast<int64_t>(direction), type, nd,
                                  groups, mathType};
  for (auto *list : {&xDims, &xStrides, &yDims, &yStrides, &wDims, &pads,
                     &convStrides, &dilations})
    problem.insert(problem.end(), list->begin(), list->end());
  const PreparedConvolution &prepared =
      cuda::preparedPerProblem<PreparedConvolution>(handle, problem, [&] {
        auto d = std::make_unique<Descriptors>(lib);
        check(lib.createTensor(&d->x), "cudnnCreateTensorDescriptor");
        check(lib.createTensor(&d->y), "cudnnCreateTensorDescriptor");
        check(lib.createFilter(&d->w), "cudnnCreateFilterDescriptor");
        check(lib.createConv(&d->conv), "cudnnCreateConvolutionDescriptor");
        check(lib.setTensorNd(d->x, type, nd, xDims.data(), xStrides.data()),
              backwardData ? "cudnnSetTensorNdDescriptor(output)"
                           : "cudnnSetTensorNdDescriptor(input)");
        check(lib.setTensorNd(d->y, type, nd, yDims.data(), yStrides.data()),
              direction == Direction::Forward
                  ? "cudnnSetTensorNdDescriptor(output)"
              : backwardData ? "cudnnSetTensorNdDescriptor(input)"
                             : "cudnnSetTensorNdDescriptor(output gradient)");
        check(lib.setFilterNd(d->w, type, kNCHW, nd, wDims.data()),
              "cudnnSetFilterNdDescriptor");
        check(lib.setConvNd(d->conv, nd - 2, pads.data(), convStrides.data(),
                            dilations.data(),
                            backwardData ? kConvolution : kCrossCorrelation,
                            kFloat),
              "cudnnSetConvolutionNdDescriptor");
        check(lib.setGroupCount(d->conv, toInt(groups, "groups")),
              "cudnnSetConvolutionGroupCount");
        check(lib.setMathType(d->conv, mathType),
              "cudnnSetConvolutionMathType");
        // cuDNN's heuristic, kept with the descriptors.
        AlgoPerf choice{};
        int returned = 0;
        switch (direction) {
        case Direction::Forward:
          check(lib.getForwardAlgorithm(handle, d->x, d->w, d->conv, d->y, 1,
                                        &returned, &choice),
                "cudnnGetConvolutionForwardAlgorithm_v7");
          break;
        case Direction::BackwardFilter:
          check(lib.getBackwardFilterAlgorithm(handle, d->x, d->y, d->conv,
                                               d->w, 1, &returned, &choice),
                "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
          break;
        case Direction::BackwardData:
          check(lib.getBackwardDataAlgorithm(handle, d->w, d->y, d->conv,
                                             d->x, 1, &returned, &choice),
                "cudnnGetConvolutionBackwardDataAlgorithm_v7");
          break;
        }
        if (returned < 1 || choice.status != 0)
          throw OpError(std::string("cuDNN has no algorithm for ") +
                        facts.what + ": " + describe());
        // cuDNN runs an algorithm with the descriptor's math type, which
        // must be the one the heuristic chose it for (a tensor-core
        // algorithm under the default math). FMA math stays FMA: a
        // tensor-core choice there would be TF32 the caller did not allow.
        if (mathType != kFmaMath && choice.mathType != mathType)
          check(lib.setMathType(d->conv, choice.mathType),
                "cudnnSetConvolutionMathType(heuristic's choice)");
        switch (direction) {
        case Direction::Forward:
          check(lib.getWorkspaceSize(handle, d->x, d->w, d->conv, d->y,
                                     choice.algo, &choice.memory),
                "cudnnGetConvolutionForwardWorkspaceSize");
          break;
        case Direction::BackwardFilter:
          check(lib.getBackwardFilterWorkspaceSize(handle, d->x, d->y, d->conv,
                                                   d->w, choice.algo,
                                                   &choice.memory),
                "cudnnGetConvolutionBackwardFilterWorkspaceSize");
          break;
        case Direction::BackwardData: {
          check(lib.getBackwardDataWorkspaceSize(handle, d->w, d->y, d->conv,
                                                 d->x, choice.algo,
                                                 &choice.memory),
                "cudnnGetConvolutionBackwardDataWorkspaceSize");
          // The kernel as [G, C'/G, K/G, k] (k: the window, flattened)
          // read as [G, K/G, C'/G, k] into a packed filter.
          int64_t window = 1;
          for (int64_t s = 0; s < spatial; ++s)
            window *= kernel.sizes[2 + s];
          const int64_t outPerGroup = kernel.sizes[0] / groups;
          const int64_t inPerGroup = kernel.sizes[1];
          const int swapDims[4] = {toInt(groups, "groups"),
                                   toInt(inPerGroup, "kernel size"),
                                   toInt(outPerGroup, "kernel size"),
                                   toInt(window, "kernel size")};
          const int swapFrom[4] = {
              toInt(outPerGroup * inPerGroup * window, "kernel stride"),
              toInt(window, "kernel stride"),
              toInt(inPerGroup * window, "kernel stride"), 1};
          const int swapTo[4] = {swapFrom[0],
                                 toInt(outPerGroup * window, "kernel stride"),
                                 toInt(window, "kernel stride"), 1};
          check(lib.createTensor(&d->swapFrom), "cudnnCreateTensorDescriptor");
          check(lib.createTensor(&d->swapTo), "cudnnCreateTensorDescriptor");
          check(lib.setTensorNd(d->swapFrom, type, 4, swapDims, swapFrom),
                "cudnnSetTensorNdDescriptor(kernel)");
          check(lib.setTensorNd(d->swapTo, type, 4, swapDims, swapTo),
                "cudnnSetTensorNdDescriptor(filter)");
          break;
        }
        }
        return PreparedConvolution{std::move(d), choice};
      });
  const Descriptors &d = *prepared.descriptors;
  const AlgoPerf choice = prepared.choice;
  // Scratch on the call's stream, freed stream-ordered after the call.
  std::vector<void *> scratch;
  auto allocate = [&](int64_t bytes) {
    void *ptr = allocateDeviceForCall(&ectx, bytes);
    if (!ptr)
      throw RuntimeError(ectx.errorMessage);
    scratch.push_back(ptr);
    return ptr;
  };
  struct FreeScratch {
    ExecutionContext &ectx;
    std::vector<void *> &scratch;
    ~FreeScratch() {
      for (void *ptr : scratch)
        releaseDeviceForCall(ectx, ptr);
    }
  } freeScratch{ectx, scratch};
  void *workspace =
      choice.memory > 0 ? allocate((int64_t)choice.memory) : nullptr;
  const float one = 1.0f, zero = 0.0f;
  Status status = 0;
  switch (direction) {
  case Direction::Forward:
    status = lib.forward(handle, &one, d.x, input.data, d.w, kernel.data,
                         d.conv, choice.algo, workspace, choice.memory, &zero,
                         d.y, output.data);
    break;
  case Direction::BackwardFilter:
    status = lib.backwardFilter(handle, &one, d.x, input.data, d.y,
                                output.data, d.conv, choice.algo, workspace,
                                choice.memory, &zero, d.w, kernel.data);
    break;
  case Direction::BackwardData: {
    void *filter = allocate(numElements(kernel.sizes) * (int64_t)elemSize);
    check(lib.transformTensor(handle, &one, d.swapFrom, kernel.data, &zero,
                              d.swapTo, filter),
          "cudnnTransformTensor(kernel)");
    status = lib.backwardData(handle, &one, d.w, filter, d.y, input.data,
                              d.conv, choice.algo, workspace, choice.memory,
                              &zero, d.x, output.data);
    break;
  }
  }
  check(status, facts.call);
}

} // namespace
} // namespace ral
} // namespace disc

using disc::ral::asExecutionContext;
using disc::ral::ExecutionContext;
using disc::ral::ralFailNoReturn;

#define DISC_RAL_DEFINE_CUDA_CONV(SUFFIX, DTYPE)                               \
  extern "C" void _mlir_ciface_disc_ral_cuda_conv_##SUFFIX(                    \
      DISC_RAL_CONV_PARAMETERS) {                                              \
    ExecutionContext *ectx = asExecutionContext(ctx);                          \
    const disc::ral::ConvParams call = DISC_RAL_CONV_PARAMS_OF_ARGUMENTS;       \
    if (!disc::ral::guardedCall(*ectx, "disc_ral_cuda_conv_" #SUFFIX, [&] {    \
          disc::ral::cudaConvolution(*ectx, disc::ral::DType::DTYPE,           \
                                     disc::ral::Direction::Forward, input,     \
                                     kernel, output, call);                    \
        }))                                                                    \
      ralFailNoReturn(ectx);                                                   \
  }
DISC_RAL_DEFINE_CUDA_CONV(f32, F32)
DISC_RAL_DEFINE_CUDA_CONV(f16, F16)
DISC_RAL_DEFINE_CUDA_CONV(bf16, BF16)
#undef DISC_RAL_DEFINE_CUDA_CONV

#define DISC_RAL_DEFINE_CUDA_CONV_BACKWARD_WEIGHTS(SUFFIX, DTYPE)              \
  extern "C" void _mlir_ciface_disc_ral_cuda_conv_backward_weights_##SUFFIX(   \
      DISC_RAL_CONV_BACKWARD_WEIGHTS_PARAMETERS) {                             \
    ExecutionContext *ectx = asExecutionContext(ctx);                          \
    const disc::ral::ConvParams call = DISC_RAL_CONV_PARAMS_OF_ARGUMENTS;       \
    if (!disc::ral::guardedCall(                                               \
            *ectx, "disc_ral_cuda_conv_backward_weights_" #SUFFIX, [&] {       \
              disc::ral::cudaConvolution(                                      \
                  *ectx, disc::ral::DType::DTYPE,                              \
                  disc::ral::Direction::BackwardFilter, input, kernelGradient, \
                  outputGradient, call);                                       \
            }))                                                                \
      ralFailNoReturn(ectx);                                                   \
  }
DISC_RAL_DEFINE_CUDA_CONV_BACKWARD_WEIGHTS(f32, F32)
DISC_RAL_DEFINE_CUDA_CONV_BACKWARD_WEIGHTS(f16, F16)
DISC_RAL_DEFINE_CUDA_CONV_BACKWARD_WEIGHTS(bf16, BF16)
#undef DISC_RAL_DEFINE_CUDA_CONV_BACKWARD_WEIGHTS
