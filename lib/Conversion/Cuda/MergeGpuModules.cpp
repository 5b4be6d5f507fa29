//===- MergeGpuModules.cpp - one gpu.module for every kernel --------------===//
//
// See DiscMergeGpuModules in include/disc/Conversion/Cuda/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "disc/Conversion/Cuda/Passes.h"

#include "GpuLoopUtils.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/raw_ostream.h"

namespace disc {
#define GEN_PASS_DEF_DISCMERGEGPUMODULES
#include "disc/Conversion/Cuda/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

/// The op as text (printForComparison): two clones of one host symbol
/// print alike, two different constants never do.
std::string printed(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  disc::cuda::printForComparison(op, os);
  return text;
}

/// Whether `a` and `b` (same name, different modules) are one symbol.
bool sameSymbol(Operation *a, Operation *b) {
  if (a->getName() != b->getName())
    return false;
  if (a->getNumRegions() == 0 && b->getNumRegions() == 0)
    return a->getAttrDictionary() == b->getAttrDictionary();
  return printed(a) == printed(b);
}

/// (module, kernel) -> (module, kernel) after merging.
using Renames = DenseMap<std::pair<StringAttr, StringAttr>,
                         std::pair<StringAttr, StringAttr>>;

struct MergeGpuModulesPass
    : public disc::impl::DiscMergeGpuModulesBase<MergeGpuModulesPass> {
  using DiscMergeGpuModulesBase::DiscMergeGpuModulesBase;

  void runOnOperation() override {
    if (kernelsPerModule < 1) {
      getOperation().emitError() << "disc-merge-gpu-modules: "
                                    "kernels-per-module must be at least 1, "
                                    "got "
                                 << static_cast<int64_t>(kernelsPerModule);
      return signalPassFailure();
    }
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> modules(module.getOps<gpu::GPUModuleOp>());
    if (modules.size() < 2)
      return;
    Renames renamed;
    SmallVector<gpu::GPUModuleOp> absorbed;
    // Consecutive modules, kernels-per-module kernels at most, each group
    // into its first module.
    size_t begin = 0;
    while (begin < modules.size()) {
      size_t end = begin, kernels = 0;
      while (end < modules.size() &&
             (end == begin ||
              kernels + kernelCount(modules[end]) <= (size_t)kernelsPerModule))
        kernels += kernelCount(modules[end++]);
      if (failed(mergeGroup(ArrayRef(modules).slice(begin, end - begin),
                            renamed, absorbed)))
        return signalPassFailure();
      begin = end;
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      SymbolRefAttr kernel = launch.getKernel();
      auto it = renamed.find(
          {kernel.getRootReference(), kernel.getLeafReference()});
      if (it != renamed.end())
        launch.setKernelAttr(SymbolRefAttr::get(
            it->second.first, {FlatSymbolRefAttr::get(it->second.second)}));
    });
    for (gpu::GPUModuleOp from : absorbed)
      from.erase(); // every op moved or dropped as a duplicate
  }

  static size_t kernelCount(gpu::GPUModuleOp module) {
    return llvm::count_if(module.getOps<gpu::GPUFuncOp>(),
                          [](gpu::GPUFuncOp f) { return f.isKernel(); });
  }

  /// Moves the kernels of `group` into its first module (modules whose
  /// attributes differ from it stay apart), recording each kernel's new
  /// (module, name) in `renamed` and the emptied modules in `absorbed`.
  LogicalResult mergeGroup(ArrayRef<gpu::GPUModuleOp> group, Renames &renamed,
                           SmallVector<gpu::GPUModuleOp> &absorbed) {
    gpu::GPUModuleOp merged = group.front();
    auto attributesOf = [](gpu::GPUModuleOp m) {
      SmallVector<NamedAttribute> attrs;
      for (NamedAttribute attr : m->getAttrs())
        if (attr.getName() != SymbolTable::getSymbolAttrName())
          attrs.push_back(attr);
      return attrs;
    };
    SmallVector<NamedAttribute> mergedAttrs = attributesOf(merged);
    SymbolTable mergedSymbols(merged);
    Block *body = merged.getBody();
    auto insertionPoint = [&]() {
      if (!body->empty() && body->back().hasTrait<OpTrait::IsTerminator>())
        return Block::iterator(&body->back());
      return body->end();
    };
    for (gpu::GPUModuleOp from : group) {
      if (from != merged && attributesOf(from) != mergedAttrs)
        continue;
      // Outlining makes one module per kernel, named uniquely, and names
      // every kernel alike: a module's only kernel takes the module's name.
      const bool single = kernelCount(from) == 1;
      for (Operation &op :
           llvm::make_early_inc_range(from.getBody()->getOperations())) {
        if (op.hasTrait<OpTrait::IsTerminator>())
          continue;
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        if (!symbol)
          return op.emitError() << "disc-merge-gpu-modules: an op that is not "
                                   "a symbol in a kernel module";
        StringAttr name = symbol.getNameAttr();
        auto kernel = dyn_cast<gpu::GPUFuncOp>(op);
        if (kernel && kernel.isKernel()) {
          StringAttr newName = single ? from.getNameAttr() : name;
          if (newName == name && from == merged)
            continue;
          if (mergedSymbols.lookup(newName))
            return op.emitError() << "disc-merge-gpu-modules: kernel name @"
                                  << newName.getValue() << " is taken";
          renamed[{from.getNameAttr(), name}] = {merged.getNameAttr(),
                                                 newName};
          if (from == merged) {
            mergedSymbols.setSymbolName(&op, newName);
            continue;
          }
          SymbolTable::setSymbolName(&op, newName);
          op.moveBefore(body, insertionPoint());
          mergedSymbols.insert(&op);
          continue;
        }
        if (from == merged)
          continue;
        // Other symbols are clones of one host symbol: kept once.
        if (Operation *existing = mergedSymbols.lookup(name)) {
          if (!sameSymbol(existing, &op))
            return op.emitError()
                   << "disc-merge-gpu-modules: @" << name.getValue()
                   << " differs from the symbol of that name in @"
                   << merged.getName();
          op.erase();
          continue;
        }
        op.moveBefore(body, insertionPoint());
        mergedSymbols.insert(&op);
      }
      if (from != merged)
        absorbed.push_back(from);
    }
    return success();
  }
};

} // namespace
