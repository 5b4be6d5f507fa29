//===- MergeGpuModules.cpp - one gpu.module for every kernel --------------===//
//
// See DiscMergeGpuModules in include/disc/Conversion/Cuda/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "disc/Conversion/Cuda/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/raw_ostream.h"

namespace disc {
#define GEN_PASS_DEF_DISCMERGEGPUMODULES
#include "disc/Conversion/Cuda/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

/// The op as text without its location: two clones of one host symbol
/// print alike.
std::string printed(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os, OpPrintingFlags().useLocalScope());
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

struct MergeGpuModulesPass
    : public disc::impl::DiscMergeGpuModulesBase<MergeGpuModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> modules(module.getOps<gpu::GPUModuleOp>());
    if (modules.size() < 2)
      return;
    gpu::GPUModuleOp merged = modules.front();
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
    // (module, kernel) -> the kernel's name in the merged module.
    DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    SmallVector<gpu::GPUModuleOp> absorbed;
    for (gpu::GPUModuleOp from : modules) {
      if (from != merged && attributesOf(from) != mergedAttrs)
        continue;
      // Outlining makes one module per kernel, named uniquely, and names
      // every kernel alike: a module's only kernel takes the module's name.
      auto kernels = llvm::make_filter_range(
          from.getOps<gpu::GPUFuncOp>(),
          [](gpu::GPUFuncOp f) { return f.isKernel(); });
      const bool single = std::distance(kernels.begin(), kernels.end()) == 1;
      for (Operation &op :
           llvm::make_early_inc_range(from.getBody()->getOperations())) {
        if (op.hasTrait<OpTrait::IsTerminator>())
          continue;
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        if (!symbol) {
          op.emitError() << "disc-merge-gpu-modules: an op that is not a "
                            "symbol in a kernel module";
          return signalPassFailure();
        }
        StringAttr name = symbol.getNameAttr();
        auto kernel = dyn_cast<gpu::GPUFuncOp>(op);
        if (kernel && kernel.isKernel()) {
          StringAttr newName = single ? from.getNameAttr() : name;
          if (newName == name && from == merged)
            continue;
          if (mergedSymbols.lookup(newName)) {
            op.emitError() << "disc-merge-gpu-modules: kernel name @"
                           << newName.getValue() << " is taken";
            return signalPassFailure();
          }
          renamed[{from.getNameAttr(), name}] = newName;
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
          if (!sameSymbol(existing, &op)) {
            op.emitError() << "disc-merge-gpu-modules: @" << name.getValue()
                           << " differs from the symbol of that name in @"
                           << merged.getName();
            return signalPassFailure();
          }
          op.erase();
          continue;
        }
        op.moveBefore(body, insertionPoint());
        mergedSymbols.insert(&op);
      }
      if (from != merged)
        absorbed.push_back(from);
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      SymbolRefAttr kernel = launch.getKernel();
      auto it = renamed.find(
          {kernel.getRootReference(), kernel.getLeafReference()});
      if (it != renamed.end())
        launch.setKernelAttr(SymbolRefAttr::get(
            merged.getNameAttr(), {FlatSymbolRefAttr::get(it->second)}));
    });
    for (gpu::GPUModuleOp from : absorbed)
      from.erase(); // every op moved or dropped as a duplicate
  }
};

} // namespace
