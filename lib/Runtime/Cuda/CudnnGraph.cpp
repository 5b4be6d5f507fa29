//===- CudnnGraph.cpp - convolutions through cuDNN's graph API -----------===//
//
// DISC_CUDA_CONV_API=backend (the default): cuDNN's graph (backend) API,
// as PyTorch's cudnn frontend uses it. Per (handle, problem, pointer
// alignments), once: tensor and convolution descriptors, a one-operation
// graph, the heuristic's engine configs (mode A, then the fallback list)
// filtered by their numerical notes, and the first execution plan that
// finalizes. Per call: a variant pack (the three pointers and the
// workspace) and cudnnBackendExecute.
//
//===----------------------------------------------------------------------===//
#include "Cudnn.h"

#include "../ExecutionContext.h"
#include "../Operand.h"

#include <algorithm>
#include <cstdio>
#include <deque>

namespace disc {
namespace ral {
namespace {

/// The graph API's preparation, once per (handle, problem, pointer
/// alignments): the execution plan of a one-operation graph, with every
/// descriptor it was made from kept alive beside it.
struct PreparedPlan {
  // A deque: the preparation holds references to earlier parts while it
  // adds more.
  std::deque<cudnn::BackendDescriptor> parts;
  cudnn::BackendDescriptor plan;
  int64_t workspaceBytes = 0;
};

/// The uids of x, w and y in the graph and the variant pack.
constexpr int64_t kUids[3] = {1, 2, 3};

/// The largest power of two up to 16 that divides `address`: a tensor's
/// byte alignment as the graph API takes it (PyTorch's getAlignment).
int64_t byteAlignment(const void *address) {
  auto bits = reinterpret_cast<uintptr_t>(address);
  int64_t alignment = 1;
  while (alignment < 16 && bits % (2 * alignment) == 0)
    alignment *= 2;
  return alignment;
}

PreparedPlan preparePlan(cudnn::Handle handle, const CudnnProblem &p,
                         const int64_t alignments[3],
                         const DirectionFacts &facts,
                         const std::string &described) {
  using namespace cudnn;
  using namespace cudnn::backend;
  PreparedPlan prepared;
  auto make = [&](int type, const char *what) -> const BackendDescriptor & {
    prepared.parts.emplace_back(type, what);
    return prepared.parts.back();
  };
  auto widen = [](const ConvInts &values) {
    return std::vector<int64_t>(values.begin(), values.end());
  };
  // x, w (packed) and y.
  std::vector<int64_t> wStrides(p.wDims.size());
  int64_t stride = 1;
  for (int d = p.rank() - 1; d >= 0; --d)
    wStrides[d] = stride, stride *= p.wDims[d];
  const std::vector<int64_t> dims[3] = {widen(p.xDims), widen(p.wDims),
                                        widen(p.yDims)};
  const std::vector<int64_t> strides[3] = {widen(p.xStrides), wStrides,
                                           widen(p.yStrides)};
  const BackendDescriptor *tensors[3];
  for (int t = 0; t < 3; ++t) {
    const BackendDescriptor &tensor =
        make(kTensor, "cudnnBackendCreateDescriptor(tensor)");
    tensor.set(kTensorDataType, kTypeDataType, 1, &p.type,
               "cudnnBackendSetAttribute(TENSOR_DATA_TYPE)");
    tensor.setInt64s(kTensorDims, dims[t],
                     "cudnnBackendSetAttribute(TENSOR_DIMENSIONS)");
    tensor.setInt64s(kTensorStrides, strides[t],
                     "cudnnBackendSetAttribute(TENSOR_STRIDES)");
    tensor.set(kTensorUid, kTypeInt64, 1, &kUids[t],
               "cudnnBackendSetAttribute(TENSOR_UNIQUE_ID)");
    tensor.set(kTensorAlignment, kTypeInt64, 1, &alignments[t],
               "cudnnBackendSetAttribute(TENSOR_BYTE_ALIGNMENT)");
    tensor.finalize("cudnnBackendFinalize(tensor)");
    tensors[t] = &tensor;
  }
  // The convolution: cross-correlation, or convolution (the kernel read
  // flipped) for backward data; f32 accumulation.
  const BackendDescriptor &conv =
      make(cudnn::backend::kConvolution,
           "cudnnBackendCreateDescriptor(convolution)");
  const int computeType = kFloat;
  const int mode = p.direction == Direction::BackwardData
                       ? cudnn::kConvolution
                       : kCrossCorrelation;
  const int64_t spatial = p.rank() - 2;
  conv.set(kConvComputeType, kTypeDataType, 1, &computeType,
           "cudnnBackendSetAttribute(CONVOLUTION_COMP_TYPE)");
  conv.set(kConvMode, kTypeConvolutionMode, 1, &mode,
           "cudnnBackendSetAttribute(CONVOLUTION_CONV_MODE)");
  conv.set(kConvSpatialDims, kTypeInt64, 1, &spatial,
           "cudnnBackendSetAttribute(CONVOLUTION_SPATIAL_DIMS)");
  conv.setInt64s(kConvDilations, widen(p.dilations),
                 "cudnnBackendSetAttribute(CONVOLUTION_DILATIONS)");
  conv.setInt64s(kConvFilterStrides, widen(p.convStrides),
                 "cudnnBackendSetAttribute(CONVOLUTION_FILTER_STRIDES)");
  conv.setInt64s(kConvPrePaddings, widen(p.pads),
                 "cudnnBackendSetAttribute(CONVOLUTION_PRE_PADDINGS)");
  conv.setInt64s(kConvPostPaddings, widen(p.pads),
                 "cudnnBackendSetAttribute(CONVOLUTION_POST_PADDINGS)");
  conv.finalize("cudnnBackendFinalize(convolution)");
  // The operation and its graph.
  const BackendDescriptor &operation =
      make(facts.operation, "cudnnBackendCreateDescriptor(operation)");
  const float one = 1.0f, zero = 0.0f;
  operation.setDescriptor(facts.x, *tensors[0],
                          "cudnnBackendSetAttribute(operation's x)");
  operation.setDescriptor(facts.w, *tensors[1],
                          "cudnnBackendSetAttribute(operation's w)");
  operation.setDescriptor(facts.y, *tensors[2],
                          "cudnnBackendSetAttribute(operation's y)");
  operation.setDescriptor(facts.convolution, conv,
                          "cudnnBackendSetAttribute(operation's "
                          "convolution)");
  operation.set(facts.alpha, kTypeFloat, 1, &one,
                "cudnnBackendSetAttribute(operation's alpha)");
  operation.set(facts.beta, kTypeFloat, 1, &zero,
                "cudnnBackendSetAttribute(operation's beta)");
  operation.finalize("cudnnBackendFinalize(operation)");
  const BackendDescriptor &graph =
      make(kOperationGraph, "cudnnBackendCreateDescriptor(operation graph)");
  graph.setDescriptor(kGraphOperations, operation,
                      "cudnnBackendSetAttribute(OPERATIONGRAPH_OPS)");
  graph.set(kGraphHandle, kTypeHandle, 1, &handle,
            "cudnnBackendSetAttribute(OPERATIONGRAPH_HANDLE)");
  graph.finalize("cudnnBackendFinalize(operation graph)");
  // The heuristic's engine configs, best first (mode A, then the fallback
  // list); the first whose plan finalizes wins. Skipped, as PyTorch does:
  // engines that down-convert their inputs, and for f32 without TF32 those
  // that use tensor cores.
  int configsSeen = 0, skipped = 0, failed = 0;
  Status lastFailure = 0;
  for (int heuristicsMode : {kHeuristicsModeA, kHeuristicsFallback}) {
    BackendDescriptor heuristics(kEngineHeuristics,
                                 "cudnnBackendCreateDescriptor(engine "
                                 "heuristics)");
    heuristics.setDescriptor(kHeuristicsGraph, graph,
                             "cudnnBackendSetAttribute(ENGINEHEUR_"
                             "OPERATION_GRAPH)");
    heuristics.set(kHeuristicsMode, kTypeHeuristicMode, 1, &heuristicsMode,
                   "cudnnBackendSetAttribute(ENGINEHEUR_MODE)");
    heuristics.finalize("cudnnBackendFinalize(engine heuristics)");
    int64_t count = 0;
    check(library().getAttribute(heuristics.get(), kHeuristicsResults,
                                 kTypeDescriptor, 0, &count, nullptr),
          "cudnnBackendGetAttribute(ENGINEHEUR_RESULTS count)");
    std::vector<BackendDescriptor> configs;
    std::vector<BackendDesc> raw;
    for (int64_t c = 0; c < count; ++c) {
      configs.emplace_back(kEngineConfig,
                           "cudnnBackendCreateDescriptor(engine config)");
      raw.push_back(configs.back().get());
    }
    int64_t returned = 0;
    if (count > 0)
      check(library().getAttribute(heuristics.get(), kHeuristicsResults,
                                   kTypeDescriptor, count, &returned,
                                   raw.data()),
            "cudnnBackendGetAttribute(ENGINEHEUR_RESULTS)");
    for (int64_t c = 0; c < std::min(returned, count); ++c) {
      ++configsSeen;
      BackendDescriptor engine(kEngine,
                               "cudnnBackendCreateDescriptor(engine)");
      BackendDesc engineRaw = engine.get();
      int64_t engineCount = 0;
      check(library().getAttribute(configs[c].get(), kConfigEngine,
                                   kTypeDescriptor, 1, &engineCount,
                                   &engineRaw),
            "cudnnBackendGetAttribute(ENGINECFG_ENGINE)");
      int notes[kNoteCount] = {};
      int64_t noteCount = 0;
      check(library().getAttribute(engine.get(), kEngineNumericalNotes,
                                   kTypeNumericalNote, kNoteCount, &noteCount,
                                   notes),
            "cudnnBackendGetAttribute(ENGINE_NUMERICAL_NOTE)");
      bool skip = false;
      for (int64_t n = 0; n < std::min<int64_t>(noteCount, kNoteCount); ++n)
        skip |= notes[n] == kNoteDownConvertInputs ||
                (notes[n] == kNoteTensorCore && !p.tensorCoresAllowed);
      if (skip) {
        ++skipped;
        continue;
      }
      BackendDescriptor plan(kExecutionPlan,
                             "cudnnBackendCreateDescriptor(execution plan)");
      plan.set(kPlanHandle, kTypeHandle, 1, &handle,
               "cudnnBackendSetAttribute(EXECUTION_PLAN_HANDLE)");
      plan.setDescriptor(kPlanConfig, configs[c],
                         "cudnnBackendSetAttribute(EXECUTION_PLAN_ENGINE_"
                         "CONFIG)");
      if (Status status = library().finalize(plan.get())) {
        // This engine does not take the problem: the next one may.
        ++failed, lastFailure = status;
        continue;
      }
      int64_t workspace = 0, returnedCount = 0;
      check(library().getAttribute(plan.get(), kPlanWorkspaceSize,
                                   kTypeInt64, 1, &returnedCount, &workspace),
            "cudnnBackendGetAttribute(EXECUTION_PLAN_WORKSPACE_SIZE)");
      int64_t engineIndex = -1;
      library().getAttribute(engine.get(), kEngineGlobalIndex, kTypeInt64, 1,
                             &returnedCount, &engineIndex);
      if (logLibraryCalls())
        std::fprintf(
            stderr,
            "[disc] library: cuDNN plan for %s (%s): engine %lld (%s, "
            "config %d of those seen; %d skipped for their numerics, %d "
            "did not take the problem), workspace %lld bytes\n",
            facts.what, described.c_str(), (long long)engineIndex,
            heuristicsMode == kHeuristicsModeA ? "heuristic mode A"
                                               : "fallback list",
            configsSeen, skipped, failed, (long long)workspace);
      prepared.parts.push_back(std::move(configs[c]));
      prepared.plan = std::move(plan);
      prepared.workspaceBytes = workspace;
      return prepared;
    }
  }
  std::string why = std::to_string(configsSeen) + " engine configs, " +
                    std::to_string(skipped) + " skipped for their numerics";
  if (failed) {
    const char *text = library().errorString(lastFailure);
    why += ", " + std::to_string(failed) + " did not take it (last: " +
           (text ? text : "status " + std::to_string(lastFailure)) + ")";
  }
  throw OpError(std::string("cuDNN has no engine for ") + facts.what + " (" +
                why + "; DISC_CUDA_CONV_API=legacy tries the legacy API): " +
                described);
}

} // namespace

void executeConvolutionPlan(cudnn::Handle handle, const CudnnProblem &p,
                            CudnnProblemKey key,
                            const DirectionFacts &facts, void *const data[3],
                            const std::function<void *(int64_t)> &allocate,
                            const std::function<std::string()> &describe) {
  using namespace cudnn;
  const int64_t alignments[3] = {byteAlignment(data[0]),
                                 byteAlignment(data[1]),
                                 byteAlignment(data[2])};
  std::copy(alignments, alignments + 3,
            key.values.end() - CudnnProblemKey::kAlignmentSlots);
  const PreparedPlan &prepared =
      cuda::preparedPerProblem<PreparedPlan>(handle, key, [&] {
        return preparePlan(handle, p, alignments, facts, describe());
      });
  void *workspace = prepared.workspaceBytes > 0
                        ? allocate(prepared.workspaceBytes)
                        : nullptr;
  BackendDescriptor pack(backend::kVariantPack,
                         "cudnnBackendCreateDescriptor(variant pack)");
  pack.set(backend::kPackPointers, backend::kTypeVoidPtr, 3, data,
           "cudnnBackendSetAttribute(VARIANT_PACK_DATA_POINTERS)");
  pack.set(backend::kPackUids, backend::kTypeInt64, 3, kUids,
           "cudnnBackendSetAttribute(VARIANT_PACK_UNIQUE_IDS)");
  pack.set(backend::kPackWorkspace, backend::kTypeVoidPtr, 1, &workspace,
           "cudnnBackendSetAttribute(VARIANT_PACK_WORKSPACE)");
  pack.finalize("cudnnBackendFinalize(variant pack)");
  // The call's name is built only when it failed: host time per call.
  if (Status status =
          library().execute(handle, prepared.plan.get(), pack.get()))
    check(status,
          (std::string("cudnnBackendExecute(") + facts.what + ")").c_str());
}

} // namespace ral
} // namespace disc
