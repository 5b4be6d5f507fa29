//===- ProfileCalls.cpp - time kernels and library calls ------------------===//
//
// DISC_PROFILE=1: brackets every kernel call, library call and copy of the
// entry function with the runtime's profiling hooks, naming each by its
// callee and source location. On the cuda target kernels are launches
// (gpu.launch_func) and library calls are asynchronous: the time is the
// host's cost of issuing them.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace disc {
#define GEN_PASS_DEF_DISCPROFILECALLS
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kBeginHook = "disc_ral_profile_begin";
constexpr llvm::StringLiteral kEndHook = "disc_ral_profile_end";

/// "file:line:col" of the first file location inside `loc`, or "".
std::string describeLocation(Location loc) {
  std::string text;
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      text = (file.getFilename().getValue() + ":" + Twine(file.getLine()) +
              ":" + Twine(file.getColumn()))
                 .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return text;
}

/// The profile name of `op` ("loop main_kernel_3 at f.mlir:4:5"), or ""
/// when `op` is not something the profile times.
std::string profileName(Operation *op, ModuleOp module) {
  std::string what;
  if (auto call = dyn_cast<func::CallOp>(op)) {
    StringRef callee = call.getCallee();
    if (callee == kBeginHook || callee == kEndHook)
      return "";
    auto target = module.lookupSymbol<func::FuncOp>(callee);
    if (target && target->hasAttr(disc::kKernelAttr))
      what = ("loop " + callee).str();
    else if (callee.starts_with("disc_ral_"))
      what = ("library " + callee.drop_front(strlen("disc_ral_"))).str();
    else
      return "";
  } else if (isa<memref::CopyOp>(op)) {
    what = "copy";
  } else if (op->getName().getStringRef() == "gpu.launch_func") {
    // The cuda target (matched by name: this pass knows no GPU dialect).
    // The launch is asynchronous: what is timed is its host cost.
    auto kernel = op->getAttrOfType<SymbolRefAttr>("kernel");
    what = ("kernel " +
            (kernel ? kernel.getLeafReference().getValue() : "<unnamed>"))
               .str();
  } else {
    return "";
  }
  std::string where = describeLocation(op->getLoc());
  return where.empty() ? what : what + " at " + where;
}

func::FuncOp declareHook(ModuleOp module, StringRef name) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  auto ptr = LLVM::LLVMPointerType::get(module.getContext());
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto hook = func::FuncOp::create(
      b, module.getLoc(), name,
      FunctionType::get(module.getContext(), {ptr, ptr}, {}));
  hook.setPrivate();
  return hook;
}

struct ProfileCallsPass
    : public disc::impl::DiscProfileCallsBase<ProfileCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (!func->hasAttr(disc::kEntryAttr) || func.isExternal())
        continue;
      if (func.getNumArguments() == 0 ||
          !func.getArgAttr(0, disc::kRalContextAttr)) {
        func.emitOpError("has no RAL context argument to profile with; run "
                         "disc-add-ral-context first");
        return signalPassFailure();
      }
      SmallVector<std::pair<Operation *, std::string>> timed;
      func.walk([&](Operation *op) {
        std::string name = profileName(op, module);
        if (!name.empty())
          timed.push_back({op, std::move(name)});
      });
      if (timed.empty())
        continue;
      func::FuncOp begin = declareHook(module, kBeginHook);
      func::FuncOp end = declareHook(module, kEndHook);
      Value ctx = func.getArgument(0);
      // One constant global per distinct name (two calls at one location
      // share it).
      llvm::StringMap<LLVM::GlobalOp> globals;
      for (auto &[op, name] : timed) {
        Location loc = op->getLoc();
        LLVM::GlobalOp &global = globals[name];
        if (!global) {
          OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
          std::string bytes = name + '\0';
          auto type = LLVM::LLVMArrayType::get(
              IntegerType::get(&getContext(), 8), bytes.size());
          global = LLVM::GlobalOp::create(
              top, loc, type, /*isConstant=*/true, LLVM::Linkage::Internal,
              ("disc_profile_name_" + Twine(globals.size() - 1)).str(),
              top.getStringAttr(bytes));
        }
        OpBuilder b(op);
        Value text = LLVM::AddressOfOp::create(b, loc, global);
        func::CallOp::create(b, loc, begin, ValueRange{ctx, text});
        b.setInsertionPointAfter(op);
        func::CallOp::create(b, loc, end, ValueRange{ctx, text});
      }
    }
  }
};

} // namespace
