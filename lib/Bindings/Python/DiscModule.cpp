//===- DiscModule.cpp - the Python module disc._C (the compiler) -----------===//
//
// Compiles MLIR text to an artifact (bytes; disc._runtime loads and runs
// it) and maps compile errors to disc.CompileError. Imported lazily by
// `disc`, the first time something compiles: it loads MLIR and LLVM. No
// compiler logic lives here.
//
//===----------------------------------------------------------------------===//
#include "disc/Compiler/Executable.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace nb = nanobind;
using namespace disc;

NB_MODULE(_C, m) {
  m.doc() = "DISC compiler (internal module; use `disc`)";
  // disc.CompileError lives in disc._runtime (importable without the
  // compiler); C++ CompileErrors become it.
  static PyObject *compileError =
      nb::module_::import_("disc._runtime").attr("CompileError").inc_ref().ptr();
  nb::register_exception_translator(
      [](const std::exception_ptr &p, void *) {
        try {
          std::rethrow_exception(p);
        } catch (const CompileError &e) {
          PyErr_SetString(compileError, e.what());
        }
      });

  m.def(
      "compile_mlir",
      [](const std::string &text, const std::string &dumpDir,
         const std::string &sourceName, bool logTiming, bool logFusion,
         const std::string &target,
         const std::vector<std::string> &cudaChips) {
        CompileOptions options;
        options.target = target;
        options.cudaChips = cudaChips;
        options.dumpDir = dumpDir;
        options.sourceName = sourceName;
        options.logTiming = logTiming;
        options.logFusion = logFusion;
        std::string bytes;
        {
          nb::gil_scoped_release release;
          bytes = Executable::compileArtifact(text, options).serialize();
        }
        return nb::bytes(bytes.data(), bytes.size());
      },
      nb::arg("text"), nb::arg("dump_dir") = "",
      nb::arg("source_name") = "input.mlir", nb::arg("log_timing") = false,
      nb::arg("log_fusion") = false, nb::arg("target") = "cpu",
      nb::arg("cuda_chips") = std::vector<std::string>{});
  m.def("cuda_toolkit_path", &cudaToolkitPath);
  m.def("compilation_count", &compilationCount);
}
