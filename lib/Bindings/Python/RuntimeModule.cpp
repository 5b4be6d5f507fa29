//===- RuntimeModule.cpp - the Python module disc._runtime ----------------===//
//
// Loads artifacts (the compiler's output, a compile cache entry, an
// exported file) and runs them: converts between DLPack arrays and the
// runtime's tensors, and maps C++ errors to Python exceptions. Links only
// libdisc_runtime.so: importing it loads no MLIR or LLVM (disc._C, the
// compiler, is imported the first time something compiles).
//
//===----------------------------------------------------------------------===//
#include "disc/Runtime/Artifact.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <atomic>

namespace nb = nanobind;
using namespace disc;

namespace {

ral::DType toDType(nb::dlpack::dtype t, size_t argIndex) {
  ral::DType dtype;
  if (ral::dtypeFromDLPack(t.code, t.bits, t.lanes, dtype))
    return dtype;
  throw ral::InvocationError("argument " + std::to_string(argIndex) +
                             " has a dtype DISC does not support (DLPack code " +
                             std::to_string(t.code) + ", " +
                             std::to_string(t.bits) + " bits)");
}

nb::dlpack::dtype toDLPack(ral::DType t) {
  nb::dlpack::dtype d;
  ral::dtypeToDLPack(t, d.code, d.bits);
  d.lanes = 1;
  return d;
}

using Array = nb::ndarray<nb::ro>;
using CapsuleArray = nb::ndarray<>;

/// torch._C._from_dlpack, looked up once: a result goes from its DLPack
/// capsule straight to a tensor. (nanobind's pytorch export goes through
/// torch.utils.dlpack.from_dlpack and the __dlpack__ protocol, which for a
/// CUDA tensor builds a torch.cuda.Stream object per result: several
/// microseconds of host time per result and call.)
nb::handle torchFromDLPack() {
  static PyObject *fn = [] {
    nb::object f =
        nb::module_::import_("torch").attr("_C").attr("_from_dlpack");
    return f.release().ptr(); // kept for the process's life
  }();
  return fn;
}

/// A device allocator made of two Python callables, `allocate(bytes,
/// stream) -> address` and `free(address)`: PyTorch's caching allocator
/// (torch._C._cuda_cudaCachingAllocator_raw_alloc / _raw_delete) when DISC
/// runs from PyTorch, so that DISC's buffers and PyTorch's share one pool.
/// The runtime calls it without the GIL (from the call, or from whichever
/// thread drops a result), so each use takes the GIL.
class PythonDeviceAllocator final : public ral::DeviceAllocator {
public:
  PythonDeviceAllocator(nb::object allocateFn, nb::object freeFn,
                        std::string name)
      : allocateFn(std::move(allocateFn)), freeFn(std::move(freeFn)),
        name(std::move(name)) {}
  ~PythonDeviceAllocator() override {
    if (!nb::is_alive()) { // the interpreter is gone: leave the references
      allocateFn.release();
      freeFn.release();
      return;
    }
    nb::gil_scoped_acquire gil;
    allocateFn.reset();
    freeFn.reset();
  }

  void *allocate(size_t bytes, void *stream) override {
    if (!nb::is_alive())
      throw ral::RuntimeError(name + ": the Python interpreter is gone");
    nb::gil_scoped_acquire gil;
    uintptr_t address = 0;
    try {
      address = nb::cast<uintptr_t>(
          allocateFn(bytes, reinterpret_cast<uintptr_t>(stream)));
    } catch (const nb::python_error &e) {
      throw ral::RuntimeError(name + " (" + std::to_string(bytes) +
                              " bytes): " + exceptionText(e));
    } catch (const nb::cast_error &) {
      throw ral::RuntimeError(name + " returned something other than an "
                              "address");
    }
    if (!address)
      throw ral::RuntimeError(name + " returned no memory for " +
                              std::to_string(bytes) + " bytes");
    allocations.fetch_add(1, std::memory_order_relaxed);
    return reinterpret_cast<void *>(address);
  }

  void deallocate(void *ptr, void *stream) noexcept override {
    (void)stream; // the allocator remembers each block's stream
    if (!ptr || !nb::is_alive())
      return;
    nb::gil_scoped_acquire gil;
    try {
      freeFn(reinterpret_cast<uintptr_t>(ptr));
      frees.fetch_add(1, std::memory_order_relaxed);
    } catch (nb::python_error &e) {
      e.discard_as_unraisable(name.c_str());
    } catch (...) {
    }
  }

  std::atomic<int64_t> allocations{0}, frees{0};

private:
  static std::string exceptionText(const nb::python_error &e) {
    nb::handle value = e.value();
    std::string type = Py_TYPE(value.ptr())->tp_name;
    try {
      return type + ": " + nb::cast<std::string>(nb::str(value));
    } catch (...) {
      return type;
    }
  }

  nb::object allocateFn, freeFn;
  std::string name;
};

/// disc._runtime.DeviceAllocator: a Python handle on a
/// PythonDeviceAllocator, which calls keep alive while their results live.
struct DeviceAllocatorHandle {
  std::shared_ptr<PythonDeviceAllocator> impl;
};

/// Runs `exe`. `into[r] >= 0` writes result r into argument into[r] after
/// the call (ral::InvokeOptions::resultsInto); such a result comes back as
/// None. Results may share memory only within one `shareGroups` group
/// (ral::InvokeOptions::resultShareGroups). `tf32Matmul` and
/// `tf32Convolution`: whether a cuda program's f32 matmuls and convolutions
/// may use TF32 (ral::Float32Math; the caller's PyTorch settings).
/// `allocator`: where a cuda program's device memory comes from (None: the
/// device's stream-ordered pool).
nb::list run(const ral::Program &exe, std::vector<Array> arrays,
             uintptr_t cudaStream, int32_t cudaDevice,
             const std::vector<int64_t> &into,
             const std::vector<int64_t> &shareGroups, bool tf32Matmul,
             bool tf32Convolution, const DeviceAllocatorHandle *allocator) {
  const bool onCuda = exe.device() == ral::Device::Cuda;
  std::vector<ral::TensorView> inputs(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    ral::TensorView &view = inputs[i];
    Array &a = arrays[i];
    if (onCuda && (a.device_type() != nb::device::cuda::value ||
                   a.device_id() != cudaDevice))
      throw ral::InvocationError(
          "argument " + std::to_string(i) +
          " is not on the executable's CUDA device cuda:" +
          std::to_string(cudaDevice) + " (the program was compiled for "
          "target cuda)");
    if (!onCuda && a.device_type() != nb::device::cpu::value)
      throw ral::InvocationError("argument " + std::to_string(i) +
                                 " is not on the CPU (the program was "
                                 "compiled for target cpu)");
    view.data = const_cast<void *>(a.data());
    view.dtype = toDType(a.dtype(), i);
    // Row-major contiguity as PyTorch defines it: strides of size-1 dims
    // and of empty tensors do not matter.
    if (a.size() != 0) {
      int64_t expected = 1;
      for (size_t d = a.ndim(); d-- > 0;) {
        if (a.shape(d) != 1 && a.stride(d) != expected)
          throw ral::InvocationError("argument " + std::to_string(i) +
                                     " is not contiguous");
        expected *= a.shape(d);
      }
    }
    for (size_t d = 0; d < a.ndim(); ++d)
      view.shape.push_back((int64_t)a.shape(d));
  }
  std::vector<ral::OutputTensor> outputs;
  {
    nb::gil_scoped_release release;
    outputs = exe.run(inputs, reinterpret_cast<void *>(cudaStream), into,
                      shareGroups, {tf32Matmul, tf32Convolution},
                      allocator ? allocator->impl : nullptr);
  }
  nb::list results;
  nb::handle fromDLPack = outputs.empty() ? nb::handle() : torchFromDLPack();
  for (size_t r = 0; r < outputs.size(); ++r) {
    ral::OutputTensor &out = outputs[r];
    if (r < into.size() && into[r] >= 0) {
      results.append(nb::none());
      continue;
    }
    auto *keep = new std::shared_ptr<void>(std::move(out.owner));
    nb::capsule owner(keep, [](void *p) noexcept {
      delete static_cast<std::shared_ptr<void> *>(p);
    });
    std::vector<size_t> shape(out.shape.begin(), out.shape.end());
    nb::object capsule = nb::cast(
        CapsuleArray(out.data, shape.size(), shape.data(), owner, nullptr,
                     toDLPack(out.dtype),
                     onCuda ? nb::device::cuda::value : nb::device::cpu::value,
                     onCuda ? cudaDevice : 0),
        nb::rv_policy::reference);
    results.append(fromDLPack(capsule));
  }
  return results;
}


ral::DType dtypeFromName(const std::string &name) {
  for (int code = 0; code <= static_cast<int>(ral::DType::U8); ++code)
    if (name == ral::dtypeName(static_cast<ral::DType>(code)))
      return static_cast<ral::DType>(code);
  throw ral::ArtifactError("unknown dtype name '" + name + "'");
}

nb::tuple signatureTuple(const ral::Signature &signature) {
  nb::list args;
  for (const ral::ArgSpec &a : signature.args)
    args.append(nb::make_tuple(a.name, ral::dtypeName(a.dtype), a.dims,
                               a.dimClass, a.minSize, a.maxSize));
  nb::list results;
  for (const ral::ResultSpec &r : signature.results)
    results.append(nb::make_tuple(ral::dtypeName(r.dtype), r.rank));
  return nb::make_tuple(args, results);
}

std::shared_ptr<ral::Program> loadProgram(nb::bytes data,
                                          const std::string &origin) {
  std::string bytes(data.c_str(), data.size());
  nb::gil_scoped_release release;
  return ral::Program::load(ral::Artifact::parse(bytes, origin),
                            ral::defaultContext());
}

/// A new artifact from `data` (the compiler's): `weights` (argument index,
/// name, dtype name, shape, contents) stored and bound, argument names and
/// dim ranges set, `metadata` added.
nb::bytes bindArtifact(
    nb::bytes data, const std::map<std::string, std::string> &metadata,
    const std::vector<std::tuple<int64_t, std::string, std::string,
                                 std::vector<int64_t>, nb::bytes>> &weights,
    const std::vector<std::string> &argNames,
    const std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>>
        &ranges) {
  ral::Artifact artifact = ral::Artifact::parse(
      std::string(data.c_str(), data.size()), "the compiled artifact");
  for (const auto &[key, value] : metadata)
    artifact.metadata[key] = value;
  std::vector<ral::ArgSpec> &args = artifact.signature.args;
  if (argNames.size() > args.size())
    throw ral::ArtifactError("more argument names than arguments");
  for (size_t i = 0; i < argNames.size(); ++i)
    args[i].name = argNames[i];
  for (const auto &[arg, dim, lo, hi] : ranges) {
    if (arg < 0 || arg >= (int64_t)args.size() || dim < 0 ||
        dim >= (int64_t)args[arg].dims.size())
      throw ral::ArtifactError("a dim range names argument " +
                               std::to_string(arg) + " dim " +
                               std::to_string(dim) + ", which does not exist");
    ral::ArgSpec &spec = args[arg];
    spec.minSize.resize(spec.dims.size(), 0);
    spec.maxSize.resize(spec.dims.size(), -1);
    spec.minSize[dim] = lo;
    spec.maxSize[dim] = hi;
  }
  for (const auto &[arg, name, dtype, shape, contents] : weights) {
    ral::StoredTensor t;
    t.argIndex = arg;
    t.name = name;
    t.dtype = dtypeFromName(dtype);
    t.shape = shape;
    t.bytes.assign(contents.c_str(), contents.size());
    artifact.weights.push_back(std::move(t));
  }
  // Round trip through the parser: the same checks a reader applies.
  std::string bytes = artifact.serialize();
  (void)ral::Artifact::parse(bytes, "the bound artifact");
  return nb::bytes(bytes.data(), bytes.size());
}

} // namespace

NB_MODULE(_runtime, m) {
  m.doc() = "DISC runtime: load and run compiled artifacts (internal module; "
            "use `disc`)";
  // torch.compile caches keep executables alive until interpreter exit;
  // that is not a leak worth a warning.
  nb::set_leak_warnings(false);
  static nb::exception<ral::RuntimeError> discError(m, "DiscError");
  nb::exception<ral::InvocationError>(m, "InvocationError", discError);
  nb::exception<ral::ArtifactError>(m, "ArtifactError", discError);
  // Raised by disc._C (the compiler), defined here so that `disc` names it
  // without loading the compiler.
  m.attr("CompileError") = nb::handle(PyErr_NewException(
      "disc._runtime.CompileError", discError.ptr(), nullptr));

  nb::class_<ral::Program>(m, "Program")
      .def("run", &run, nb::arg("inputs"), nb::arg("cuda_stream") = 0,
           nb::arg("cuda_device") = 0,
           nb::arg("into") = std::vector<int64_t>(),
           nb::arg("share_groups") = std::vector<int64_t>(),
           nb::arg("tf32_matmul") = false, nb::arg("tf32_convolution") = false,
           nb::arg("allocator").none() = nb::none())
      .def_prop_ro("target",
                   [](const ral::Program &p) {
                     return p.device() == ral::Device::Cuda ? "cuda" : "cpu";
                   })
      .def_prop_ro("metadata",
                   [](const ral::Program &p) { return p.artifact().metadata; })
      .def_prop_ro("load_seconds", &ral::Program::loadSeconds)
      .def_prop_ro("weight_names",
                   [](const ral::Program &p) {
                     std::vector<std::string> names;
                     for (const ral::StoredTensor &t : p.artifact().weights)
                       names.push_back(t.name);
                     return names;
                   })
      .def_prop_ro("signature",
                   [](const ral::Program &p) {
                     return signatureTuple(p.callerSignature());
                   })
      // Per result: the argument the code writes it into, or -1.
      .def_prop_ro("results_into_arguments", [](const ral::Program &p) {
        std::vector<int64_t> into;
        for (const ral::ResultSpec &r : p.callerSignature().results)
          into.push_back(r.intoArg);
        return into;
      });

  // allocate/deallocate call the allocator as the runtime does, without
  // the GIL (tests; a caller's own use).
  nb::class_<DeviceAllocatorHandle>(m, "DeviceAllocator")
      .def(
          "__init__",
          [](DeviceAllocatorHandle *self, nb::callable allocate,
             nb::callable free, std::string name) {
            new (self) DeviceAllocatorHandle{
                std::make_shared<PythonDeviceAllocator>(
                    std::move(allocate), std::move(free), std::move(name))};
          },
          nb::arg("allocate"), nb::arg("free"), nb::arg("name"))
      .def("allocate",
           [](DeviceAllocatorHandle &h, size_t bytes, uintptr_t stream) {
             nb::gil_scoped_release release;
             return reinterpret_cast<uintptr_t>(
                 h.impl->allocate(bytes, reinterpret_cast<void *>(stream)));
           })
      .def("deallocate",
           [](DeviceAllocatorHandle &h, uintptr_t ptr, uintptr_t stream) {
             nb::gil_scoped_release release;
             h.impl->deallocate(reinterpret_cast<void *>(ptr),
                                reinterpret_cast<void *>(stream));
           })
      .def_prop_ro("allocations",
                   [](const DeviceAllocatorHandle &h) {
                     return h.impl->allocations.load();
                   })
      .def_prop_ro("frees", [](const DeviceAllocatorHandle &h) {
        return h.impl->frees.load();
      });

  m.def("load_program", &loadProgram, nb::arg("data"),
        nb::arg("origin") = "artifact");
  m.def("bind_artifact", &bindArtifact, nb::arg("data"), nb::arg("metadata"),
        nb::arg("weights"), nb::arg("arg_names"), nb::arg("ranges"));
  m.def("host_cpu_features", &ral::hostCpuFeatures);
  m.def("cuda_driver_available", [] {
    std::string why;
    bool ok = ral::cudaDriverAvailable(&why);
    return std::make_pair(ok, why);
  });
  m.def("memory_stats", [] {
    ral::Allocator::Stats stats = ral::defaultContext()->allocator().stats();
    nb::dict d;
    d["bytes_in_use"] = stats.bytesInUse;
    d["peak_bytes_in_use"] = stats.peakBytesInUse;
    d["bytes_cached"] = stats.bytesCached;
    d["allocations"] = stats.numAllocations;
    d["allocation_cache_hits"] = stats.numCacheHits;
    d["thread_scratch_bytes"] = ral::threadScratchBytes();
    return d;
  });
  m.def("reset_peak_memory",
        [] { ral::defaultContext()->allocator().resetPeak(); });
  m.def("profile_entries", [] {
    nb::list rows;
    for (const ral::ProfileEntry &entry : ral::profileEntries())
      rows.append(nb::make_tuple(entry.name, entry.calls, entry.seconds));
    return rows;
  });
  m.def("reset_profile", [] { ral::resetProfile(); });
  m.def("parallel_stats", [] {
    ral::ParallelStats stats = ral::parallelStats();
    return std::make_pair(stats.parallelLaunches, stats.serialRuns);
  });
  m.def("small_matmul_calls", [] { return ral::smallMatmulCalls(); });
  m.def("device_block_stats", [] {
    ral::DeviceBlockStats stats = ral::deviceBlockStats();
    return std::make_pair(stats.allocations, stats.reused);
  });
  m.def("row_variant_stats", [] {
    ral::RowVariantStats stats = ral::rowVariantStats();
    return nb::make_tuple(stats.rowsPerThread, stats.rowsPerBlock,
                          stats.vectorGrids, stats.scalarGrids,
                          stats.columnSplits, stats.columnsPerThread,
                          stats.rowsPerWarp, stats.index32Grids,
                          stats.index64Grids, stats.vectorRows,
                          stats.scalarRows, stats.cachedRows,
                          stats.uncachedRows, stats.linearVectorGrids);
  });
}
