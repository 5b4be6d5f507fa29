//===- OutlineLoopKernels.cpp - one function per loop nest ----------------===//
#include "Outlining.h"
#include "disc/Dialect/Disc/DiscDialect.h"
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
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
/// memory management (but static stack buffers), no calls, no asserts (these lower to RAL calls that
/// take the context argument only the entry has).
bool isSelfContained(Operation *nest) {
  WalkResult result = nest->walk([](Operation *op) {
    if (isa<memref::AllocOp, memref::DeallocOp, memref::ReallocOp,
            CallOpInterface>(op))
      return WalkResult::interrupt();
    // Small stack buffers of a fixed size (per-row temporaries of stitch
    // kernels) are fine; a dynamic one would grow the stack per iteration.
    if (auto alloca = dyn_cast<memref::AllocaOp>(op))
      if (!alloca.getType().hasStaticShape())
        return WalkResult::interrupt();
    // A per-thread scratch buffer (disc.thread_scratch) needs no context.
    if (isa<disc::ThreadScratchOp>(op))
      return WalkResult::advance();
    StringRef dialect = op->getName().getDialectNamespace();
    if (dialect == "cf" || dialect == "func" || dialect == "llvm" ||
        dialect == "bufferization" || dialect == "disc")
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// Values used inside the nests that are defined outside them.
llvm::SetVector<Value> capturedValues(ArrayRef<Operation *> nests) {
  llvm::SetVector<Value> captured;
  for (Operation *nest : nests) {
    captured.insert(nest->operand_begin(), nest->operand_end());
    getUsedValuesDefinedAbove(nest->getRegions(), captured);
  }
  return captured;
}

/// At most this many nests share one kernel function: enough to amortise
/// LLVM's per-function cost on graphs of many small kernels, few enough to
/// keep each function small (LLVM's loop passes are superlinear in it).
constexpr unsigned kMaxNestsPerKernel = 8;

/// Whether `next` can join the group ending with `last`: same block, and
/// everything between them only allocates, computes without touching
/// memory, or asserts, so the group's nests can all run where the last one
/// is. A shape check (`cf.assert`, as dynamic shapes put between nests)
/// then runs before the earlier nests instead of after them: its condition
/// reads no memory they write (nothing between them reads memory), and a
/// failing check ends the call either way.
bool canGroup(Operation *last, Operation *next) {
  if (last->getBlock() != next->getBlock() || last->getNumResults() != 0)
    return false;
  for (Operation *op = last->getNextNode(); op && op != next;
       op = op->getNextNode()) {
    if (op->getNumRegions() != 0)
      return false;
    if (isa<memref::AllocOp, cf::AssertOp>(op) || isMemoryEffectFree(op))
      continue;
    return false;
  }
  return true;
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
      SmallVector<SmallVector<Operation *>> groups;
      for (Operation *nest : nests) {
        if (!groups.empty() && groups.back().size() < kMaxNestsPerKernel &&
            canGroup(groups.back().back(), nest))
          groups.back().push_back(nest);
        else
          groups.push_back({nest});
      }
      unsigned counter = 0;
      for (ArrayRef<Operation *> group : groups)
        outline(entry, group, symbols, counter);
    }
  }

  /// Outlines `group` (nests of one block, all but the last without
  /// results) into one kernel called where the last nest was.
  void outline(func::FuncOp entry, ArrayRef<Operation *> group,
               SymbolTable &symbols, unsigned &counter) {
    MLIRContext *ctx = &getContext();
    Operation *last = group.back();
    llvm::SetVector<Value> captured = capturedValues(group);
    SmallVector<Value> arguments;
    SmallVector<Operation *> constants;
    disc::splitCaptures(captured, arguments, constants);

    OpBuilder moduleBuilder(entry);
    auto type = FunctionType::get(ctx, ValueRange(arguments).getTypes(),
                                  last->getResultTypes());
    auto kernel = disc::createOutlinedFunction(
        moduleBuilder, last->getLoc(), symbols,
        (entry.getSymName() + "_kernel_").str(), counter, type,
        disc::kKernelAttr);

    Block *body = kernel.addEntryBlock();
    OpBuilder builder = OpBuilder::atBlockBegin(body);
    IRMapping mapping;
    for (auto [value, argument] : llvm::zip(arguments, body->getArguments()))
      mapping.map(value, argument);
    for (Operation *constant : constants)
      builder.clone(*constant, mapping);
    Operation *moved = nullptr;
    for (Operation *nest : group)
      moved = builder.clone(*nest, mapping);
    func::ReturnOp::create(builder, last->getLoc(), moved->getResults());

    OpBuilder callBuilder(last);
    auto call = func::CallOp::create(callBuilder, last->getLoc(), kernel,
                                     arguments);
    last->replaceAllUsesWith(call.getResults());
    for (Operation *nest : group)
      nest->erase();
  }
};

} // namespace
