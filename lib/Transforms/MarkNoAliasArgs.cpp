//===- MarkNoAliasArgs.cpp - noalias on kernel buffer arguments -----------===//
//
// A kernel (disc.kernel) or parallel body (disc.parallel_body) memref
// argument gets `disc.noalias` when, at every call of the function, its
// buffer cannot overlap the buffer of any other memref argument where one
// of the two is written by the function. Overlap is decided in the caller:
// in the entry by MLIR's local alias analysis (distinct allocations do not
// overlap, nor an allocation and an argument), in a kernel also by the
// kernel's own marks (two views of different kernel arguments, one of
// them marked, do not overlap). Whether an argument is written follows its
// uses through views and calls; an op of unknown effects writes.
//
// The mark is kept for the LLVM lowering, where a memref argument becomes
// several (allocated pointer, aligned pointer, offset, sizes, strides):
// `disc.noalias_llvm_args` lists the positions of the marked arguments'
// aligned pointers and `disc.llvm_arg_count` the expanded argument count,
// for disc-apply-noalias-args to put `llvm.noalias` on those pointers.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/Passes.h"

#include "mlir/Analysis/AliasAnalysis/LocalAliasAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace disc {
#define GEN_PASS_DEF_DISCMARKNOALIASARGS
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

bool isMarkable(func::FuncOp func) {
  return !func.isExternal() && (func->hasAttr(disc::kKernelAttr) ||
                                func->hasAttr(disc::kParallelBodyAttr));
}

/// Ops whose memref results view (part of) their memref operand.
bool formsView(Operation *op) {
  return isa<ViewLikeOpInterface, memref::CastOp, memref::ExpandShapeOp,
             memref::CollapseShapeOp, memref::ExtractStridedMetadataOp,
             memref::AssumeAlignmentOp>(op);
}

/// Follows a memref back through views to the value it was viewed from.
Value viewBase(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (!formsView(def) || def->getNumOperands() == 0)
      break;
    Value source = isa<ViewLikeOpInterface>(def)
                       ? cast<ViewLikeOpInterface>(def).getViewSource()
                       : def->getOperand(0);
    if (!isa<BaseMemRefType>(source.getType()))
      break;
    value = source;
  }
  return value;
}

class NoAliasMarker {
public:
  explicit NoAliasMarker(ModuleOp module) : symbols(module) {}

  /// Whether `func` may write through its argument `index`.
  bool argWritten(func::FuncOp func, unsigned index) {
    auto key = std::make_pair(func.getOperation(), index);
    auto it = written.find(key);
    if (it != written.end())
      return it->second;
    written[key] = true; // recursion (none expected): assume written
    bool result =
        func.isExternal() || valueWritten(func.getArgument(index));
    written[key] = result;
    return result;
  }

  /// Marks the memref arguments of `callee` that no call of it can alias
  /// with a conflicting argument.
  void mark(func::FuncOp callee, ArrayRef<func::CallOp> calls) {
    unsigned count = callee.getNumArguments();
    SmallVector<bool> noalias(count, false), writes(count, false);
    for (unsigned i = 0; i < count; ++i) {
      noalias[i] = isa<MemRefType>(callee.getArgument(i).getType());
      writes[i] = noalias[i] && argWritten(callee, i);
    }
    if (calls.empty())
      return;
    for (func::CallOp call : calls)
      for (unsigned i = 0; i < count; ++i)
        for (unsigned j = 0; j < count && noalias[i]; ++j)
          if (j != i && isa<MemRefType>(callee.getArgument(j).getType()) &&
              (writes[i] || writes[j]) &&
              !disjoint(call, call.getOperand(i), call.getOperand(j)))
            noalias[i] = false;
    for (unsigned i = 0; i < count; ++i)
      if (noalias[i])
        callee.setArgAttr(i, disc::kNoAliasAttr, UnitAttr::get(ctx(callee)));
  }

private:
  static MLIRContext *ctx(Operation *op) { return op->getContext(); }

  bool valueWritten(Value value) {
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (isa<memref::DimOp>(user))
        continue;
      if (formsView(user)) {
        for (Value result : user->getResults())
          if (isa<BaseMemRefType>(result.getType()) && valueWritten(result))
            return true;
        continue;
      }
      if (auto call = dyn_cast<func::CallOp>(user)) {
        auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
        if (!callee || argWritten(callee, use.getOperandNumber()))
          return true;
        continue;
      }
      auto effects = dyn_cast<MemoryEffectOpInterface>(user);
      if (!effects)
        return true;
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffects(instances);
      for (const MemoryEffects::EffectInstance &instance : instances) {
        if (isa<MemoryEffects::Read>(instance.getEffect()))
          continue;
        // A write, allocation or free of another value (memref.copy's
        // target, say) leaves this one alone; one with no value may touch
        // anything.
        if (instance.getValue() && instance.getValue() != value)
          continue;
        return true;
      }
    }
    return false;
  }

  /// Whether operands `a` and `b` of `call` can never overlap.
  bool disjoint(func::CallOp call, Value a, Value b) {
    if (aliasAnalysis.alias(a, b).isNo())
      return true;
    // In a marked function, views of two different arguments, one of them
    // marked, do not overlap: the mark says the marked one overlaps no
    // other argument that a write through either touches, and every write
    // here is a write of the caller.
    auto caller = call->getParentOfType<func::FuncOp>();
    auto baseA = dyn_cast<BlockArgument>(viewBase(a));
    auto baseB = dyn_cast<BlockArgument>(viewBase(b));
    if (!caller || !baseA || !baseB || baseA == baseB ||
        baseA.getOwner() != &caller.front() ||
        baseB.getOwner() != &caller.front())
      return false;
    return caller.getArgAttr(baseA.getArgNumber(), disc::kNoAliasAttr) ||
           caller.getArgAttr(baseB.getArgNumber(), disc::kNoAliasAttr);
  }

  SymbolTable symbols;
  LocalAliasAnalysis aliasAnalysis;
  llvm::DenseMap<std::pair<Operation *, unsigned>, bool> written;
};

/// Records where the marked arguments' aligned pointers land once memref
/// arguments are expanded (allocated and aligned pointer, offset, then a
/// size and a stride per dim); nothing when an argument type has no known
/// expansion.
void recordLlvmPositions(func::FuncOp func) {
  SmallVector<int64_t> positions;
  int64_t next = 0;
  for (BlockArgument arg : func.getArguments()) {
    Type type = arg.getType();
    if (auto memref = dyn_cast<MemRefType>(type)) {
      if (func.getArgAttr(arg.getArgNumber(), disc::kNoAliasAttr))
        positions.push_back(next + 1);
      next += 3 + 2 * memref.getRank();
    } else if (isa<UnrankedMemRefType>(type)) {
      next += 2;
    } else if (type.isIntOrIndexOrFloat() || isa<LLVM::LLVMPointerType>(type)) {
      next += 1;
    } else {
      return;
    }
  }
  if (positions.empty())
    return;
  Builder b(func.getContext());
  func->setAttr(disc::kNoAliasLlvmArgsAttr, b.getDenseI64ArrayAttr(positions));
  func->setAttr(disc::kLlvmArgCountAttr, b.getI64IntegerAttr(next));
}

struct MarkNoAliasArgsPass
    : public disc::impl::DiscMarkNoAliasArgsBase<MarkNoAliasArgsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::DenseMap<Operation *, SmallVector<func::CallOp>> calls;
    module.walk([&](func::CallOp call) {
      if (auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee()))
        if (isMarkable(callee))
          calls[callee].push_back(call);
    });
    NoAliasMarker marker(module);
    // Kernels before parallel bodies: a body's callers are kernels, whose
    // marks it builds on.
    for (bool kernels : {true, false})
      for (auto func : module.getOps<func::FuncOp>())
        if (isMarkable(func) && func->hasAttr(disc::kKernelAttr) == kernels)
          marker.mark(func, calls[func]);
    for (auto func : module.getOps<func::FuncOp>())
      if (isMarkable(func))
        recordLlvmPositions(func);
  }
};

} // namespace
