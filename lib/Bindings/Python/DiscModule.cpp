//===- DiscModule.cpp - the thin Python module disc._C --------------------===//
//
// Converts between DLPack arrays and the runtime's tensors, and maps C++
// errors to Python exceptions. No compiler logic lives here.
//
//===----------------------------------------------------------------------===//
#include "disc/Compiler/Executable.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

namespace nb = nanobind;
using namespace disc;

namespace {

ral::DType toDType(nb::dlpack::dtype t, size_t argIndex) {
  using code = nb::dlpack::dtype_code;
  auto c = static_cast<code>(t.code);
  if (t.lanes == 1) {
    if (c == code::Float && t.bits == 16)
      return ral::DType::F16;
    if (c == code::Float && t.bits == 32)
      return ral::DType::F32;
    if (c == code::Float && t.bits == 64)
      return ral::DType::F64;
    if (c == code::Bfloat && t.bits == 16)
      return ral::DType::BF16;
    if (c == code::Bool && t.bits == 8)
      return ral::DType::I1;
    if (c == code::Int && t.bits == 8)
      return ral::DType::I8;
    if (c == code::Int && t.bits == 16)
      return ral::DType::I16;
    if (c == code::Int && t.bits == 32)
      return ral::DType::I32;
    if (c == code::Int && t.bits == 64)
      return ral::DType::I64;
  }
  throw ral::InvocationError("argument " + std::to_string(argIndex) +
                             " has a dtype DISC does not support (DLPack code " +
                             std::to_string(t.code) + ", " +
                             std::to_string(t.bits) + " bits)");
}

nb::dlpack::dtype toDLPack(ral::DType t) {
  using code = nb::dlpack::dtype_code;
  auto make = [](code c, uint8_t bits) {
    nb::dlpack::dtype d;
    d.code = static_cast<uint8_t>(c);
    d.bits = bits;
    d.lanes = 1;
    return d;
  };
  switch (t) {
  case ral::DType::F16:
    return make(code::Float, 16);
  case ral::DType::BF16:
    return make(code::Bfloat, 16);
  case ral::DType::F32:
    return make(code::Float, 32);
  case ral::DType::F64:
    return make(code::Float, 64);
  case ral::DType::I1:
    return make(code::Bool, 8);
  case ral::DType::I8:
    return make(code::Int, 8);
  case ral::DType::I16:
    return make(code::Int, 16);
  case ral::DType::I32:
    return make(code::Int, 32);
  case ral::DType::I64:
    return make(code::Int, 64);
  case ral::DType::U8:
    return make(code::UInt, 8);
  }
  return make(code::Float, 32);
}

using Array = nb::ndarray<nb::ro>;
using TorchArray = nb::ndarray<nb::pytorch>;

std::vector<TorchArray> run(Executable &exe, std::vector<Array> arrays,
                            uintptr_t cudaStream, int32_t cudaDevice) {
  const bool onCuda = exe.device() == ral::Device::Cuda;
  std::vector<ral::TensorView> inputs;
  inputs.reserve(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
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
    ral::TensorView view;
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
    inputs.push_back(std::move(view));
  }
  std::vector<ral::OutputTensor> outputs;
  {
    nb::gil_scoped_release release;
    outputs = exe.run(inputs, reinterpret_cast<void *>(cudaStream));
  }
  std::vector<TorchArray> results;
  for (ral::OutputTensor &out : outputs) {
    auto *keep = new std::shared_ptr<void>(std::move(out.owner));
    nb::capsule owner(keep, [](void *p) noexcept {
      delete static_cast<std::shared_ptr<void> *>(p);
    });
    std::vector<size_t> shape(out.shape.begin(), out.shape.end());
    results.emplace_back(out.data, shape.size(), shape.data(), owner, nullptr,
                         toDLPack(out.dtype),
                         onCuda ? nb::device::cuda::value
                                : nb::device::cpu::value,
                         onCuda ? cudaDevice : 0);
  }
  return results;
}

} // namespace

NB_MODULE(_C, m) {
  m.doc() = "DISC compiler and runtime (internal module; use `disc`)";
  // torch.compile caches keep executables alive until interpreter exit;
  // that is not a leak worth a warning.
  nb::set_leak_warnings(false);
  static nb::exception<ral::RuntimeError> discError(m, "DiscError");
  nb::exception<CompileError>(m, "CompileError", discError);
  nb::exception<ral::InvocationError>(m, "InvocationError", discError);

  nb::class_<Executable>(m, "Executable")
      .def("run", &run, nb::arg("inputs"), nb::arg("cuda_stream") = 0,
           nb::arg("cuda_device") = 0)
      .def_prop_ro("target",
                   [](const Executable &exe) {
                     return exe.device() == ral::Device::Cuda ? "cuda"
                                                              : "cpu";
                   })
      .def_prop_ro("entry_name", &Executable::entryName)
      .def_prop_ro("compile_seconds", &Executable::compileSeconds)
      .def_prop_ro("kernel_counts",
                   [](const Executable &exe) {
                     const KernelCounts &k = exe.kernelCounts();
                     nb::dict d;
                     d["loops"] = k.loopKernels;
                     d["library_calls"] = k.libraryCalls;
                     d["copies"] = k.copies;
                     return d;
                   })
      .def_prop_ro("signature", [](const Executable &exe) {
        nb::list args;
        for (const ral::ArgSpec &a : exe.signature().args)
          args.append(nb::make_tuple(a.name, ral::dtypeName(a.dtype), a.dims,
                                     a.dimClass));
        nb::list results;
        for (const ral::ResultSpec &r : exe.signature().results)
          results.append(nb::make_tuple(ral::dtypeName(r.dtype), r.rank));
        return nb::make_tuple(args, results);
      });

  m.def(
      "compile_mlir",
      [](const std::string &text, const std::string &dumpDir,
         const std::string &sourceName, bool logTiming, bool logFusion,
         const std::string &target) {
        CompileOptions options;
        options.target = target;
        options.dumpDir = dumpDir;
        options.sourceName = sourceName;
        options.logTiming = logTiming;
        options.logFusion = logFusion;
        std::unique_ptr<Executable> exe;
        {
          nb::gil_scoped_release release;
          exe = Executable::compile(text, options);
        }
        return exe;
      },
      nb::arg("text"), nb::arg("dump_dir") = "",
      nb::arg("source_name") = "input.mlir", nb::arg("log_timing") = false,
      nb::arg("log_fusion") = false, nb::arg("target") = "cpu");
  m.def("cuda_driver_available", [] {
    std::string why;
    bool ok = ral::cudaDriverAvailable(&why);
    return std::make_pair(ok, why);
  });
  m.def("cuda_toolkit_path", &cudaToolkitPath);
  m.def("compilation_count", &compilationCount);
  m.def("memory_stats", [] {
    ral::Allocator::Stats stats = defaultAllocator().stats();
    nb::dict d;
    d["bytes_in_use"] = stats.bytesInUse;
    d["peak_bytes_in_use"] = stats.peakBytesInUse;
    d["bytes_cached"] = stats.bytesCached;
    d["allocations"] = stats.numAllocations;
    d["allocation_cache_hits"] = stats.numCacheHits;
    d["thread_scratch_bytes"] = ral::threadScratchBytes();
    return d;
  });
  m.def("reset_peak_memory", [] { defaultAllocator().resetPeak(); });
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
}
