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

const DialectRegistry &registry() {
  static const DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    disc::registerAllDialects(*r);
    disc::registerAllPasses();
    return r;
  }();
  return *registry;
}

LogicalResult runPipeline(MLIRContext &context, ModuleOp module,
                          const std::string &pipeline) {
  PassManager pm(&context);
  if (failed(parsePassPipeline(pipeline, pm)))
    std::abort(); // DISC's own pipeline text: a bug, not an input
  return pm.run(module);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MLIRContext context(registry(), MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  // Every diagnostic is an expected outcome: swallow it.
  ScopedDiagnosticHandler quiet(&context, [](Diagnostic &) { return success(); });
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz-input"),
      llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module || failed(verify(*module)))
    return 0;
  if (failed(runPipeline(context, *module, disc::cpuPreparePipeline())) ||
      failed(runPipeline(context, *module,
                         disc::cpuLowerToKernelsPipeline())) ||
      failed(runPipeline(context, *module, disc::cpuKernelsToLlvmPipeline())))
    return 0;
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext);
  (void)llvmModule;
  return 0;
}
