//===- OneDnn.cpp - matmul and convolution through oneDNN (v2 API) --------===//
//
// Each operation:
//  1. reads and validates the memref descriptors (ranks, matching sizes), so
//     that bad shapes fail with a clear message instead of oneDNN reading out
//     of bounds;
//  2. handles zero-size problems without oneDNN (nothing to do, or zeros when
//     the reduction is empty);
//  3. describes the caller's buffers with plain strided memory descriptors
//     (a buffer whose strides oneDNN cannot describe -- zero/negative strides,
//     overlapping dims -- is first copied into a contiguous temporary);
//  4. gets a CachedPrimitive from the Context's cache (built on a miss), and
//     runs it on a per-call dnnl::stream, with scratchpads and reorder
//     temporaries taken from the Context's caching allocator.
//
// Low precision: bf16 and f16 operations use oneDNN's native primitive when
// this CPU has one. When oneDNN reports the primitive unimplemented (f16 on
// most x86 CPUs with oneDNN 2.x), the operation runs in f32 instead: reorders
// convert the inputs to f32 temporaries, the f32 primitive computes, and a
// reorder converts the result back into the caller's buffer. The decision is
// cached with the primitive.
//
//===----------------------------------------------------------------------===//

#include "OneDnn.h"

#include "LibraryState.h"
#include "Operand.h"
#include "SmallMatmul.h"
#include "StridedCopy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#ifdef DISC_RAL_HAS_OPENMP
#include <omp.h>
#endif

namespace disc {
namespace ral {

bool logLibraryCalls() {
  const char *env = std::getenv("DISC_LOG");
  if (!env)
    return false;
  std::string topics = std::string(",") + env + ",";
  topics.erase(std::remove(topics.begin(), topics.end(), ' '), topics.end());
  return topics.find(",library,") != std::string::npos ||
         topics.find(",all,") != std::string::npos;
}

namespace {

using dnnl::memory;

memory::data_type toDnnl(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return memory::data_type::f32;
  case DType::BF16:
    return memory::data_type::bf16;
  case DType::F16:
    return memory::data_type::f16;
  default:
    throw OpError(std::string("unsupported dtype ") + dtypeName(dtype));
  }
}

/// Makes `strides` acceptable to oneDNN's plain strided memory descriptors if
/// possible: the strides of size-1 dims (which never affect an address) are
/// set past the extent of the others; the remaining dims must have positive,
/// non-overlapping strides. Returns false when that is not the case.
/// (Any containers of int64_t: an operand's Dims, or the vectors of a
/// grouped convolution's weights.)
template <typename Sizes, typename Strides>
bool canonicalizeStrides(const Sizes &sizes, Strides &strides) {
  int64_t extent = 1;
  std::vector<size_t> order;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1)
      continue;
    if (strides[d] <= 0)
      return false;
    extent = std::max(extent, strides[d] * sizes[d]);
    order.push_back(d);
  }
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] == 1)
      strides[d] = extent;
  std::sort(order.begin(), order.end(),
            [&](size_t x, size_t y) { return strides[x] < strides[y]; });
  for (size_t i = 0; i + 1 < order.size(); ++i)
    if (strides[order[i + 1]] < strides[order[i]] * sizes[order[i]])
      return false;
  return true;
}

/// Ensures an input operand's layout can be described to oneDNN, copying it
/// into a contiguous temporary if necessary.
void prepareInput(Operand &operand, size_t elemSize) {
  Dims strides = operand.strides;
  if (canonicalizeStrides(operand.sizes, strides)) {
    operand.strides = strides;
    return;
  }
  makeContiguous(operand, elemSize);
}

/// Like prepareInput for an output: returns true when the result must be
/// computed into the contiguous `operand.copy` and then copied out to
/// `originalData` with `originalStrides`.
bool prepareOutput(Operand &operand, Dims &originalStrides,
                   void *&originalData, size_t elemSize) {
  Dims strides = operand.strides;
  if (canonicalizeStrides(operand.sizes, strides)) {
    operand.strides = strides;
    return false;
  }
  originalStrides = operand.strides;
  originalData = operand.data;
  operand.strides = contiguousStrides(operand.sizes);
  operand.copy.resize(numElements(operand.sizes) * elemSize);
  operand.data = operand.copy.data();
  return true;
}

void fillZero(const Operand &operand, size_t elemSize) {
  static const char zeros[16] = {};
  std::vector<int64_t> zeroStrides(operand.sizes.size(), 0);
  stridedCopy(operand.data, operand.strides.data(), zeros, zeroStrides.data(),
              operand.sizes.data(), static_cast<int64_t>(operand.sizes.size()),
              elemSize);
}

void appendKey(std::string &key, const Dims &values) {
  for (int64_t v : values) {
    key += std::to_string(v);
    key += ',';
  }
  key += ';';
}

dnnl::primitive_attr userScratchpadAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

/// A reorder step between two layouts or data types.
PrimitiveStep makeReorder(const dnnl::engine &engine, const memory::desc &from,
                          const memory::desc &to) {
  dnnl::reorder::primitive_desc reorderPd(engine, from, engine, to,
                                          userScratchpadAttr());
  return PrimitiveStep{dnnl::reorder(reorderPd), reorderPd.scratchpad_desc()};
}

/// Adds to `entry` the reorders between the caller's descriptors and the
/// primitive's (entry.src, weights, dst) where they differ. `src` is read;
/// `weights` read and `dst` written, or with `backwardWeights` the other way
/// round (a backward-weights primitive reads the output gradient, `dst`, and
/// writes the kernel gradient, `weights`).
void addReorders(const dnnl::engine &engine, CachedPrimitive &entry,
                 const memory::desc &src, const memory::desc &weights,
                 const memory::desc &dst, bool backwardWeights) {
  if (entry.src != src) {
    entry.hasSrcReorder = true;
    entry.srcReorder = makeReorder(engine, src, entry.src);
  }
  if (entry.weights != weights) {
    entry.hasWeightsReorder = true;
    entry.weightsReorder = backwardWeights
                               ? makeReorder(engine, entry.weights, weights)
                               : makeReorder(engine, weights, entry.weights);
  }
  if (entry.dst != dst) {
    entry.hasDstReorder = true;
    entry.dstReorder = backwardWeights ? makeReorder(engine, dst, entry.dst)
                                       : makeReorder(engine, entry.dst, dst);
  }
}

/// Builds the cache entry of a three-operand primitive. `makePd(src,
/// weights, dst)` returns the primitive descriptor for the given memory
/// descriptors and attributes. With `anyLayout`, the primitive picks its own
/// layouts and reorders are added for the caller's layouts.
template <typename Primitive, typename MakePd>
std::shared_ptr<CachedPrimitive>
buildPrimitive(const dnnl::engine &engine, DType dtype, const memory::desc &src,
               const memory::desc &weights, const memory::desc &dst,
               bool anyLayout, const dnnl::primitive_attr &computeAttr,
               MakePd makePd,
               memory::format_tag activationTag = memory::format_tag::any) {
  auto makeDescs = [&](memory::data_type type) {
    auto one = [&](const memory::desc &user) {
      memory::dims dims = user.dims();
      if (anyLayout)
        return memory::desc(dims, type,
                            &user == &weights ? memory::format_tag::any
                                              : activationTag);
      // Same dims, contiguous (only used for the f32 fallback).
      if (type == user.data_type())
        return user;
      return memory::desc(dims, type, contiguousStrides(dims));
    };
    return std::make_tuple(one(src), one(weights), one(dst));
  };

  auto entry = std::make_shared<CachedPrimitive>();
  typename Primitive::primitive_desc pd;
  const memory::data_type requested = toDnnl(dtype);
  try {
    auto [s, w, d] = makeDescs(requested);
    pd = makePd(s, w, d, computeAttr);
  } catch (const dnnl::error &e) {
    if (e.status != dnnl_unimplemented || dtype == DType::F32)
      throw;
    // No implementation for this data type on this CPU: compute in f32.
    entry->computesInF32 = true;
    auto [s, w, d] = makeDescs(memory::data_type::f32);
    pd = makePd(s, w, d, computeAttr);
  }
  entry->compute = {Primitive(pd), pd.scratchpad_desc()};
  entry->src = pd.src_desc();
  entry->weights = pd.weights_desc();
  entry->dst = pd.dst_desc();
  addReorders(engine, *entry, src, weights, dst, /*backwardWeights=*/false);
  return entry;
}

/// A temporary oneDNN memory (scratchpad, reordered operand) for one
/// execution, backed by the Context's caching allocator. An empty
/// descriptor gives no memory.
class TempMemory {
public:
  TempMemory(Allocator &allocator, const dnnl::engine &engine,
             const memory::desc &desc)
      : allocator(allocator) {
    const size_t bytes = desc.get_size();
    if (bytes == 0)
      return;
    data = allocator.allocate(bytes);
    mem = memory(desc, engine, data);
  }
  ~TempMemory() {
    if (data)
      allocator.deallocate(data);
  }
  TempMemory(const TempMemory &) = delete;
  TempMemory &operator=(const TempMemory &) = delete;

  explicit operator bool() const { return data != nullptr; }
  const memory &get() const { return mem; }

private:
  Allocator &allocator;
  void *data = nullptr;
  memory mem;
};

void runStep(Allocator &allocator, const dnnl::engine &engine,
             dnnl::stream &stream, const PrimitiveStep &step,
             std::unordered_map<int, memory> args) {
  TempMemory scratchpad(allocator, engine, step.scratchpad);
  if (scratchpad)
    args.emplace(DNNL_ARG_SCRATCHPAD, scratchpad.get());
  step.primitive.execute(stream, args);
  // The scratchpad is released when this returns.
  stream.wait();
}

/// Runs a cached primitive on the caller's buffers.
void execute(Allocator &allocator, const dnnl::engine &engine,
             const CachedPrimitive &entry, const memory::desc &srcDesc,
             void *srcData, const memory::desc &weightsDesc, void *weightsData,
             const memory::desc &dstDesc, void *dstData,
             std::unordered_map<int, memory> computeArgs,
             std::unordered_map<int, memory> postOpArgs) {
  dnnl::stream stream(engine);
  const memory src(srcDesc, engine, srcData);
  const memory weights(weightsDesc, engine, weightsData);
  const memory dst(dstDesc, engine, dstData);
  // Operands in the primitive's layouts/types, where they differ.
  const TempMemory srcTemp(allocator, engine,
                           entry.hasSrcReorder ? entry.src : memory::desc());
  const TempMemory weightsTemp(allocator, engine,
                               entry.hasWeightsReorder ? entry.weights
                                                       : memory::desc());
  const TempMemory dstTemp(allocator, engine,
                           entry.hasDstReorder ? entry.dst : memory::desc());
  const memory &computeSrc = entry.hasSrcReorder ? srcTemp.get() : src;
  const memory &computeWeights =
      entry.hasWeightsReorder ? weightsTemp.get() : weights;
  const memory &computeDst = entry.hasDstReorder ? dstTemp.get() : dst;
  if (entry.hasSrcReorder)
    runStep(allocator, engine, stream, entry.srcReorder,
            {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, computeSrc}});
  if (entry.hasWeightsReorder)
    runStep(allocator, engine, stream, entry.weightsReorder,
            {{DNNL_ARG_FROM, weights}, {DNNL_ARG_TO, computeWeights}});
  computeArgs.emplace(DNNL_ARG_SRC, computeSrc);
  computeArgs.emplace(DNNL_ARG_WEIGHTS, computeWeights);
  computeArgs.emplace(DNNL_ARG_DST, computeDst);
  if (entry.hasSeparateEpilogue) {
    runStep(allocator, engine, stream, entry.compute, std::move(computeArgs));
    // dst = dst * 1, then the post-ops, in place.
    static float one = 1.0f;
    const memory::dims ones(computeDst.get_desc().dims().size(), 1);
    postOpArgs.emplace(DNNL_ARG_SRC_0, computeDst);
    postOpArgs.emplace(DNNL_ARG_SRC_1,
                       memory(memory::desc(ones, memory::data_type::f32,
                                           contiguousStrides(ones)),
                              engine, &one));
    postOpArgs.emplace(DNNL_ARG_DST, computeDst);
    runStep(allocator, engine, stream, entry.separateEpilogue,
            std::move(postOpArgs));
  } else {
    computeArgs.merge(postOpArgs);
    runStep(allocator, engine, stream, entry.compute, std::move(computeArgs));
  }
  if (entry.hasDstReorder)
    runStep(allocator, engine, stream, entry.dstReorder,
            {{DNNL_ARG_FROM, computeDst}, {DNNL_ARG_TO, dst}});
}

/// Looks `key` up in the cache, building (and caching) the entry on a miss.
template <typename Build>
std::shared_ptr<const CachedPrimitive>
getPrimitive(Context::LibraryState &state, const std::string &key,
             Build build) {
  if (auto cached = state.lookup(key))
    return cached;
  return state.insert(key, build());
}

/// Runs `body` with guardedCall; a oneDNN error also names its status.
template <typename Body>
bool guarded(ExecutionContext &ectx, const char *opName, Body body) noexcept {
  return guardedCall(ectx, opName, [&]() {
    try {
      body();
    } catch (const dnnl::error &e) {
      throw std::runtime_error(std::string("oneDNN error: ") + e.what() +
                               " (status " + std::to_string(e.status) + ")");
    }
  });
}

//===----------------------------------------------------------------------===//
// Epilogues (oneDNN post-ops)
//===----------------------------------------------------------------------===//

struct EpilogueStep {
  PostOpKind kind;
  float alpha = 0, beta = 0;
  int operand = -1; // index into Epilogue::operands for binary steps
};

/// A call's epilogue, read and validated against the result's sizes.
struct Epilogue {
  std::vector<EpilogueStep> steps;
  std::vector<Operand> operands;
  bool empty() const { return steps.empty(); }
};

bool isBinary(PostOpKind kind) {
  return static_cast<int64_t>(kind) < static_cast<int64_t>(PostOpKind::Relu);
}

/// Reads `args`; each operand must have `resultSizes`' rank and dims that
/// are 1 or the result's.
Epilogue readEpilogue(const EpilogueArgs *args, const Dims &resultSizes,
                      size_t elemSize) {
  Epilogue epilogue;
  if (!args)
    return epilogue;
  Operand steps = readOperand("epilogue steps", args->steps, 1, sizeof(double));
  if (steps.sizes[0] % 3 != 0)
    throw OpError("epilogue steps must be (kind, alpha, beta) triples, got " +
                  std::to_string(steps.sizes[0]) + " values");
  const auto *values = static_cast<const double *>(steps.data);
  const int64_t stride = steps.strides[0];
  const int64_t rank = static_cast<int64_t>(resultSizes.size());
  for (int64_t i = 0; i < steps.sizes[0] / 3; ++i) {
    const double kindValue = values[3 * i * stride];
    EpilogueStep step;
    step.kind = static_cast<PostOpKind>(static_cast<int64_t>(kindValue));
    switch (step.kind) {
    case PostOpKind::Add:
    case PostOpKind::Subtract:
    case PostOpKind::Multiply:
    case PostOpKind::Divide:
    case PostOpKind::Maximum:
    case PostOpKind::Minimum:
    case PostOpKind::Relu:
    case PostOpKind::Clamp:
    case PostOpKind::Logistic:
    case PostOpKind::Tanh:
    case PostOpKind::Swish:
    case PostOpKind::GeluErf:
      break;
    default:
      throw OpError("unknown epilogue step kind " + std::to_string(kindValue));
    }
    step.alpha = static_cast<float>(values[(3 * i + 1) * stride]);
    step.beta = static_cast<float>(values[(3 * i + 2) * stride]);
    if (isBinary(step.kind)) {
      const int index = static_cast<int>(epilogue.operands.size());
      if (index == kMaxEpilogueOperands)
        throw OpError("an epilogue takes at most " +
                      std::to_string(kMaxEpilogueOperands) + " operands");
      const std::string role = "epilogue operand " + std::to_string(index);
      Operand operand = readOperand(role.c_str(), args->operands[index],
                                    rank, elemSize);
      for (int64_t d = 0; d < rank; ++d)
        if (operand.sizes[d] != 1 && operand.sizes[d] != resultSizes[d])
          throw OpError(role + " is " + shapeString(operand.sizes) +
                        "; its dims must be 1 or the result's " +
                        shapeString(resultSizes));
      prepareInput(operand, elemSize);
      step.operand = index;
      epilogue.operands.push_back(std::move(operand));
    }
    epilogue.steps.push_back(step);
  }
  return epilogue;
}

dnnl::algorithm binaryAlgorithm(PostOpKind kind) {
  switch (kind) {
  case PostOpKind::Add:
    return dnnl::algorithm::binary_add;
  case PostOpKind::Subtract:
    return dnnl::algorithm::binary_sub;
  case PostOpKind::Multiply:
    return dnnl::algorithm::binary_mul;
  case PostOpKind::Divide:
    return dnnl::algorithm::binary_div;
  case PostOpKind::Maximum:
    return dnnl::algorithm::binary_max;
  default:
    return dnnl::algorithm::binary_min;
  }
}

dnnl::algorithm eltwiseAlgorithm(PostOpKind kind) {
  switch (kind) {
  case PostOpKind::Relu:
    return dnnl::algorithm::eltwise_relu;
  case PostOpKind::Clamp:
    return dnnl::algorithm::eltwise_clip;
  case PostOpKind::Logistic:
    return dnnl::algorithm::eltwise_logistic;
  case PostOpKind::Tanh:
    return dnnl::algorithm::eltwise_tanh;
  case PostOpKind::Swish:
    return dnnl::algorithm::eltwise_swish;
  default:
    return dnnl::algorithm::eltwise_gelu_erf;
  }
}

memory::desc operandDesc(const Operand &operand, memory::data_type dt) {
  return memory::desc(operand.sizes, dt, operand.strides);
}

/// The compute primitive's attributes: a user scratchpad and the epilogue
/// as post-ops.
dnnl::primitive_attr computeAttr(const Epilogue &epilogue,
                                 memory::data_type dt) {
  dnnl::primitive_attr attr = userScratchpadAttr();
  if (epilogue.empty())
    return attr;
  dnnl::post_ops ops;
  for (const EpilogueStep &step : epilogue.steps) {
    if (isBinary(step.kind))
      ops.append_binary(binaryAlgorithm(step.kind),
                        operandDesc(epilogue.operands[step.operand], dt));
    else
      ops.append_eltwise(1.0f, eltwiseAlgorithm(step.kind), step.alpha,
                         step.beta);
  }
  attr.set_post_ops(ops);
  return attr;
}

/// The primitive-cache key part of an epilogue.
void appendEpilogueKey(std::string &key, const Epilogue &epilogue) {
  if (epilogue.empty())
    return;
  key += "post:";
  for (const EpilogueStep &step : epilogue.steps) {
    key += std::to_string(static_cast<int64_t>(step.kind)) + "(" +
           std::to_string(step.alpha) + "," + std::to_string(step.beta) + ")";
    if (step.operand >= 0) {
      appendKey(key, epilogue.operands[step.operand].sizes);
      appendKey(key, epilogue.operands[step.operand].strides);
    }
  }
  key += ';';
}

/// The post-op operands' execution arguments.
std::unordered_map<int, memory> postOpArgs(const Epilogue &epilogue,
                                           const dnnl::engine &engine,
                                           memory::data_type dt) {
  std::unordered_map<int, memory> args;
  for (size_t i = 0; i < epilogue.steps.size(); ++i) {
    const EpilogueStep &step = epilogue.steps[i];
    if (step.operand < 0)
      continue;
    const Operand &operand = epilogue.operands[step.operand];
    args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) |
                     DNNL_ARG_SRC_1,
                 memory(operandDesc(operand, dt), engine, operand.data));
  }
  return args;
}

/// A convolution's epilogue that starts with adding a per-channel operand
/// (a bias): that operand becomes oneDNN's bias argument, which every
/// convolution implementation applies natively, and the remaining steps
/// become post-ops. oneDNN's gemm-based convolution (which it picks for
/// depthwise and dilated 1-d convolutions on AVX2) applies binary post-ops
/// per element in reference code: as a post-op, convtasnet's depthwise
/// bias made its convolutions 12x slower.
struct ConvBias {
  bool present = false;
  memory::desc desc;
  void *data = nullptr;
  /// The epilogue without the bias step.
  Epilogue rest;
};

ConvBias splitConvBias(const Epilogue &epilogue, int64_t outChannels,
                       memory::data_type dt) {
  ConvBias bias;
  if (epilogue.empty() || epilogue.steps[0].kind != PostOpKind::Add) {
    bias.rest = epilogue;
    return bias;
  }
  const Operand &operand = epilogue.operands[epilogue.steps[0].operand];
  bool perChannel = true;
  for (size_t d = 0; d < operand.sizes.size(); ++d)
    perChannel &= operand.sizes[d] == (d == 1 ? outChannels : 1);
  if (!perChannel) {
    bias.rest = epilogue;
    return bias;
  }
  bias.present = true;
  // One channel: its stride is meaningless (may be 0); oneDNN wants 1.
  bias.desc = memory::desc({outChannels}, dt,
                           {outChannels == 1 ? 1 : operand.strides[1]});
  bias.data = operand.data;
  bias.rest.operands = epilogue.operands;
  bias.rest.steps.assign(epilogue.steps.begin() + 1, epilogue.steps.end());
  return bias;
}

bool hasBinaryStep(const Epilogue &epilogue) {
  return std::any_of(
      epilogue.steps.begin(), epilogue.steps.end(),
      [](const EpilogueStep &step) { return isBinary(step.kind); });
}

/// An in-place binary primitive on `dst`: dst * 1 (a one-element f32
/// operand), then the epilogue as its post-ops.
PrimitiveStep separateEpilogueStep(const dnnl::engine &engine,
                                   const memory::desc &dst,
                                   const Epilogue &epilogue,
                                   memory::data_type dt) {
  const memory::dims ones(dst.dims().size(), 1);
  dnnl::binary::desc desc(
      dnnl::algorithm::binary_mul, dst,
      memory::desc(ones, memory::data_type::f32, contiguousStrides(ones)), dst);
  dnnl::binary::primitive_desc pd(desc, computeAttr(epilogue, dt), engine);
  return PrimitiveStep{dnnl::binary(pd), pd.scratchpad_desc()};
}

float applyStep(const EpilogueStep &step, float acc, float operand) {
  switch (step.kind) {
  case PostOpKind::Add:
    return acc + operand;
  case PostOpKind::Subtract:
    return acc - operand;
  case PostOpKind::Multiply:
    return acc * operand;
  case PostOpKind::Divide:
    return acc / operand;
  case PostOpKind::Maximum:
    return std::max(acc, operand);
  case PostOpKind::Minimum:
    return std::min(acc, operand);
  case PostOpKind::Relu:
    return acc > 0 ? acc : 0;
  case PostOpKind::Clamp:
    return std::min(std::max(acc, step.alpha), step.beta);
  case PostOpKind::Logistic:
    return 1.0f / (1.0f + std::exp(-acc));
  case PostOpKind::Tanh:
    return std::tanh(acc);
  case PostOpKind::Swish:
    return acc / (1.0f + std::exp(-step.alpha * acc));
  default:
    return 0.5f * acc * (1.0f + std::erf(acc * 0.70710678f));
  }
}

/// Applies an f32 epilogue to `result` in place, element by element. Only
/// for results oneDNN does not compute: an empty reduction (all zeros), a
/// product small enough for smallMatmulF32. Walks the result row by row
/// (its last dim), each binary operand at its own strides, 0 along the dims
/// it broadcasts.
void applyEpilogueDirectly(const Operand &result, const Epilogue &epilogue) {
  // Nothing to apply; and without an epilogue the result may be f16/bf16,
  // which the f32 loop below must not touch (it wrote past a bf16 buffer).
  if (epilogue.empty() || numElements(result.sizes) == 0)
    return;
  const int64_t rank = static_cast<int64_t>(result.sizes.size());
  // A scalar result is one row of one element.
  const int64_t rowLength = rank == 0 ? 1 : result.sizes[rank - 1];
  const int64_t outer = rank == 0 ? 0 : rank - 1;
  // Each binary operand's strides (0 along the dims it broadcasts) and,
  // per row, where that row starts.
  struct OperandWalk {
    std::vector<int64_t> strides;
    int64_t step = 0;
    const float *row = nullptr;
  };
  std::vector<OperandWalk> walks(epilogue.operands.size());
  for (size_t i = 0; i < walks.size(); ++i) {
    const Operand &e = epilogue.operands[i];
    walks[i].strides.resize(rank);
    for (int64_t d = 0; d < rank; ++d)
      walks[i].strides[d] = e.sizes[d] == 1 ? 0 : e.strides[d];
    walks[i].step = rank == 0 ? 0 : walks[i].strides[rank - 1];
  }
  const int64_t resultStep = rank == 0 ? 0 : result.strides[rank - 1];
  std::vector<int64_t> index(outer, 0);
  const int64_t rows = numElements(result.sizes) / rowLength;
  for (int64_t row = 0; row < rows; ++row) {
    int64_t offset = 0;
    for (int64_t d = 0; d < outer; ++d)
      offset += index[d] * result.strides[d];
    float *element = static_cast<float *>(result.data) + offset;
    for (size_t i = 0; i < walks.size(); ++i) {
      int64_t at = 0;
      for (int64_t d = 0; d < outer; ++d)
        at += index[d] * walks[i].strides[d];
      walks[i].row = static_cast<const float *>(epilogue.operands[i].data) + at;
    }
    for (int64_t j = 0; j < rowLength; ++j) {
      float acc = element[j * resultStep];
      for (const EpilogueStep &step : epilogue.steps) {
        const float operand =
            step.operand >= 0
                ? walks[step.operand].row[j * walks[step.operand].step]
                : 0.0f;
        acc = applyStep(step, acc, operand);
      }
      element[j * resultStep] = acc;
    }
    for (int64_t d = outer - 1; d >= 0; --d) {
      if (++index[d] < result.sizes[d])
        break;
      index[d] = 0;
    }
  }
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

void matmul(ExecutionContext &ectx, DType dtype, const UnrankedMemRef *aRef,
            const UnrankedMemRef *bRef, const UnrankedMemRef *cRef, bool transA,
            bool transB, const EpilogueArgs *epilogueArgs) {
  const memory::data_type dt = toDnnl(dtype);
  const size_t elemSize = dtypeSize(dtype);
  MatmulOperands ops =
      readMatmulOperands(aRef, bRef, cRef, transA, transB, elemSize);
  Operand &a = ops.a, &b = ops.b, &c = ops.c;
  const int64_t batch = ops.batch, m = ops.m, k = ops.k, n = ops.n;
  const Epilogue epilogue = readEpilogue(epilogueArgs, c.sizes, elemSize);
  if (!epilogue.empty() && dtype != DType::F32)
    throw OpError("an epilogue needs f32 operands");

  if (batch == 0 || m == 0 || n == 0)
    return;
  if (k == 0) {
    fillZero(c, elemSize);
    applyEpilogueDirectly(c, epilogue);
    return;
  }
  // Few enough multiply-adds that a primitive call costs more than they do.
  if (dtype == DType::F32 && isSmallMatmul(batch, m, k, n)) {
    smallMatmulF32(a, b, c, batch, m, k, n);
    applyEpilogueDirectly(c, epilogue);
    return;
  }

  prepareInput(a, elemSize);
  prepareInput(b, elemSize);
  Dims cStrides;
  void *cData = nullptr;
  const bool copyOut = prepareOutput(c, cStrides, cData, elemSize);

  Context::LibraryState &state = ectx.context.libraries();
  // oneDNN primitives depend on the thread count (ThreadsForCall).
  const int threads = currentThreadCount();
  const memory::desc aDesc(a.sizes, dt, a.strides);
  const memory::desc bDesc(b.sizes, dt, b.strides);
  const memory::desc cDesc(c.sizes, dt, c.strides);
  std::string key = "matmul:";
  key += dtypeName(dtype);
  key += ':';
  for (const Operand *op : {&a, &b, &c}) {
    appendKey(key, op->sizes);
    appendKey(key, op->strides);
  }
  appendEpilogueKey(key, epilogue);
  key += std::to_string(threads);
  auto entry = getPrimitive(state, key, [&]() {
    return buildPrimitive<dnnl::matmul>(
        state.engine, dtype, aDesc, bDesc, cDesc, /*anyLayout=*/false,
        computeAttr(epilogue, dt),
        [&](const memory::desc &s, const memory::desc &w, const memory::desc &d,
            const dnnl::primitive_attr &attr) {
          return dnnl::matmul::primitive_desc(dnnl::matmul::desc(s, w, d), attr,
                                              state.engine);
        });
  });
  execute(ectx.context.allocator(), state.engine, *entry, aDesc, a.data, bDesc,
          b.data, cDesc, c.data, {}, postOpArgs(epilogue, state.engine, dt));
  if (copyOut)
    stridedCopy(cData, cStrides.data(), c.data, c.strides.data(),
                c.sizes.data(), 3, elemSize);
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

/// `operand` ([A, B, S1, ..., Sk]) as [A, B, S1 * ... * Sk] when its spatial
/// dims are one strided run (each non-unit dim's stride is the next
/// non-unit dim's stride times its size); false otherwise.
bool collapseSpatial(Operand &operand) {
  const int64_t rank = static_cast<int64_t>(operand.sizes.size());
  int64_t count = 1, innerStride = 1, expected = 0;
  bool first = true;
  for (int64_t d = rank - 1; d >= 2; --d) {
    const int64_t size = operand.sizes[d], stride = operand.strides[d];
    if (size == 1)
      continue;
    if (!first && stride != expected)
      return false;
    if (first)
      innerStride = stride;
    first = false;
    expected = stride * size;
    count *= size;
  }
  operand.sizes = {operand.sizes[0], operand.sizes[1], count};
  operand.strides = {operand.strides[0], operand.strides[1], innerStride};
  return true;
}

/// The layout a convolution computes its activations in: DISC_CONV_LAYOUT
/// =blocked (the default: channels in blocks of the vector width, nChw16c
/// with AVX-512, nChw8c below it) or =any (oneDNN's choice). oneDNN 2.6
/// picks NHWC on AVX-512, and its reorders between NCHW and NHWC
/// (jit:uni) took ~10x longer than those to and from the blocked layout
/// (jit:blk): resnet18's 60 reorders per call 6.8 ms against 0.6 ms.
memory::format_tag activationLayout(int64_t rank) {
  // Read when a primitive is built (a cache miss), not per call.
  const char *env = std::getenv("DISC_CONV_LAYOUT");
  const unsigned isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const unsigned avx512 = dnnl_cpu_isa_avx512_core;
  const int block = env && std::string(env) == "any" ? 0
                    : (isa & avx512) == avx512       ? 16
                                                     : 8;
  using tag = memory::format_tag;
  if (block == 0)
    return tag::any;
  switch (rank) {
  case 3:
    return block == 16 ? tag::nCw16c : tag::nCw8c;
  case 4:
    return block == 16 ? tag::nChw16c : tag::nChw8c;
  default:
    return block == 16 ? tag::nCdhw16c : tag::nCdhw8c;
  }
}

/// A pointwise convolution (1x1 kernel, unit strides and dilations, no
/// padding, one group) is a matmul per image, [O, C] x [C, H*W], on the
/// caller's NC... layout as it is. As a oneDNN convolution it pays two
/// reorders of the activations per call (NCHW to its blocked or NHWC
/// layout and back), which on a Zen 4 took as long as the convolution
/// itself (Fast-SCNN: 11 of 21 ms per call in reorders). Runs it and
/// returns true when the operands allow (spatial dims collapsible into one
/// run, epilogue operands per image or per channel); false leaves it to
/// the convolution path.
template <typename Describe>
bool runPointwiseAsMatmul(ExecutionContext &ectx, DType dtype,
                          const Operand &input, const Operand &kernel,
                          const Operand &output, const ConvParams &params,
                          const Epilogue &epilogue, Describe describe) {
  const int64_t rank = static_cast<int64_t>(input.sizes.size());
  if (params.groups != 1)
    return false;
  for (int64_t s = 0; s + 2 < rank; ++s)
    if (kernel.sizes[2 + s] != 1 || params.strides[s] != 1 ||
        params.dilations[s] != 1 || params.lhsDilations[s] != 1 ||
        params.padLo[s] != 0 || params.padHi[s] != 0)
      return false;
  static const bool enabled = [] {
    const char *env = std::getenv("DISC_POINTWISE_MATMUL");
    return !env || std::string(env) != "0";
  }();
  if (!enabled)
    return false;
  // Pixels contiguous in the input and the output (NCHW): B is a row-major
  // [C, H*W]. A channels-last input (channel stride 1) is what oneDNN's
  // NHWC convolution reads without a reorder; it stays a convolution.
  Operand src = input, dst = output;
  if (!collapseSpatial(src) || !collapseSpatial(dst) ||
      (src.sizes[2] > 1 && src.strides[2] != 1) ||
      (dst.sizes[2] > 1 && dst.strides[2] != 1))
    return false;
  const int64_t batch = src.sizes[0], channels = src.sizes[1],
                pixels = src.sizes[2], outChannels = kernel.sizes[0];
  const memory::data_type dt = toDnnl(dtype);
  // The epilogue as post-ops, a bias included: as matmul's bias argument a
  // per-row bias sends oneDNN to its reference implementation.
  Epilogue rest = epilogue;
  for (Operand &operand : rest.operands)
    if (!collapseSpatial(operand) ||
        (operand.sizes[2] != 1 && operand.sizes[2] != pixels))
      return false;
  // A: the kernel as [1, O, C] (broadcast over the batch); B: the input as
  // [N, C, H*W]; C: the output as [N, O, H*W].
  const memory::desc aDesc({1, outChannels, channels}, dt,
                           {outChannels * kernel.strides[0], kernel.strides[0],
                            kernel.strides[1]});
  const memory::desc bDesc(src.sizes, dt, src.strides);
  const memory::desc cDesc(dst.sizes, dt, dst.strides);
  Context::LibraryState &state = ectx.context.libraries();
  const int threads = currentThreadCount();
  std::string key = "pointwise:";
  key += dtypeName(dtype);
  key += ':';
  appendKey(key, {outChannels, kernel.strides[0], kernel.strides[1]});
  appendKey(key, src.sizes);
  appendKey(key, src.strides);
  appendKey(key, dst.strides);
  appendEpilogueKey(key, rest);
  key += std::to_string(threads);
  auto entry = getPrimitive(state, key, [&]() {
    std::string implementation;
    std::shared_ptr<CachedPrimitive> built;
    try {
      built = buildPrimitive<dnnl::matmul>(
          state.engine, dtype, aDesc, bDesc, cDesc, /*anyLayout=*/false,
          computeAttr(rest, dt),
          [&](const memory::desc &a, const memory::desc &b,
              const memory::desc &c, const dnnl::primitive_attr &attr) {
            dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), attr,
                                            state.engine);
            implementation = pd.impl_info_str();
            return pd;
          });
    } catch (const dnnl::error &e) {
      if (e.status != dnnl_unimplemented)
        throw;
      implementation = "unimplemented";
    }
    // Only an optimised matmul beats the convolution's reorders.
    const bool declined =
        !built || implementation.rfind("ref", 0) == 0;
    if (logLibraryCalls())
      std::fprintf(stderr,
                   "[disc] library: convolution %s: pointwise, as a matmul "
                   "[1, O, C] x [N, C, H*W]: %s%s%s\n",
                   describe().c_str(), implementation.c_str(),
                   rest.empty() ? "" : ", post-ops",
                   declined ? "; declined, run as a convolution" : "");
    if (declined) {
      built = std::make_shared<CachedPrimitive>();
      built->declined = true;
    }
    return built;
  });
  if (entry->declined)
    return false;
  execute(ectx.context.allocator(), state.engine, *entry, aDesc, kernel.data,
          bDesc, src.data, cDesc, dst.data, {},
          postOpArgs(rest, state.engine, dt));
  return true;
}

/// ", strides [..], padLo [..], padHi [..], dilations [..]" (and the input
/// dilations of a transposed convolution) for error messages and logs.
std::string convParamsString(const ConvParams &params, int64_t numSpatial,
                             bool withInputDilations) {
  std::string s;
  auto list = [&](const char *name, const int64_t *values) {
    s += std::string(", ") + name + " " +
         shapeString(std::vector<int64_t>(values, values + numSpatial));
  };
  list("strides", params.strides);
  list("padLo", params.padLo);
  list("padHi", params.padHi);
  list("dilations", params.dilations);
  if (withInputDilations)
    list("input dilations", params.lhsDilations);
  return s;
}

void convolution(ExecutionContext &ectx, DType dtype,
                 const UnrankedMemRef *inputRef,
                 const UnrankedMemRef *kernelRef,
                 const UnrankedMemRef *outputRef, const ConvParams &params,
                 const EpilogueArgs *epilogueArgs) {
  const memory::data_type dt = toDnnl(dtype);
  const size_t elemSize = dtypeSize(dtype);
  const int64_t rank = convolutionRank(inputRef);
  const int64_t numSpatial = rank - 2;
  Operand input = readOperand("input", inputRef, rank, elemSize);
  Operand kernel = readOperand("kernel", kernelRef, rank, elemSize);
  Operand output = readOperand("output", outputRef, rank, elemSize);
  // Input dilation (lhs_dilation): a transposed convolution, run as
  // oneDNN's deconvolution of the undilated input with the kernel flipped.
  bool transposed = false;
  for (int64_t s = 0; s < numSpatial; ++s)
    transposed |= params.lhsDilations[s] != 1;
  auto describe = [&]() {
    std::string s = "input is " + shapeString(input.sizes) + ", kernel is " +
                    shapeString(kernel.sizes) + ", output is " +
                    shapeString(output.sizes) + ", groups " +
                    std::to_string(params.groups);
    return s + convParamsString(params, numSpatial, transposed);
  };

  const int64_t groups = params.groups;
  const int64_t batch = input.sizes[0], channels = input.sizes[1];
  const int64_t outChannels = kernel.sizes[0];
  checkConvChannels(groups, input, kernel, output, "kernel", "output",
                    describe);
  bool emptyReduction = channels == 0;
  for (int64_t s = 0; s < numSpatial; ++s) {
    if (params.strides[s] < 1 || params.dilations[s] < 1 ||
        params.lhsDilations[s] < 1)
      throw OpError("strides and dilations must be >= 1: " + describe());
    if (params.padLo[s] < 0 || params.padHi[s] < 0)
      throw OpError("padding must be >= 0: " + describe());
    const int64_t in = input.sizes[2 + s], window = kernel.sizes[2 + s];
    const int64_t span =
        window == 0 ? 0 : (window - 1) * params.dilations[s] + 1;
    if (transposed && window > 0 &&
        (params.strides[s] != 1 || params.padLo[s] > span - 1 ||
         params.padHi[s] > span - 1))
      throw OpError("a convolution with input dilation needs strides 1 and "
                    "padding at most dilation * (kernel size - 1): " +
                    describe());
    const int64_t expected = convOutputSize(
        in, window, params.padLo[s], params.padHi[s], params.strides[s],
        params.dilations[s], params.lhsDilations[s]);
    if (output.sizes[2 + s] != expected)
      throw OpError("output spatial dim " + std::to_string(s) + " is " +
                    std::to_string(output.sizes[2 + s]) + ", expected " +
                    std::to_string(expected) + ": " + describe());
    if (in == 0 || window == 0)
      emptyReduction = true; // every window reads only padding (or nothing)
  }
  const Epilogue epilogue =
      readEpilogue(epilogueArgs, output.sizes, elemSize);
  if (!epilogue.empty() && dtype != DType::F32)
    throw OpError("an epilogue needs f32 operands");
  if (numElements(output.sizes) == 0)
    return;
  if (emptyReduction) {
    fillZero(output, elemSize);
    applyEpilogueDirectly(output, epilogue);
    return;
  }

  prepareInput(input, elemSize);
  prepareInput(kernel, elemSize);
  if (transposed) {
    // The deconvolution's weights are the kernel flipped along every
    // spatial dim: a contiguous copy read backwards.
    const char *last = static_cast<const char *>(kernel.data);
    std::vector<int64_t> backwards = kernel.strides;
    for (int64_t s = 0; s < numSpatial; ++s) {
      last += (kernel.sizes[2 + s] - 1) * kernel.strides[2 + s] *
              static_cast<int64_t>(elemSize);
      backwards[2 + s] = -kernel.strides[2 + s];
    }
    std::vector<int64_t> contiguous = contiguousStrides(kernel.sizes);
    std::vector<char> flipped(numElements(kernel.sizes) * elemSize);
    stridedCopy(flipped.data(), contiguous.data(), last, backwards.data(),
                kernel.sizes.data(), rank, elemSize);
    kernel.copy = std::move(flipped);
    kernel.data = kernel.copy.data();
    kernel.strides = contiguous;
  }
  Dims outStrides;
  void *outData = nullptr;
  const bool copyOut = prepareOutput(output, outStrides, outData, elemSize);
  if (!transposed && runPointwiseAsMatmul(ectx, dtype, input, kernel, output,
                                          params, epilogue, describe)) {
    if (copyOut)
      stridedCopy(outData, outStrides.data(), output.data,
                  output.strides.data(), output.sizes.data(), rank, elemSize);
    return;
  }

  // Weights: [O, C/G, K...], or [G, O/G, C/G, K...] with groups (dim 0 split
  // into G blocks of O/G, keeping the kernel's strides).
  std::vector<int64_t> weightDims = kernel.sizes,
                       weightStrides = kernel.strides;
  if (groups > 1) {
    weightDims[0] = outChannels / groups;
    weightDims.insert(weightDims.begin(), groups);
    weightStrides.insert(weightStrides.begin(),
                         kernel.strides[0] * (outChannels / groups));
    if (!canonicalizeStrides(weightDims, weightStrides)) {
      // Cannot happen for strides prepareInput accepted; be safe anyway.
      throw OpError("unsupported kernel strides: " + describe());
    }
  }
  memory::dims strides(numSpatial), dilations(numSpatial), padLo(numSpatial),
      padHi(numSpatial);
  for (int64_t s = 0; s < numSpatial; ++s) {
    strides[s] = params.strides[s];
    dilations[s] = params.dilations[s] - 1; // oneDNN: 0 means no dilation
    padLo[s] = params.padLo[s];
    padHi[s] = params.padHi[s];
    if (transposed) {
      // Convolving the dilated input padded by lo/hi with the kernel is
      // deconvolving the input (stride = its dilation) with the flipped
      // kernel, padded by dilation * (k - 1) - lo/hi.
      const int64_t reach = (kernel.sizes[2 + s] - 1) * params.dilations[s];
      strides[s] = params.lhsDilations[s];
      padLo[s] = reach - params.padLo[s];
      padHi[s] = reach - params.padHi[s];
    }
  }

  Context::LibraryState &state = ectx.context.libraries();
  // oneDNN primitives depend on the thread count (ThreadsForCall).
  const int threads = currentThreadCount();
  const memory::desc srcDesc(input.sizes, dt, input.strides);
  const memory::desc weightsDesc(weightDims, dt, weightStrides);
  const memory::desc dstDesc(output.sizes, dt, output.strides);
  std::string key = transposed ? "deconv:" : "conv:";
  key += dtypeName(dtype);
  key += ':';
  appendKey(key, input.sizes);
  appendKey(key, input.strides);
  appendKey(key, weightDims);
  appendKey(key, weightStrides);
  appendKey(key, output.sizes);
  appendKey(key, output.strides);
  appendKey(key, strides);
  appendKey(key, dilations);
  appendKey(key, padLo);
  appendKey(key, padHi);
  appendEpilogueKey(key, epilogue);
  key += std::to_string(threads);
  const ConvBias bias = splitConvBias(epilogue, outChannels, dt);
  std::string implementation;
  // The convolution's (or the transposed one's deconvolution's) primitive
  // descriptor; both take the same arguments.
  auto makePdOf = [&](auto primitive, dnnl::algorithm algorithm) {
    using Primitive = decltype(primitive);
    return [&, algorithm](const memory::desc &s, const memory::desc &w,
                          const memory::desc &d,
                          const dnnl::primitive_attr &attr) {
      auto desc =
          bias.present
              ? typename Primitive::desc(dnnl::prop_kind::forward_inference,
                                         algorithm, s, w, bias.desc, d,
                                         strides, dilations, padLo, padHi)
              : typename Primitive::desc(dnnl::prop_kind::forward_inference,
                                         algorithm, s, w, d, strides,
                                         dilations, padLo, padHi);
      typename Primitive::primitive_desc pd(desc, attr, state.engine);
      implementation = pd.impl_info_str();
      return pd;
    };
  };
  auto entry = getPrimitive(state, key, [&]() {
    // format_tag::any lets oneDNN pick its fastest (blocked) layouts; the
    // reorders from/to the caller's plain layouts are part of the entry.
    auto buildIn = [&](const Epilogue &postOps, memory::format_tag layout) {
      if (transposed)
        return buildPrimitive<dnnl::deconvolution_forward>(
            state.engine, dtype, srcDesc, weightsDesc, dstDesc,
            /*anyLayout=*/true, computeAttr(postOps, dt),
            makePdOf(dnnl::deconvolution_forward(),
                     dnnl::algorithm::deconvolution_direct),
            layout);
      return buildPrimitive<dnnl::convolution_forward>(
          state.engine, dtype, srcDesc, weightsDesc, dstDesc,
          /*anyLayout=*/true, computeAttr(postOps, dt),
          makePdOf(dnnl::convolution_forward(),
                   dnnl::algorithm::convolution_direct),
          layout);
    };
    // Activations in the blocked layout where oneDNN has an optimised
    // implementation for it (none for a first layer of 3 channels, say:
    // its reference code took 1.6 s), else in the layout oneDNN picks.
    auto build = [&](const Epilogue &postOps) {
      const memory::format_tag layout = activationLayout(rank);
      if (layout != memory::format_tag::any) {
        std::shared_ptr<CachedPrimitive> blocked;
        try {
          blocked = buildIn(postOps, layout);
        } catch (const dnnl::error &e) {
          if (e.status != dnnl_unimplemented)
            throw;
        }
        if (blocked && implementation.rfind("ref", 0) != 0)
          return blocked;
      }
      return buildIn(postOps, memory::format_tag::any);
    };
    std::shared_ptr<CachedPrimitive> built = build(bias.rest);
    const bool separate = hasBinaryStep(bias.rest) &&
                          implementation.find("gemm") != std::string::npos;
    if (separate) {
      built = build(Epilogue());
      built->hasSeparateEpilogue = true;
      built->separateEpilogue =
          separateEpilogueStep(state.engine, built->dst, bias.rest, dt);
    }
    if (logLibraryCalls())
      std::fprintf(stderr,
                   "[disc] library: %s %s: %s%s%s%s\n",
                   transposed ? "deconvolution" : "convolution",
                   describe().c_str(), implementation.c_str(),
                   bias.present ? ", bias argument" : "",
                   bias.rest.empty() ? ""
                   : separate       ? ", post-ops as a separate binary "
                                      "primitive (gemm applies binary "
                                      "post-ops in reference code)"
                                    : ", post-ops",
                   built->computesInF32 ? ", computed in f32" : "");
    return built;
  });
  std::unordered_map<int, memory> computeArgs;
  if (bias.present)
    computeArgs.emplace(DNNL_ARG_BIAS,
                        memory(bias.desc, state.engine, bias.data));
  execute(ectx.context.allocator(), state.engine, *entry, srcDesc, input.data,
          weightsDesc, kernel.data, dstDesc, output.data,
          std::move(computeArgs), postOpArgs(bias.rest, state.engine, dt));
  if (copyOut)
    stridedCopy(outData, outStrides.data(), output.data, output.strides.data(),
                output.sizes.data(), rank, elemSize);
}

/// A convolution's kernel gradient through oneDNN's backward-weights
/// primitive: diff_weights from src (the forward input) and diff_dst (the
/// output gradient). The primitive descriptor needs the forward one as a
/// hint. Its cache entry uses CachedPrimitive's fields with these roles:
/// `src` the input (reordered in), `dst` the output gradient (reordered
/// in), `weights` the kernel gradient (computed, reordered out).
void convolutionBackwardWeights(ExecutionContext &ectx, DType dtype,
                                const UnrankedMemRef *inputRef,
                                const UnrankedMemRef *gradientRef,
                                const UnrankedMemRef *kernelRef,
                                const ConvParams &params) {
  const memory::data_type dt = toDnnl(dtype);
  const size_t elemSize = dtypeSize(dtype);
  const int64_t rank = convolutionRank(inputRef);
  const int64_t numSpatial = rank - 2;
  Operand input = readOperand("input", inputRef, rank, elemSize);
  Operand gradient =
      readOperand("output gradient", gradientRef, rank, elemSize);
  Operand kernel = readOperand("kernel gradient", kernelRef, rank, elemSize);
  auto describe = [&]() {
    std::string s = "input is " + shapeString(input.sizes) +
                    ", output gradient is " + shapeString(gradient.sizes) +
                    ", kernel gradient is " + shapeString(kernel.sizes) +
                    ", groups " + std::to_string(params.groups);
    return s + convParamsString(params, numSpatial, false);
  };
  const int64_t groups = params.groups;
  const int64_t batch = input.sizes[0], channels = input.sizes[1];
  const int64_t outChannels = kernel.sizes[0];
  checkConvChannels(groups, input, kernel, gradient, "kernel gradient",
                    "the output gradient", describe);
  bool emptyReduction = batch == 0;
  for (int64_t s = 0; s < numSpatial; ++s) {
    if (params.strides[s] < 1 || params.dilations[s] < 1)
      throw OpError("strides and dilations must be >= 1: " + describe());
    if (params.lhsDilations[s] != 1)
      throw OpError("input dilation is not supported: " + describe());
    if (params.padLo[s] < 0 || params.padHi[s] < 0)
      throw OpError("padding must be >= 0: " + describe());
    const int64_t in = input.sizes[2 + s];
    const int64_t expected =
        convOutputSize(in, kernel.sizes[2 + s], params.padLo[s],
                       params.padHi[s], params.strides[s], params.dilations[s],
                       /*lhsDilation=*/1);
    if (gradient.sizes[2 + s] != expected)
      throw OpError("output gradient spatial dim " + std::to_string(s) +
                    " is " + std::to_string(gradient.sizes[2 + s]) +
                    ", expected " + std::to_string(expected) + ": " +
                    describe());
    if (expected == 0 || in == 0)
      emptyReduction = true;
  }
  if (numElements(kernel.sizes) == 0)
    return;
  if (emptyReduction || channels == 0) {
    fillZero(kernel, elemSize);
    return;
  }
  prepareInput(input, elemSize);
  prepareInput(gradient, elemSize);
  Dims outStrides;
  void *outData = nullptr;
  const bool copyOut = prepareOutput(kernel, outStrides, outData, elemSize);

  // Kernel: [O, C/G, K...], or [G, O/G, C/G, K...] with groups.
  std::vector<int64_t> weightDims = kernel.sizes,
                       weightStrides = kernel.strides;
  if (groups > 1) {
    weightDims[0] = outChannels / groups;
    weightDims.insert(weightDims.begin(), groups);
    weightStrides.insert(weightStrides.begin(),
                         kernel.strides[0] * (outChannels / groups));
    if (!canonicalizeStrides(weightDims, weightStrides))
      throw OpError("unsupported kernel gradient strides: " + describe());
  }
  memory::dims strides(numSpatial), dilations(numSpatial), padLo(numSpatial),
      padHi(numSpatial);
  for (int64_t s = 0; s < numSpatial; ++s) {
    strides[s] = params.strides[s];
    dilations[s] = params.dilations[s] - 1; // oneDNN: 0 means no dilation
    padLo[s] = params.padLo[s];
    padHi[s] = params.padHi[s];
  }
  // A 1-d convolution is described to oneDNN as a 2-d one of height 1: its
  // 1-d depthwise backward-weights is gemm-based (x64:gemm:jit, 1.7-2.4x
  // slower than DISC's windowed decomposition, on convtasnet's shapes),
  // where the 2-d one has a direct kernel (jit_dw). (The front end keeps
  // 1-d depthwise gradients decomposed all the same: at the zoo's small
  // sizes the windows were faster still.)
  std::vector<int64_t> srcDims = input.sizes, srcStrides = input.strides,
                       diffDstDims = gradient.sizes,
                       diffDstStrides = gradient.strides;
  int64_t dnnlRank = rank;
  if (numSpatial == 1) {
    dnnlRank = 4;
    auto addUnitDim = [](std::vector<int64_t> &dims,
                         std::vector<int64_t> &dimStrides, size_t at) {
      dims.insert(dims.begin() + at, 1);
      dimStrides.insert(dimStrides.begin() + at, 1);
      return canonicalizeStrides(dims, dimStrides);
    };
    if (!addUnitDim(srcDims, srcStrides, 2) ||
        !addUnitDim(diffDstDims, diffDstStrides, 2) ||
        !addUnitDim(weightDims, weightStrides, weightDims.size() - 1))
      throw OpError("unsupported strides: " + describe());
    strides.insert(strides.begin(), 1);
    dilations.insert(dilations.begin(), 0);
    padLo.insert(padLo.begin(), 0);
    padHi.insert(padHi.begin(), 0);
  }
  Context::LibraryState &state = ectx.context.libraries();
  const int threads = currentThreadCount();
  const memory::desc srcDesc(srcDims, dt, srcStrides);
  const memory::desc diffDstDesc(diffDstDims, dt, diffDstStrides);
  const memory::desc diffWeightsDesc(weightDims, dt, weightStrides);
  std::string key = "conv_bwd_weights:";
  key += dtypeName(dtype);
  key += ':';
  appendKey(key, srcDims);
  appendKey(key, srcStrides);
  appendKey(key, diffDstStrides);
  appendKey(key, weightDims);
  appendKey(key, weightStrides);
  appendKey(key, strides);
  appendKey(key, dilations);
  appendKey(key, padLo);
  appendKey(key, padHi);
  key += std::to_string(threads);
  auto entry = getPrimitive(state, key, [&]() {
    std::string implementation;
    // The primitive with activations in `layout`, computing in `type`.
    auto buildIn = [&](memory::format_tag layout, memory::data_type type) {
      const memory::desc src(srcDims, type, layout),
          diffDst(diffDstDims, type, layout),
          diffWeights(weightDims, type, memory::format_tag::any);
      dnnl::convolution_forward::primitive_desc hint(
          dnnl::convolution_forward::desc(
              dnnl::prop_kind::forward_training,
              dnnl::algorithm::convolution_direct, src, diffWeights, diffDst,
              strides, dilations, padLo, padHi),
          state.engine);
      dnnl::convolution_backward_weights::primitive_desc pd(
          dnnl::convolution_backward_weights::desc(
              dnnl::algorithm::convolution_direct, src, diffWeights, diffDst,
              strides, dilations, padLo, padHi),
          userScratchpadAttr(), state.engine, hint);
      implementation = pd.impl_info_str();
      return pd;
    };
    // Blocked activations where oneDNN has an optimised implementation for
    // them, else its own choice; a data type it has no implementation of
    // is computed in f32 (the reorders convert).
    auto build = [&](memory::data_type type) {
      const memory::format_tag layout = activationLayout(dnnlRank);
      if (layout != memory::format_tag::any) {
        try {
          auto pd = buildIn(layout, type);
          if (implementation.rfind("ref", 0) != 0)
            return pd;
        } catch (const dnnl::error &e) {
          if (e.status != dnnl_unimplemented)
            throw;
        }
      }
      return buildIn(memory::format_tag::any, type);
    };
    auto built = std::make_shared<CachedPrimitive>();
    dnnl::convolution_backward_weights::primitive_desc pd;
    try {
      pd = build(dt);
    } catch (const dnnl::error &e) {
      if (e.status != dnnl_unimplemented || dtype == DType::F32)
        throw;
      built->computesInF32 = true;
      pd = build(memory::data_type::f32);
    }
    built->compute = {dnnl::convolution_backward_weights(pd),
                      pd.scratchpad_desc()};
    built->src = pd.src_desc();
    built->dst = pd.diff_dst_desc();
    built->weights = pd.diff_weights_desc();
    addReorders(state.engine, *built, srcDesc, diffWeightsDesc, diffDstDesc,
                /*backwardWeights=*/true);
    if (logLibraryCalls())
      std::fprintf(stderr,
                   "[disc] library: convolution backward weights %s: %s%s\n",
                   describe().c_str(), implementation.c_str(),
                   built->computesInF32 ? ", computed in f32" : "");
    return built;
  });

  Allocator &allocator = ectx.context.allocator();
  const dnnl::engine &engine = state.engine;
  dnnl::stream stream(engine);
  const memory src(srcDesc, engine, input.data);
  const memory diffDst(diffDstDesc, engine, gradient.data);
  const memory diffWeights(diffWeightsDesc, engine, kernel.data);
  const TempMemory srcTemp(allocator, engine,
                           entry->hasSrcReorder ? entry->src : memory::desc());
  const TempMemory diffDstTemp(
      allocator, engine, entry->hasDstReorder ? entry->dst : memory::desc());
  const TempMemory diffWeightsTemp(allocator, engine,
                                   entry->hasWeightsReorder ? entry->weights
                                                            : memory::desc());
  const memory &computeSrc = entry->hasSrcReorder ? srcTemp.get() : src;
  const memory &computeDiffDst =
      entry->hasDstReorder ? diffDstTemp.get() : diffDst;
  const memory &computeDiffWeights =
      entry->hasWeightsReorder ? diffWeightsTemp.get() : diffWeights;
  if (entry->hasSrcReorder)
    runStep(allocator, engine, stream, entry->srcReorder,
            {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, computeSrc}});
  if (entry->hasDstReorder)
    runStep(allocator, engine, stream, entry->dstReorder,
            {{DNNL_ARG_FROM, diffDst}, {DNNL_ARG_TO, computeDiffDst}});
  runStep(allocator, engine, stream, entry->compute,
          {{DNNL_ARG_SRC, computeSrc},
           {DNNL_ARG_DIFF_DST, computeDiffDst},
           {DNNL_ARG_DIFF_WEIGHTS, computeDiffWeights}});
  if (entry->hasWeightsReorder)
    runStep(allocator, engine, stream, entry->weightsReorder,
            {{DNNL_ARG_FROM, computeDiffWeights}, {DNNL_ARG_TO, diffWeights}});
  if (copyOut)
    stridedCopy(outData, outStrides.data(), kernel.data, kernel.strides.data(),
                kernel.sizes.data(), rank, elemSize);
}

} // namespace

bool runMatmul(ExecutionContext &ectx, DType dtype, const char *opName,
               const UnrankedMemRef *a, const UnrankedMemRef *b,
               const UnrankedMemRef *c, int64_t transA, int64_t transB,
               const EpilogueArgs *epilogue) noexcept {
  return guarded(ectx, opName, [&]() {
    matmul(ectx, dtype, a, b, c, transA != 0, transB != 0, epilogue);
  });
}

bool runConv(ExecutionContext &ectx, DType dtype, const char *opName,
             const UnrankedMemRef *input, const UnrankedMemRef *kernel,
             const UnrankedMemRef *output, const ConvParams &params,
             const EpilogueArgs *epilogue) noexcept {
  return guarded(ectx, opName, [&]() {
    convolution(ectx, dtype, input, kernel, output, params, epilogue);
  });
}

bool runConvBackwardWeights(ExecutionContext &ectx, DType dtype,
                            const char *opName, const UnrankedMemRef *input,
                            const UnrankedMemRef *outputGradient,
                            const UnrankedMemRef *kernelGradient,
                            const ConvParams &params) noexcept {
  return guarded(ectx, opName, [&]() {
    convolutionBackwardWeights(ectx, dtype, input, outputGradient,
                               kernelGradient, params);
  });
}

} // namespace ral
} // namespace disc
