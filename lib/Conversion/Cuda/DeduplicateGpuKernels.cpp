//===- DeduplicateGpuKernels.cpp - one module per kind of kernel ----------===//
//
// See DiscDeduplicateGpuKernels in include/disc/Conversion/Cuda/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "disc/Conversion/Cuda/Passes.h"

#include "GpuLoopUtils.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

namespace disc {
#define GEN_PASS_DEF_DISCDEDUPLICATEGPUKERNELS
#include "disc/Conversion/Cuda/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

/// What a module compiles to, as text: its attributes but its name, its ops
/// (printForComparison), and the location of each assertion (the file and
/// line a failing kernel reports).
std::string kernelKey(gpu::GPUModuleOp module) {
  std::string key;
  llvm::raw_string_ostream os(key);
  for (NamedAttribute attr : module->getAttrs())
    if (attr.getName() != SymbolTable::getSymbolAttrName())
      os << attr.getName().getValue() << " = " << attr.getValue() << "\n";
  for (Operation &op : module.getBody()->without_terminator()) {
    disc::cuda::printForComparison(&op, os);
    os << "\n";
  }
  module.walk([&](cf::AssertOp assertion) {
    os << "assert at " << assertion.getLoc() << "\n";
  });
  return key;
}

struct DeduplicateGpuKernelsPass
    : public disc::impl::DiscDeduplicateGpuKernelsBase<
          DeduplicateGpuKernelsPass> {
  using DiscDeduplicateGpuKernelsBase::DiscDeduplicateGpuKernelsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringMap<gpu::GPUModuleOp> firstOfKind;
    DenseMap<StringAttr, gpu::GPUModuleOp> keptFor; // duplicate -> kept
    SmallVector<gpu::GPUModuleOp> duplicates;
    int64_t modules = 0;
    for (gpu::GPUModuleOp kernels : module.getOps<gpu::GPUModuleOp>()) {
      ++modules;
      auto [first, inserted] =
          firstOfKind.try_emplace(kernelKey(kernels), kernels);
      if (inserted)
        continue;
      keptFor[kernels.getNameAttr()] = first->second;
      duplicates.push_back(kernels);
    }
    if (duplicates.empty()) {
      if (log && modules > 0)
        llvm::errs() << "[disc] cuda: " << modules
                     << " kernel modules, none a duplicate\n";
      return;
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto kept = keptFor.find(launch.getKernelModuleName());
      if (kept == keptFor.end())
        return;
      launch.setKernelAttr(SymbolRefAttr::get(
          kept->second.getNameAttr(),
          {FlatSymbolRefAttr::get(launch.getKernelName())}));
    });
    // The modules still named (by something that is no launch: kept,
    // compiled once more, never wrong), in one walk: a walk per duplicate
    // would be quadratic in the number of kernels.
    DenseSet<StringAttr> named;
    if (std::optional<SymbolTable::UseRange> uses =
            SymbolTable::getSymbolUses(&module.getBodyRegion()))
      for (const SymbolTable::SymbolUse &use : *uses)
        named.insert(use.getSymbolRef().getRootReference());
    int64_t erased = 0;
    for (gpu::GPUModuleOp duplicate : duplicates) {
      if (named.contains(duplicate.getNameAttr()))
        continue;
      duplicate.erase();
      ++erased;
    }
    if (log)
      llvm::errs() << "[disc] cuda: " << modules << " kernel modules, "
                   << duplicates.size() << " duplicates of another; "
                   << modules - erased << " compiled\n";
  }
};

} // namespace
