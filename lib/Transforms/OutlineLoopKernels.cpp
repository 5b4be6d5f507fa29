//===- OutlineLoopKernels.cpp - one function per loop nest ----------------===//
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace disc {
#define GEN_PASS_DEF_DISCOUTLINELOOPKERNELS
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

bool isLoop(Operation *op) {
  return isa<scf::ForOp, scf::ParallelOp, scf::ForallOp, scf::WhileOp>(op);
}

/// Whether every op in the nest can run without the runtime context: no
/// memory management, no calls, no asserts (these lower to RAL calls that
/// take the context argument only the entry has).
bool isSelfContained(Operation *nest) {
  WalkResult result = nest->walk([](Operation *op) {
    if (isa<memref::AllocOp, memref::DeallocOp, memref::ReallocOp,
            memref::AllocaOp, CallOpInterface>(op))
      return WalkResult::interrupt();
    StringRef dialect = op->getName().getDialectNamespace();
    if (dialect == "cf" || dialect == "func" || dialect == "llvm" ||
        dialect == "bufferization" || dialect == "disc")
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// Values used inside `nest` that are defined outside it.
llvm::SetVector<Value> capturedValues(Operation *nest) {
  llvm::SetVector<Value> captured(nest->operand_begin(), nest->operand_end());
  getUsedValuesDefinedAbove(nest->getRegions(), captured);
  return captured;
}

struct OutlineLoopKernelsPass
    : public disc::impl::DiscOutlineLoopKernelsBase<OutlineLoopKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto entry : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (!entry->hasAttr(disc::kEntryAttr))
        continue;
      SmallVector<Operation *> nests;
      entry.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (!isLoop(op))
          return WalkResult::advance();
        if (isSelfContained(op))
          nests.push_back(op);
        // An outermost loop that stays (it allocates, asserts...) keeps its
        // inner loops too: they run in the allocating loop's scope.
        return WalkResult::skip();
      });
      unsigned counter = 0;
      for (Operation *nest : nests)
        outline(entry, nest, symbols, counter);
    }
  }

  void outline(func::FuncOp entry, Operation *nest, SymbolTable &symbols,
               unsigned &counter) {
    MLIRContext *ctx = &getContext();
    llvm::SetVector<Value> captured = capturedValues(nest);
    // Constants are cloned into the kernel rather than passed, so that LLVM
    // still folds them (loop bounds and steps in particular).
    SmallVector<Value> arguments;
    SmallVector<Operation *> constants;
    for (Value value : captured) {
      Operation *def = value.getDefiningOp();
      if (def && def->hasTrait<OpTrait::ConstantLike>())
        constants.push_back(def);
      else
        arguments.push_back(value);
    }

    OpBuilder moduleBuilder(entry);
    auto type = FunctionType::get(ctx, ValueRange(arguments).getTypes(),
                                  nest->getResultTypes());
    std::string name;
    do {
      name = (entry.getSymName() + "_kernel_" + Twine(counter++)).str();
    } while (symbols.lookup(name));
    auto kernel =
        func::FuncOp::create(moduleBuilder, nest->getLoc(), name, type);
    kernel.setPrivate();
    // Carried to the LLVM function by convert-func-to-llvm.
    kernel->setAttr("passthrough",
                    ArrayAttr::get(ctx, {StringAttr::get(ctx, "noinline")}));
    symbols.insert(kernel);

    Block *body = kernel.addEntryBlock();
    OpBuilder builder = OpBuilder::atBlockBegin(body);
    IRMapping mapping;
    for (auto [value, argument] : llvm::zip(arguments, body->getArguments()))
      mapping.map(value, argument);
    for (Operation *constant : constants)
      builder.clone(*constant, mapping);
    Operation *moved = builder.clone(*nest, mapping);
    func::ReturnOp::create(builder, nest->getLoc(), moved->getResults());

    OpBuilder callBuilder(nest);
    auto call = func::CallOp::create(callBuilder, nest->getLoc(), kernel,
                                     arguments);
    nest->replaceAllUsesWith(call.getResults());
    nest->erase();
  }
};

} // namespace
