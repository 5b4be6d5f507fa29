//===- GpuModuleToBinary.cpp - gpu.module -> gpu.binary, targets at once --===//
//
// See DiscGpuModuleToBinary in include/disc/Conversion/Cuda/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "disc/Conversion/Cuda/Passes.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSwitch.h"

namespace disc {
#define GEN_PASS_DEF_DISCGPUMODULETOBINARY
#include "disc/Conversion/Cuda/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

struct GpuModuleToBinaryPass
    : public disc::impl::DiscGpuModuleToBinaryBase<GpuModuleToBinaryPass> {
  using DiscGpuModuleToBinaryBase::DiscGpuModuleToBinaryBase;

  void runOnOperation() override {
    std::optional<gpu::CompilationTarget> format =
        llvm::StringSwitch<std::optional<gpu::CompilationTarget>>(
            compilationTarget)
            .Cases({"assembly", "isa"}, gpu::CompilationTarget::Assembly)
            .Cases({"binary", "bin"}, gpu::CompilationTarget::Binary)
            .Cases({"fatbinary", "fatbin"}, gpu::CompilationTarget::Fatbin)
            .Default(std::nullopt);
    if (!format) {
      getOperation().emitError()
          << "disc-gpu-module-to-binary: format must be isa, bin or fatbin, "
             "got '"
          << compilationTarget << "'";
      return signalPassFailure();
    }
    // No symbol table to link against: DISC's kernel modules are whole.
    gpu::TargetOptions options(toolkitPath, /*librariesToLink=*/{},
                               /*cmdOptions=*/"", /*elfSection=*/"",
                               *format, [] { return (SymbolTable *)nullptr; });
    SmallVector<gpu::GPUModuleOp> modules(
        getOperation().getBody()->getOps<gpu::GPUModuleOp>());
    // The jobs run on the context's threads. A compile's context is
    // single-threaded (its passes run on the calling thread, which the
    // dump-after-each-pass instrumentation needs): threads are enabled here,
    // while this module pass is the only thing running, and disabled again
    // after.
    MLIRContext &context = getContext();
    const bool wasThreaded = context.isMultithreadingEnabled();
    if (!wasThreaded && !modules.empty())
      context.enableMultithreading(true);
    llvm::scope_exit restoreThreading([&] {
      if (!wasThreaded && context.isMultithreadingEnabled())
        context.enableMultithreading(false);
    });
    // One job per (module, target): a clone of the module each. Serialising
    // translates the module to LLVM IR, which edits it (distinct
    // successors, debug expressions), so two threads must not share one.
    // The clones are made here, on one thread.
    struct Job {
      gpu::GPUModuleOp module, clone;
      Attribute target;
      std::optional<SmallVector<char, 0>> object;
    };
    SmallVector<Job> jobs;
    for (gpu::GPUModuleOp module : modules) {
      ArrayAttr targets = module.getTargetsAttr();
      if (!targets || targets.empty()) {
        module.emitError("the module has no target attributes");
        return signalPassFailure();
      }
      for (Attribute target : targets)
        jobs.push_back(
            {module, cast<gpu::GPUModuleOp>(module->clone()), target, {}});
    }
    LogicalResult serialized = failableParallelForEachN(
        &getContext(), 0, jobs.size(), [&](size_t i) -> LogicalResult {
          Job &job = jobs[i];
          auto target = dyn_cast<gpu::TargetAttrInterface>(job.target);
          if (!target)
            return job.module.emitError()
                   << "target " << job.target
                   << " does not implement the target interface";
          job.object = target.serializeToObject(job.clone, options);
          if (!job.object)
            return job.module.emitError()
                   << "serialising the module for " << job.target
                   << " failed";
          return success();
        });
    DenseMap<Operation *, SmallVector<Attribute>> objects;
    if (succeeded(serialized))
      for (Job &job : jobs) {
        Attribute object = cast<gpu::TargetAttrInterface>(job.target)
                               .createObject(job.clone, *job.object, options);
        if (!object) {
          serialized = job.module.emitError()
                       << "creating the object for " << job.target
                       << " failed";
          break;
        }
        objects[job.module].push_back(object);
      }
    for (Job &job : jobs)
      job.clone->erase();
    if (failed(serialized))
      return signalPassFailure();
    for (gpu::GPUModuleOp module : modules) {
      OpBuilder b(module);
      b.setInsertionPointAfter(module);
      gpu::BinaryOp::create(b, module.getLoc(), module.getName(),
                            module.getOffloadingHandlerAttr(),
                            b.getArrayAttr(objects[module]));
      module->erase();
    }
  }
};

} // namespace
