//===- compile_fuzzer.cpp - libFuzzer target: parse, verify, compile ------===//
//
// One input = one MLIR module in text. It is parsed, verified and run
// through DISC's whole CPU pipeline (prepare, lower to loop kernels, lower
// to the LLVM dialect) and translated to LLVM IR, in process, exactly as
// disc.compile_mlir does before the JIT. Diagnostics (parse errors,
// verifier errors, pass failures) are expected outcomes; a crash, a hang,
// an abort or a sanitizer report is a finding. Built by
// `make fuzz-libfuzzer` (clang, -fsanitize=fuzzer,address, DISC's own code
// coverage-instrumented; scripts/fuzz_libfuzzer.sh) and seeded from the
// lit tests and fuzz/corpus.
//
//===----------------------------------------------------------------------===//
#include "disc/Compiler/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdint>
#include <cstdlib>
#include <memory>

using namespace mlir;

namespace {

/// One context and the three pass managers, built once: creating a context
/// and loading every dialect per input would cost more than most inputs
/// (which do not parse). Modules are parsed into the shared context and
/// dropped after each input.
struct Compiler {
  DialectRegistry registry;
  std::unique_ptr<MLIRContext> context;
  std::unique_ptr<PassManager> prepare, lower, toLlvm;

  Compiler() {
    disc::registerAllDialects(registry);
    disc::registerAllPasses();
    context = std::make_unique<MLIRContext>(registry,
                                            MLIRContext::Threading::DISABLED);
    context->loadAllAvailableDialects();
    // Every diagnostic is an expected outcome: swallow it.
    context->getDiagEngine().registerHandler(
        [](Diagnostic &) { return success(); });
    prepare = pipeline(disc::cpuPreparePipeline());
    lower = pipeline(disc::cpuLowerToKernelsPipeline());
    toLlvm = pipeline(disc::cpuKernelsToLlvmPipeline());
  }

  std::unique_ptr<PassManager> pipeline(const std::string &text) {
    auto pm = std::make_unique<PassManager>(context.get());
    if (failed(parsePassPipeline(text, *pm)))
      std::abort(); // DISC's own pipeline text: a bug, not an input
    return pm;
  }
};

Compiler &compiler() {
  static Compiler *instance = new Compiler();
  return *instance;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Compiler &c = compiler();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz-input"),
      llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(c.context.get()));
  if (!module || failed(verify(*module)))
    return 0;
  if (failed(c.prepare->run(*module)) || failed(c.lower->run(*module)) ||
      failed(c.toLlvm->run(*module)))
    return 0;
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext);
  (void)llvmModule;
  return 0;
}
