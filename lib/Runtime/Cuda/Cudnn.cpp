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
// Two ways to call cuDNN, chosen per call by DISC_CUDA_CONV_API:
// - `backend` (the default): cuDNN's graph (backend) API, as PyTorch's
//   cudnn frontend uses it. Per problem, once: tensor and convolution
//   descriptors, a one-operation graph, the heuristic's engine configs
//   (mode A, then the fallback list) filtered by their numerical notes,
//   and the first execution plan that finalizes. Per call: a variant pack
//   (the three pointers and the workspace) and cudnnBackendExecute
//   (CudnnGraph.cpp). The legacy API may build such a plan inside every
//   call.
// - `legacy`: the descriptor API (cudnnConvolutionForward and its
//   backward twins) with the heuristic's algorithm (cudnnGet*Algorithm_v7)
//   and the math type it returns, kept per problem.
// Both: N-d tensors with the operands' strides, a packed NCHW filter,
// cross-correlation (PyTorch's convolution), f32 accumulation; for f32
// operands no tensor cores unless the call allows TF32
// (Float32Math::tf32Convolution: PyTorch's torch.backends.cudnn.allow_tf32,
// True by default), tensor cores for f16/bf16. A 1-d convolution runs as a
// 2-d one of height 1.
// Not supported (OpError naming the call): padding that differs between
// the low and high side (other than a transposed convolution's output
// padding), empty reductions.
//
//===----------------------------------------------------------------------===//
#include "Cudnn.h"
#include "CudaRal.h"

#include "../ExecutionContext.h"
#include "../Operand.h"
#include "../StridedCopy.h"
#include "disc/Runtime/RalApi.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace disc {
namespace ral {
namespace cudnn {

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
  get("cudnnBackendCreateDescriptor", lib.createDescriptor);
  get("cudnnBackendDestroyDescriptor", lib.destroyDescriptor);
  get("cudnnBackendFinalize", lib.finalize);
  get("cudnnBackendSetAttribute", lib.setAttribute);
  get("cudnnBackendGetAttribute", lib.getAttribute);
  get("cudnnBackendExecute", lib.execute);
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

/// cuDNN takes the stream from the handle, which the context's threads
/// share: a convolution holds its handle's lock from cudnnSetStream to its
/// last cuDNN call, so that another thread's call cannot set its own stream
/// in between (its work would then run on that stream, unordered with the
/// rest of the call). The calls only enqueue work: the lock is held for
/// microseconds, or for a plan's first preparation.
std::mutex &streamLockFor(Handle handle) {
  static std::mutex mutex;
  static auto *locks = new std::map<Handle, std::unique_ptr<std::mutex>>;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<std::mutex> &streamLock = (*locks)[handle];
  if (!streamLock)
    streamLock = std::make_unique<std::mutex>();
  return *streamLock;
}

/// Releases legacy cuDNN descriptors on every path.
struct Descriptors {
  const Library &lib;
  TensorDesc x = nullptr, y = nullptr;
  FilterDesc w = nullptr;
  ConvDesc conv = nullptr;
  explicit Descriptors(const Library &lib) : lib(lib) {}
  ~Descriptors() {
    for (TensorDesc t : {x, y})
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

/// Which cuDNN API a call uses (DISC_CUDA_CONV_API, read per call so that
/// a process may switch; the file header says what each does).
enum class CudnnApi { Backend, Legacy };

CudnnApi cudnnApiChoice() {
  const char *env = std::getenv("DISC_CUDA_CONV_API");
  if (!env || !*env || std::string(env) == "backend")
    return CudnnApi::Backend;
  if (std::string(env) == "legacy")
    return CudnnApi::Legacy;
  throw OpError(std::string("DISC_CUDA_CONV_API='") + env +
                "': expected 'backend' (cuDNN's graph API, the default) or "
                "'legacy' (cudnnConvolutionForward and its backward twins)");
}

constexpr DirectionFacts kDirections[] = {
    {"kernel", "output", "a convolution", "cudnnConvolutionForward",
     cudnn::backend::kConvolutionForward, 700, 701, 702, 704, 703, 705},
    {"kernel gradient", "output gradient", "a kernel gradient",
     "cudnnConvolutionBackwardFilter",
     cudnn::backend::kConvolutionBackwardFilter, 712, 713, 714, 716, 715,
     717},
    {"kernel", "output", "a transposed convolution",
     "cudnnConvolutionBackwardData", cudnn::backend::kConvolutionBackwardData,
     706, 707, 708, 710, 709, 711},
};

/// Backward data's rearranged kernel: the kernel as [G, C'/G, K/G, k] (k:
/// the window, flattened) read as [G, K/G, C'/G, k] into a packed filter by
/// cudnnTransformTensor.
struct KernelSwap {
  const cudnn::Library &lib;
  cudnn::TensorDesc from = nullptr, to = nullptr;
  explicit KernelSwap(const cudnn::Library &lib) : lib(lib) {}
  ~KernelSwap() {
    for (cudnn::TensorDesc t : {from, to})
      if (t)
        lib.destroyTensor(t);
  }
};

std::unique_ptr<KernelSwap> makeKernelSwap(const cudnn::Library &lib, int type,
                                           int64_t groups,
                                           const std::vector<int64_t> &kernel) {
  int64_t window = 1;
  for (size_t d = 2; d < kernel.size(); ++d)
    window *= kernel[d];
  const int64_t outPerGroup = kernel[0] / groups;
  const int64_t inPerGroup = kernel[1];
  const int dims[4] = {toInt(groups, "groups"),
                       toInt(inPerGroup, "kernel size"),
                       toInt(outPerGroup, "kernel size"),
                       toInt(window, "kernel size")};
  const int fromStrides[4] = {
      toInt(outPerGroup * inPerGroup * window, "kernel stride"),
      toInt(window, "kernel stride"),
      toInt(inPerGroup * window, "kernel stride"), 1};
  const int toStrides[4] = {fromStrides[0],
                            toInt(outPerGroup * window, "kernel stride"),
                            toInt(window, "kernel stride"), 1};
  auto swap = std::make_unique<KernelSwap>(lib);
  cudnn::check(lib.createTensor(&swap->from), "cudnnCreateTensorDescriptor");
  cudnn::check(lib.createTensor(&swap->to), "cudnnCreateTensorDescriptor");
  cudnn::check(lib.setTensorNd(swap->from, type, 4, dims, fromStrides),
               "cudnnSetTensorNdDescriptor(kernel)");
  cudnn::check(lib.setTensorNd(swap->to, type, 4, dims, toStrides),
               "cudnnSetTensorNdDescriptor(filter)");
  return swap;
}

/// The legacy API's preparation, once per (handle, problem): the
/// descriptors, set, and the heuristic's algorithm and workspace. Building
/// and destroying the descriptors on every call was host time in every
/// convolution (an H200 run measured about 90 us of host time per cuDNN
/// call in ResNet-18). Descriptors are only read once set, so calls on
/// several threads share them.
struct PreparedConvolution {
  std::unique_ptr<cudnn::Descriptors> descriptors;
  cudnn::AlgoPerf choice{};
};

PreparedConvolution prepareLegacy(const cudnn::Library &lib,
                                  cudnn::Handle handle, const CudnnProblem &p,
                                  const DirectionFacts &facts,
                                  const std::string &described) {
  using namespace cudnn;
  const bool backwardData = p.direction == Direction::BackwardData;
  const int nd = p.rank();
  auto d = std::make_unique<Descriptors>(lib);
  check(lib.createTensor(&d->x), "cudnnCreateTensorDescriptor");
  check(lib.createTensor(&d->y), "cudnnCreateTensorDescriptor");
  check(lib.createFilter(&d->w), "cudnnCreateFilterDescriptor");
  check(lib.createConv(&d->conv), "cudnnCreateConvolutionDescriptor");
  check(lib.setTensorNd(d->x, p.type, nd, p.xDims.data(), p.xStrides.data()),
        backwardData ? "cudnnSetTensorNdDescriptor(output)"
                     : "cudnnSetTensorNdDescriptor(input)");
  check(lib.setTensorNd(d->y, p.type, nd, p.yDims.data(), p.yStrides.data()),
        p.direction == Direction::Forward
            ? "cudnnSetTensorNdDescriptor(output)"
        : backwardData ? "cudnnSetTensorNdDescriptor(input)"
                       : "cudnnSetTensorNdDescriptor(output gradient)");
  check(lib.setFilterNd(d->w, p.type, kNCHW, nd, p.wDims.data()),
        "cudnnSetFilterNdDescriptor");
  check(lib.setConvNd(d->conv, nd - 2, p.pads.data(), p.convStrides.data(),
                      p.dilations.data(),
                      backwardData ? kConvolution : kCrossCorrelation, kFloat),
        "cudnnSetConvolutionNdDescriptor");
  check(lib.setGroupCount(d->conv, toInt(p.groups, "groups")),
        "cudnnSetConvolutionGroupCount");
  check(lib.setMathType(d->conv, p.mathType), "cudnnSetConvolutionMathType");
  AlgoPerf choice{};
  int returned = 0;
  switch (p.direction) {
  case Direction::Forward:
    check(lib.getForwardAlgorithm(handle, d->x, d->w, d->conv, d->y, 1,
                                  &returned, &choice),
          "cudnnGetConvolutionForwardAlgorithm_v7");
    break;
  case Direction::BackwardFilter:
    check(lib.getBackwardFilterAlgorithm(handle, d->x, d->y, d->conv, d->w, 1,
                                         &returned, &choice),
          "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
    break;
  case Direction::BackwardData:
    check(lib.getBackwardDataAlgorithm(handle, d->w, d->y, d->conv, d->x, 1,
                                       &returned, &choice),
          "cudnnGetConvolutionBackwardDataAlgorithm_v7");
    break;
  }
  if (returned < 1 || choice.status != 0)
    throw OpError(std::string("cuDNN has no algorithm for ") + facts.what +
                  ": " + described);
  // cuDNN runs an algorithm with the descriptor's math type, which must be
  // the one the heuristic chose it for (a tensor-core algorithm under the
  // default math). FMA math stays FMA: a tensor-core choice there would be
  // TF32 the caller did not allow.
  if (p.mathType != kFmaMath && choice.mathType != p.mathType)
    check(lib.setMathType(d->conv, choice.mathType),
          "cudnnSetConvolutionMathType(heuristic's choice)");
  switch (p.direction) {
  case Direction::Forward:
    check(lib.getWorkspaceSize(handle, d->x, d->w, d->conv, d->y, choice.algo,
                               &choice.memory),
          "cudnnGetConvolutionForwardWorkspaceSize");
    break;
  case Direction::BackwardFilter:
    check(lib.getBackwardFilterWorkspaceSize(handle, d->x, d->y, d->conv, d->w,
                                             choice.algo, &choice.memory),
          "cudnnGetConvolutionBackwardFilterWorkspaceSize");
    break;
  case Direction::BackwardData:
    check(lib.getBackwardDataWorkspaceSize(handle, d->w, d->y, d->conv, d->x,
                                           choice.algo, &choice.memory),
          "cudnnGetConvolutionBackwardDataWorkspaceSize");
    break;
  }
  if (logLibraryCalls())
    std::fprintf(stderr,
                 "[disc] library: cuDNN (legacy API) for %s (%s): algorithm "
                 "%d, math type %d, workspace %zu bytes\n",
                 facts.what, described.c_str(), choice.algo, choice.mathType,
                 choice.memory);
  return PreparedConvolution{std::move(d), choice};
}

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
  const CudnnApi api = cudnnApiChoice();
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
  checkConvChannels(groups, input, kernel, output, wName, yName,
                    std::cref(describe));
  // The forward sums over the input's channels, the kernel gradient over
  // its batch (no channels: an empty kernel gradient, returned below), a
  // transposed convolution over its input's channels too.
  bool emptyReduction =
      input.sizes[direction == Direction::BackwardFilter ? 0 : 1] == 0;
  // cuDNN's parameters: padding, stride and dilation per spatial dim.
  int64_t cudnnPads[3] = {}, cudnnStrides[3] = {};
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
  // (Strides of size-1 dims never affect an address.)
  if (!isRowMajorContiguous(kernel.sizes.data(), kernel.strides.data(), rank))
    throw OpError(std::string("the ") + wName +
                  " must be contiguous on cuda: " + describe());

  // cuDNN's x and y: DISC's input and output, swapped for backward data;
  // its filter: DISC's kernel, for backward data with its channel dims
  // swapped ([K, C'/G, k...] for the forward with K input channels of the
  // transposed convolution and C' its outputs).
  const Operand &xOperand = backwardData ? output : input;
  const Operand &yOperand = backwardData ? input : output;
  auto filterSize = [&](int64_t d) {
    if (backwardData && d < 2)
      return d == 0 ? input.sizes[1] : output.sizes[1] / groups;
    return kernel.sizes[d];
  };
  CudnnProblem p;
  p.direction = direction;
  p.type = cudnnTypeOf(dtype);
  p.groups = groups;
  // 1-d as 2-d of height 1: dims, strides and parameters get a leading
  // spatial slot.
  const bool oneD = spatial == 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (oneD && d == 2) {
      p.xDims.push_back(1);
      p.xStrides.push_back(
          toInt(xOperand.sizes[2] * xOperand.strides[2], "stride"));
      p.yDims.push_back(1);
      p.yStrides.push_back(
          toInt(yOperand.sizes[2] * yOperand.strides[2], "stride"));
      p.wDims.push_back(1);
    }
    p.xDims.push_back(toInt(xOperand.sizes[d], "input size"));
    p.xStrides.push_back(toInt(xOperand.strides[d], "input stride"));
    p.yDims.push_back(toInt(yOperand.sizes[d], "output size"));
    p.yStrides.push_back(toInt(yOperand.strides[d], "output stride"));
    p.wDims.push_back(toInt(filterSize(d), "kernel size"));
  }
  if (oneD) {
    p.pads.push_back(0), p.convStrides.push_back(1);
    p.dilations.push_back(1);
  }
  for (int64_t s = 0; s < spatial; ++s) {
    p.pads.push_back(toInt(cudnnPads[s], "padding"));
    p.convStrides.push_back(toInt(cudnnStrides[s], "stride"));
    p.dilations.push_back(toInt(call.dilations[s], "dilation"));
  }
  // A size-1 dim may carry any stride; cuDNN wants positive ones.
  for (size_t d = 0; d < p.xStrides.size(); ++d) {
    p.xStrides[d] = std::max(p.xStrides[d], 1);
    p.yStrides[d] = std::max(p.yStrides[d], 1);
  }
  // The math cuDNN may use, as PyTorch sets it: f32 with TF32 allowed is
  // the default math (TF32 tensor cores on sm_80 and newer), without it FMA
  // only; f16 and bf16 tensor cores.
  p.mathType = dtype != DType::F32 ? kTensorOpMath
               : ectx.float32Math.tf32Convolution ? kDefaultMath
                                                  : kFmaMath;
  p.tensorCoresAllowed = p.mathType != kFmaMath;
  const Library &lib = library();
  Handle handle = handleFor(cuda::currentContext());
  std::lock_guard<std::mutex> streamLock(streamLockFor(handle));
  check(lib.setStream(handle, ectx.cudaStream), "cudnnSetStream");
  CudnnProblemKey key = p.key();

  // Scratch on the call's stream, freed stream-ordered after the call: at
  // most the workspace and backward data's rearranged kernel.
  struct Scratch {
    ExecutionContext &ectx;
    void *blocks[2] = {};
    int count = 0;
    ~Scratch() {
      for (int i = 0; i < count; ++i)
        releaseDeviceForCall(ectx, blocks[i]);
    }
  } scratch{ectx};
  auto allocate = [&](int64_t bytes) {
    if (scratch.count == 2)
      throw RuntimeError("a third scratch buffer for one convolution");
    void *ptr = allocateDeviceForCall(&ectx, bytes);
    if (!ptr)
      throw RuntimeError(ectx.errorMessage);
    scratch.blocks[scratch.count++] = ptr;
    return ptr;
  };
  // cuDNN's x, w and y data; backward data's filter is the kernel
  // rearranged into scratch.
  void *xData = backwardData ? output.data : input.data;
  void *wData = kernel.data;
  void *yData = backwardData ? input.data : output.data;
  const float one = 1.0f, zero = 0.0f;
  if (backwardData) {
    const KernelSwap &swap =
        *cuda::preparedPerProblem<std::unique_ptr<KernelSwap>>(
            handle, key,
            [&] { return makeKernelSwap(lib, p.type, groups, kernel.sizes); });
    wData = allocate(numElements(kernel.sizes) * (int64_t)elemSize);
    check(lib.transformTensor(handle, &one, swap.from, kernel.data, &zero,
                              swap.to, wData),
          "cudnnTransformTensor(kernel)");
  }

  if (api == CudnnApi::Backend) {
    void *const data[3] = {xData, wData, yData};
    executeConvolutionPlan(handle, p, key, facts, data, std::cref(allocate),
                           std::cref(describe));
    return;
  }

  const PreparedConvolution &prepared =
      cuda::preparedPerProblem<PreparedConvolution>(handle, key, [&] {
        return prepareLegacy(lib, handle, p, facts, describe());
      });
  const Descriptors &d = *prepared.descriptors;
  const AlgoPerf choice = prepared.choice;
  void *workspace =
      choice.memory > 0 ? allocate((int64_t)choice.memory) : nullptr;
  Status status = 0;
  switch (direction) {
  case Direction::Forward:
    status = lib.forward(handle, &one, d.x, xData, d.w, wData, d.conv,
                         choice.algo, workspace, choice.memory, &zero, d.y,
                         yData);
    break;
  case Direction::BackwardFilter:
    status = lib.backwardFilter(handle, &one, d.x, xData, d.y, yData, d.conv,
                                choice.algo, workspace, choice.memory, &zero,
                                d.w, wData);
    break;
  case Direction::BackwardData:
    status = lib.backwardData(handle, &one, d.w, wData, d.y, yData, d.conv,
                              choice.algo, workspace, choice.memory, &zero,
                              d.x, xData);
    break;
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
