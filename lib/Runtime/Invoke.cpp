//===- Invoke.cpp - signature checks and the call boundary ----------------===//
//
// invoke() packs the inputs in the packed calling convention documented in
// Runtime.h, runs the compiled function under setjmp (errors reported with
// disc_ral_fail come back as a longjmp), and turns the result descriptors
// into OutputTensors: buffers the call allocated are handed out without a
// copy, anything else (views of inputs or constants, non-contiguous views,
// a result overlapping an earlier one it may not share with) is copied into
// a fresh contiguous buffer.
//
//===----------------------------------------------------------------------===//

#include "Cuda/CudaRal.h"
#include "ExecutionContext.h"
#include "LibraryState.h"
#include "StridedCopy.h"

#include "disc/Runtime/Runtime.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>

namespace disc {
namespace ral {

namespace {

std::string argLabel(const Signature &signature, size_t index) {
  std::string label = "argument " + std::to_string(index);
  const std::string &name = signature.args[index].name;
  if (!name.empty())
    label += " (" + name + ")";
  return label;
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// Runs `fn`; returns false when it failed through disc_ral_fail. Kept
/// separate (and not inlined) so that no C++ object lives in the frame that
/// holds the setjmp.
__attribute__((noinline)) bool runProtected(ExecutionContext *ectx,
                                            PackedFunction fn, void **args) {
  if (setjmp(ectx->jmp) == 0) {
    fn(args);
    return true;
  }
  return false;
}

void *addBytes(void *base, int64_t bytes) {
  return reinterpret_cast<void *>(reinterpret_cast<uintptr_t>(base) +
                                  static_cast<uintptr_t>(bytes));
}

/// The compiled code writes the arguments its results are tied to
/// (ResultSpec::intoArg) while it still reads the other arguments: none of
/// those may share memory with one it writes (the caller passing one
/// tensor twice, or two views of one buffer). Checked before the call, so
/// a rejected call has written nothing.
void checkArgumentsWrittenInPlace(const Signature &signature,
                                  const std::vector<TensorView> &inputs) {
  std::vector<bool> written(inputs.size(), false);
  bool any = false;
  for (const ResultSpec &result : signature.results)
    if (result.intoArg >= 0 &&
        static_cast<size_t>(result.intoArg) < inputs.size())
      any = written[result.intoArg] = true;
  if (!any)
    return;
  struct Range {
    uintptr_t begin, end;
    size_t arg;
  };
  std::vector<Range> ranges;
  ranges.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const size_t bytes = static_cast<size_t>(numElements(inputs[i].shape)) *
                         dtypeSize(inputs[i].dtype);
    const uintptr_t begin = reinterpret_cast<uintptr_t>(inputs[i].data);
    if (bytes)
      ranges.push_back({begin, begin + bytes, i});
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const Range &a, const Range &b) { return a.begin < b.begin; });
  // Sweep in address order: the furthest end so far, over every range and
  // over the written ones.
  const Range *furthest = nullptr, *furthestWritten = nullptr;
  for (const Range &range : ranges) {
    const Range *other = nullptr;
    if (furthestWritten && range.begin < furthestWritten->end)
      other = furthestWritten;
    else if (written[range.arg] && furthest && range.begin < furthest->end)
      other = furthest;
    if (other) {
      const size_t w = written[other->arg] ? other->arg : range.arg;
      const size_t o = w == other->arg ? range.arg : other->arg;
      throw InvocationError(argLabel(signature, w) +
                            " is written in place by the compiled code and "
                            "shares memory with " +
                            argLabel(signature, o));
    }
    if (!furthest || range.end > furthest->end)
      furthest = &range;
    if (written[range.arg] &&
        (!furthestWritten || range.end > furthestWritten->end))
      furthestWritten = &range;
  }
}

/// Checks InvokeOptions::resultsInto before the call: indices in range,
/// dtypes and ranks that agree, and destinations that do not overlap (the
/// order of the writes would decide the result).
void checkResultsInto(const Signature &signature,
                      const std::vector<TensorView> &inputs,
                      const std::vector<int64_t> &resultsInto) {
  if (resultsInto.size() > signature.results.size())
    throw InvocationError("results-into names " +
                          std::to_string(resultsInto.size()) +
                          " results, the program has " +
                          std::to_string(signature.results.size()));
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges; // [begin, end)
  for (size_t r = 0; r < resultsInto.size(); ++r) {
    const int64_t k = resultsInto[r];
    if (k < 0)
      continue;
    if (k >= static_cast<int64_t>(inputs.size()))
      throw InvocationError("result " + std::to_string(r) +
                            " is to be written into argument " +
                            std::to_string(k) + ", but the call has " +
                            std::to_string(inputs.size()) + " arguments");
    const ResultSpec &result = signature.results[r];
    if (result.dtype != inputs[k].dtype ||
        result.rank != static_cast<int64_t>(inputs[k].shape.size()))
      throw InvocationError(
          "result " + std::to_string(r) + " (" + dtypeName(result.dtype) +
          ", rank " + std::to_string(result.rank) + ") cannot be written into " +
          argLabel(signature, static_cast<size_t>(k)) + " (" +
          dtypeName(inputs[k].dtype) + ", rank " +
          std::to_string(inputs[k].shape.size()) + ")");
    const uintptr_t begin = reinterpret_cast<uintptr_t>(inputs[k].data);
    const size_t bytes = static_cast<size_t>(numElements(inputs[k].shape)) *
                         dtypeSize(inputs[k].dtype);
    if (bytes)
      ranges.push_back({begin, begin + bytes});
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second)
      throw InvocationError("two results are to be written into arguments "
                            "whose memory overlaps");
  checkArgumentsWrittenInPlace(signature, inputs);
}

/// Copies `bytes` on the host, across the call's threads when it is large.
void copyHost(void *dst, const void *src, size_t bytes) {
  constexpr size_t kChunk = size_t(1) << 20;
#ifdef DISC_RAL_HAS_OPENMP
  if (bytes >= 4 * kChunk) {
    const int64_t chunks = static_cast<int64_t>((bytes + kChunk - 1) / kChunk);
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < chunks; ++c) {
      const size_t begin = static_cast<size_t>(c) * kChunk;
      std::memcpy(static_cast<char *>(dst) + begin,
                  static_cast<const char *>(src) + begin,
                  std::min(kChunk, bytes - begin));
    }
    return;
  }
#endif
  std::memcpy(dst, src, bytes);
}

} // namespace

void checkInputs(const Signature &signature,
                 const std::vector<TensorView> &inputs) {
  if (inputs.size() != signature.args.size())
    throw InvocationError("expected " + std::to_string(signature.args.size()) +
                          " inputs, got " + std::to_string(inputs.size()));
  // Per dim class: the first input dim seen in it, as (arg, dim).
  std::vector<std::pair<size_t, size_t>> classWitness(signature.classes.size(),
                                                      {SIZE_MAX, 0});
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ArgSpec &spec = signature.args[i];
    const TensorView &input = inputs[i];
    if (input.dtype != spec.dtype)
      throw InvocationError(argLabel(signature, i) + " has dtype " +
                            dtypeName(input.dtype) + ", expected " +
                            dtypeName(spec.dtype));
    if (input.shape.size() != spec.dims.size())
      throw InvocationError(argLabel(signature, i) + " has rank " +
                            std::to_string(input.shape.size()) + ", expected " +
                            std::to_string(spec.dims.size()) + " (shape " +
                            shapeString(input.shape) + ")");
    if (!spec.dimClass.empty() && spec.dimClass.size() != spec.dims.size())
      throw RuntimeError("invalid signature: " + argLabel(signature, i) +
                         " has " + std::to_string(spec.dimClass.size()) +
                         " dim classes for rank " +
                         std::to_string(spec.dims.size()));
    for (size_t d = 0; d < input.shape.size(); ++d) {
      const int64_t size = input.shape[d];
      if (size < 0)
        throw InvocationError(argLabel(signature, i) + " dim " +
                              std::to_string(d) + " is negative (" +
                              std::to_string(size) + ")");
      if (spec.dims[d] >= 0 && size != spec.dims[d])
        throw InvocationError(argLabel(signature, i) + " dim " +
                              std::to_string(d) + " is " +
                              std::to_string(size) + ", expected " +
                              std::to_string(spec.dims[d]));
      if (d < spec.minSize.size() && size < spec.minSize[d])
        throw InvocationError(argLabel(signature, i) + " dim " +
                              std::to_string(d) + " is " +
                              std::to_string(size) + ", below its minimum " +
                              std::to_string(spec.minSize[d]));
      if (d < spec.maxSize.size() && spec.maxSize[d] >= 0 &&
          size > spec.maxSize[d])
        throw InvocationError(argLabel(signature, i) + " dim " +
                              std::to_string(d) + " is " +
                              std::to_string(size) + ", above its maximum " +
                              std::to_string(spec.maxSize[d]));
      if (spec.dimClass.empty() || spec.dimClass[d] < 0)
        continue;
      const size_t cls = static_cast<size_t>(spec.dimClass[d]);
      if (cls >= signature.classes.size())
        throw RuntimeError("invalid signature: " + argLabel(signature, i) +
                           " dim " + std::to_string(d) + " names dim class " +
                           std::to_string(cls) + " of " +
                           std::to_string(signature.classes.size()));
      const DimClass &dimClass = signature.classes[cls];
      // Built only for an error: every call checks every classed dim.
      auto because = [&dimClass] {
        return dimClass.reason.empty()
                   ? std::string()
                   : " (required by " + dimClass.reason + ")";
      };
      if (dimClass.staticSize >= 0 && size != dimClass.staticSize)
        throw InvocationError(argLabel(signature, i) + " dim " +
                              std::to_string(d) + " is " +
                              std::to_string(size) + ", expected " +
                              std::to_string(dimClass.staticSize) + because());
      auto &witness = classWitness[cls];
      if (witness.first == SIZE_MAX) {
        witness = {i, d};
        continue;
      }
      const int64_t expected = inputs[witness.first].shape[witness.second];
      if (size != expected)
        throw InvocationError(argLabel(signature, i) + " dim " +
                              std::to_string(d) + " is " +
                              std::to_string(size) + ", but must equal " +
                              argLabel(signature, witness.first) + " dim " +
                              std::to_string(witness.second) + " which is " +
                              std::to_string(expected) + because());
    }
    if (numElements(input.shape) != 0 && input.data == nullptr)
      throw InvocationError(argLabel(signature, i) + " has no data");
  }
}

std::vector<OutputTensor> invoke(Context &context, PackedFunction fn,
                                 const Signature &signature,
                                 const std::vector<TensorView> &inputs,
                                 const InvokeOptions &options) {
  checkInputs(signature, inputs);
  checkResultsInto(signature, inputs, options.resultsInto);
  if (!fn)
    throw RuntimeError("invoke: null function");
  const bool onCuda = options.device == Device::Cuda;
  if (onCuda) {
    std::string why;
    if (!cudaDriverAvailable(&why))
      throw RuntimeError(why);
    if (!options.cudaModules)
      throw RuntimeError("invoke: a cuda call needs the executable's module "
                         "cache");
  }
  // Results on cuda keep their allocator alive until they are freed.
  const std::shared_ptr<DeviceAllocator> deviceAllocator =
      !onCuda                   ? nullptr
      : options.deviceAllocator ? options.deviceAllocator
                                : streamOrderedDevicePool();
  // Output deleters keep the Context (and so its allocator) alive.
  std::shared_ptr<Context> keepAlive = context.libraries().self.lock();
  if (!keepAlive)
    throw RuntimeError("invoke: the Context is not owned by a shared_ptr "
                       "(create it with Context::create)");

  // Packed arguments: args[0] points to the context pointer, then one
  // pointer per word of each input descriptor, then (when there are results)
  // a pointer to the result storage.
  size_t numInputWords = 0;
  for (const TensorView &input : inputs)
    numInputWords += 3 + 2 * input.shape.size();
  size_t numResultWords = 0;
  for (const ResultSpec &result : signature.results) {
    if (result.rank < 0)
      throw RuntimeError("invalid signature: negative result rank");
    numResultWords += 3 + 2 * static_cast<size_t>(result.rank);
  }
  std::vector<int64_t> inputWords(numInputWords);
  std::vector<int64_t> resultWords(numResultWords, 0);
  auto ectx = std::make_unique<ExecutionContext>(context);
  ectx->device = options.device;
  ectx->cudaStream = options.cudaStream;
  ectx->cudaModules = options.cudaModules;
  ectx->float32Math = options.float32Math;
  ectx->deviceAllocator = deviceAllocator.get();
  if (onCuda)
    ectx->reuseDeviceBlocks = reuseDeviceBlocksSetting();
  void *ctxArg = ectx.get();
  std::vector<void *> args;
  args.reserve(1 + numInputWords + 1);
  args.push_back(&ctxArg);
  size_t pos = 0;
  for (const TensorView &input : inputs) {
    const int64_t rank = static_cast<int64_t>(input.shape.size());
    const int64_t data =
        static_cast<int64_t>(reinterpret_cast<uintptr_t>(input.data));
    const size_t base = pos;
    inputWords[pos++] = data; // allocated
    inputWords[pos++] = data; // aligned
    inputWords[pos++] = 0;    // offset
    for (int64_t size : input.shape)
      inputWords[pos++] = size;
    // Written in place: no vector per input per call.
    writeContiguousStrides(input.shape.data(), rank, &inputWords[pos]);
    pos += rank;
    for (size_t w = base; w < pos; ++w)
      args.push_back(&inputWords[w]);
  }
  if (!signature.results.empty())
    args.push_back(resultWords.data());

  const ThreadsForCall threads(context.options().numThreads);
  if (!runProtected(ectx.get(), fn, args.data())) {
    std::string message = std::move(ectx->errorMessage);
    if (message.empty())
      message = "the compiled function failed";
    ectx.reset(); // releases the call's buffers
    // A rejected call leaves its inputs as they were, so the caller may run
    // it another way (DISC's front end: in eager). Not when the code writes
    // results into arguments: it may have written some before it failed.
    for (size_t r = 0; r < signature.results.size(); ++r) {
      const int64_t k = signature.results[r].intoArg;
      if (k >= 0 && static_cast<size_t>(k) < inputs.size())
        throw RuntimeError(message + " (the call writes result " +
                           std::to_string(r) + " into " +
                           argLabel(signature, static_cast<size_t>(k)) +
                           " in place and may have done so before it "
                           "failed: its inputs cannot be trusted)");
    }
    throw InvocationError(message);
  }

  // Build the outputs. `owners` holds one owner per allocation of the call
  // that became (part of) an output; unclaimed allocations are released when
  // `ectx` goes away, after every copy out of them is done.
  Allocator &allocator = context.allocator();
  void *stream = options.cudaStream;
  auto makeOwner = [&keepAlive, &deviceAllocator, onCuda, stream](void *ptr) {
    if (onCuda) // device memory, freed after the work queued on the stream
      return std::shared_ptr<void>(
          ptr, [stream, allocator = deviceAllocator](void *p) {
            allocator->deallocate(p, stream);
          });
    return std::shared_ptr<void>(ptr, [context = keepAlive](void *p) {
      try {
        context->allocator().deallocate(p);
      } catch (...) {
      }
    });
  };
  std::map<void *, std::shared_ptr<void>> owners;
  struct ReturnedRange {
    void *allocated;
    const char *begin, *end;
    int64_t group;
  };
  std::vector<ReturnedRange> returnedRanges;
  std::vector<OutputTensor> outputs;
  outputs.reserve(signature.results.size());
  pos = 0;
  for (size_t r = 0; r < signature.results.size(); ++r) {
    const ResultSpec &spec = signature.results[r];
    const int64_t rank = spec.rank;
    const int64_t *words = resultWords.data() + pos;
    pos += 3 + 2 * rank;
    void *allocated = reinterpret_cast<void *>(words[0]);
    void *aligned = reinterpret_cast<void *>(words[1]);
    const int64_t offset = words[2];
    const int64_t *sizes = words + 3;
    const int64_t *strides = words + 3 + rank;
    const size_t elemSize = dtypeSize(spec.dtype);

    OutputTensor output;
    output.dtype = spec.dtype;
    output.shape.assign(sizes, sizes + rank);
    // Computed in the argument the caller wants it written into: done, no
    // output (the write-back below skips it).
    if (spec.intoArg >= 0 && r < options.resultsInto.size() &&
        options.resultsInto[r] == spec.intoArg &&
        aligned == inputs[static_cast<size_t>(spec.intoArg)].data &&
        offset == 0 &&
        output.shape == inputs[static_cast<size_t>(spec.intoArg)].shape) {
      outputs.push_back(std::move(output));
      continue;
    }
    for (int64_t size : output.shape)
      if (size < 0)
        throw RuntimeError("invoke: result " + std::to_string(r) +
                           " has a negative size " + shapeString(output.shape));
    void *data = addBytes(aligned, offset * static_cast<int64_t>(elemSize));
    const bool ownedByCall =
        owners.count(allocated) || ectx->live.count(allocated);
    const bool contiguous = isRowMajorContiguous(sizes, strides, rank);
    // A returned result that overlaps an earlier one the caller does not
    // expect to share with (InvokeOptions::resultShareGroups) gets a copy.
    const bool returned = r >= options.resultsInto.size() ||
                          options.resultsInto[r] < 0;
    const int64_t group = r < options.resultShareGroups.size()
                              ? options.resultShareGroups[r]
                              : -1;
    bool sharesUnexpectedly = false;
    if (ownedByCall && contiguous && returned) {
      const char *begin = static_cast<const char *>(data);
      const char *end =
          begin + numElements(sizes, rank) * static_cast<int64_t>(elemSize);
      // Only results of one allocation can overlap: the scan runs when an
      // earlier result claimed this one's (rare), not for every result.
      if (owners.count(allocated))
        for (const ReturnedRange &earlier : returnedRanges)
          if (earlier.allocated == allocated && begin < earlier.end &&
              earlier.begin < end && (group < 0 || group != earlier.group))
            sharesUnexpectedly = true;
      if (!sharesUnexpectedly && begin != end)
        returnedRanges.push_back({allocated, begin, end, group});
    }
    if (ownedByCall && contiguous && !sharesUnexpectedly) {
      std::shared_ptr<void> &owner = owners[allocated];
      if (!owner) {
        ectx->live.erase(allocated); // the output owns it from now on
        owner = makeOwner(allocated);
      }
      output.owner = owner;
      output.data = data;
    } else if (onCuda) {
      // A view the call does not own (an input returned as it is) or one
      // that must not share: a device copy. Strided device views are not
      // produced by the cuda pipeline (every result is a fresh buffer or an
      // input).
      if (!contiguous)
        throw RuntimeError("invoke: cuda result " + std::to_string(r) +
                           " is a strided view, which is not supported");
      const int64_t count = numElements(sizes, rank);
      void *buffer = allocateDeviceForCall(ectx.get(), count * (int64_t)elemSize);
      if (!buffer)
        throw RuntimeError(ectx->errorMessage);
      ectx->live.erase(buffer);
      output.owner = makeOwner(buffer);
      output.data = buffer;
      copyDevice(stream, buffer, data, (size_t)count * elemSize);
    } else {
      // A view the call does not own, a non-contiguous one, or one that
      // must not share: copy.
      const int64_t count = numElements(sizes, rank);
      void *buffer = allocator.allocate(static_cast<size_t>(count) * elemSize);
      output.owner = makeOwner(buffer);
      output.data = buffer;
      std::vector<int64_t> dstStrides = contiguousStrides(sizes, rank);
      stridedCopy(buffer, dstStrides.data(), data, strides, sizes, rank,
                  elemSize);
    }
    outputs.push_back(std::move(output));
  }
  // Every result is in a buffer of its own now (views of inputs were
  // copied above), so writing one into an input cannot change another.
  // Every shape is checked before anything is written: a rejected call
  // leaves its inputs as they were.
  for (size_t r = 0; r < options.resultsInto.size(); ++r) {
    const int64_t k = options.resultsInto[r];
    if (k >= 0 && outputs[r].shape != inputs[static_cast<size_t>(k)].shape)
      throw InvocationError(
          "result " + std::to_string(r) + " has shape " +
          shapeString(outputs[r].shape) + " and cannot be written into " +
          argLabel(signature, static_cast<size_t>(k)) + " of shape " +
          shapeString(inputs[static_cast<size_t>(k)].shape));
  }
  for (size_t r = 0; r < options.resultsInto.size(); ++r) {
    const int64_t k = options.resultsInto[r];
    if (k < 0)
      continue;
    OutputTensor &output = outputs[r];
    const TensorView &destination = inputs[static_cast<size_t>(k)];
    if (!output.data) // computed in place
      continue;
    const size_t bytes = static_cast<size_t>(numElements(output.shape)) *
                         dtypeSize(output.dtype);
    if (bytes && onCuda)
      copyDevice(stream, destination.data, output.data, bytes);
    else if (bytes)
      copyHost(destination.data, output.data, bytes);
    output.owner.reset();
    output.data = nullptr;
  }
  ectx.reset(); // releases every allocation no output claimed
  return outputs;
}

} // namespace ral
} // namespace disc
