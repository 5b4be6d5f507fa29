//===- GpuModuleToBinary.cpp - gpu.module -> gpu.binary, targets at once --===//
//
// See DiscGpuModuleToBinary in include/disc/Conversion/Cuda/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "disc/Conversion/Cuda/Passes.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Threading.h"
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
    for (auto module : llvm::to_vector(
             getOperation().getBody()->getOps<gpu::GPUModuleOp>()))
      if (failed(serialize(module, options)))
        return signalPassFailure();
  }

  LogicalResult serialize(gpu::GPUModuleOp module,
                          const gpu::TargetOptions &options) {
    ArrayAttr targets = module.getTargetsAttr();
    if (!targets || targets.empty())
      return module.emitError("the module has no target attributes");
    // A clone per target: serialising translates the module to LLVM IR,
    // which edits it (distinct successors, debug expressions), so two
    // threads must not share one. Clones are made here, on one thread.
    SmallVector<gpu::GPUModuleOp> clones;
    for (size_t i = 0; i < targets.size(); ++i)
      clones.push_back(cast<gpu::GPUModuleOp>(module->clone()));
    SmallVector<std::optional<SmallVector<char, 0>>> objects(targets.size());
    MLIRContext *ctx = module->getContext();
    LogicalResult serialized = failableParallelForEachN(
        ctx, 0, targets.size(), [&](size_t i) -> LogicalResult {
          auto target = dyn_cast<gpu::TargetAttrInterface>(targets[i]);
          if (!target)
            return clones[i].emitError()
                   << "target " << targets[i]
                   << " does not implement the target interface";
          objects[i] = target.serializeToObject(clones[i], options);
          if (!objects[i])
            return clones[i].emitError()
                   << "serialising the module for " << targets[i]
                   << " failed";
          return success();
        });
    SmallVector<Attribute> attrs;
    if (succeeded(serialized))
      for (auto [i, target] : llvm::enumerate(targets)) {
        Attribute object = cast<gpu::TargetAttrInterface>(target).createObject(
            clones[i], *objects[i], options);
        if (!object) {
          serialized = module.emitError()
                       << "creating the object for " << target << " failed";
          break;
        }
        attrs.push_back(object);
      }
    for (gpu::GPUModuleOp clone : clones)
      clone->erase();
    if (failed(serialized))
      return failure();
    OpBuilder b(module);
    b.setInsertionPointAfter(module);
    gpu::BinaryOp::create(b, module.getLoc(), module.getName(),
                          module.getOffloadingHandlerAttr(),
                          b.getArrayAttr(attrs));
    module->erase();
    return success();
  }
};

} // namespace
