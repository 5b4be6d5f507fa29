//===- CudaLibraryCalls.cpp - library calls of the cuda target ------------===//
//
// See DiscCudaLibraryCalls in include/disc/Conversion/Cuda/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "disc/Conversion/Cuda/Passes.h"
#include "disc/Runtime/RalApi.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"

namespace disc {
#define GEN_PASS_DEF_DISCCUDALIBRARYCALLS
#include "disc/Conversion/Cuda/Passes.h.inc"
} // namespace disc

using namespace mlir;
using namespace disc;

namespace {

/// cuDNN's convolution and kernel gradient (lib/Runtime/Cuda/Cudnn.cpp)
/// take one padding per dim, and the kernel gradient no input dilation: checked
/// here on the constant parameters of `disc_ral_conv_<t>(ctx, input,
/// kernel, output, strides[3], padLo[3], padHi[3], dilations[3],
/// lhsDilations[3], groups)` and of `disc_ral_conv_backward_weights_<t>`
/// (the same positions; padding computed from shapes is checked when the
/// call runs). A convolution with input dilation (transposed) is cuDNN's
/// backward data, whose high padding may exceed the low one by less than
/// the input dilation (the output padding).
LogicalResult checkCudnnConvolution(func::CallOp call, bool kernelGradient) {
  constexpr unsigned kPadLo = 7, kPadHi = 10, kLhsDilation = 16;
  if (call.getNumOperands() != 20)
    return call.emitOpError() << "calls @" << call.getCallee()
                              << " with " << call.getNumOperands()
                              << " operands, expected 20";
  for (unsigned s = 0; s < 3; ++s) {
    std::optional<int64_t> lo = getConstantIntValue(call.getOperand(kPadLo + s));
    std::optional<int64_t> hi = getConstantIntValue(call.getOperand(kPadHi + s));
    std::optional<int64_t> lhsDilation =
        getConstantIntValue(call.getOperand(kLhsDilation + s));
    if (!lhsDilation || (kernelGradient && *lhsDilation != 1))
      return call.emitOpError()
             << "calls @" << call.getCallee()
             << " with input dilation, which the cuda target does not "
                "support";
    if (*lhsDilation != 1) {
      if (lo && hi && (*hi < *lo || *hi - *lo >= *lhsDilation))
        return call.emitOpError()
               << "calls @" << call.getCallee()
               << " with a transposed convolution's padding " << *lo
               << " and " << *hi
               << ": cuDNN's backward data needs the high padding from the "
                  "low one to it + "
               << *lhsDilation - 1;
      continue;
    }
    // Padding computed from shapes is checked by the runtime.
    if (lo && hi && *lo != *hi)
      return call.emitOpError()
             << "calls @" << call.getCallee()
             << " with padding that differs between the low and high side ("
             << *lo << " and " << *hi
             << "), which the cuda target does not support yet";
  }
  return success();
}

/// The step triples of a `_post_` call (RalApi.h): the f64 constant that
/// disc-lower-library-calls passes as `steps`.
FailureOr<SmallVector<double>> constantSteps(Value steps) {
  while (Operation *def = steps.getDefiningOp()) {
    if (isa<memref::CastOp, bufferization::ToBufferOp>(def)) {
      steps = def->getOperand(0);
      continue;
    }
    DenseFPElementsAttr values;
    if (!matchPattern(steps, m_Constant(&values)))
      return failure();
    SmallVector<double> triples;
    for (APFloat v : values.getValues<APFloat>())
      triples.push_back(v.convertToDouble());
    return triples;
  }
  return failure();
}

/// `disc_ral_matmul_post_<t>(ctx, a, b, c, transA, transB, steps, e0..e5)`
/// with the one step cuBLASLt takes (a bias add, disc-fuse-library-epilogues
/// `cublaslt`) -> `disc_ral_cuda_matmul_bias_<t>(ctx, a, b, c, transA,
/// transB, e0)`. The steps never reach the runtime: a host constant there
/// would become a device buffer.
LogicalResult lowerMatmulWithBias(func::CallOp call, StringRef suffix,
                                  SymbolTable &symbols) {
  constexpr unsigned kSteps = 6, kFirstOperand = 7;
  if (call.getNumOperands() != kFirstOperand + ral::kMaxEpilogueOperands)
    return call.emitOpError() << "calls @" << call.getCallee() << " with "
                              << call.getNumOperands() << " operands, expected "
                              << kFirstOperand + ral::kMaxEpilogueOperands;
  FailureOr<SmallVector<double>> steps =
      constantSteps(call.getOperand(kSteps));
  if (failed(steps) || steps->size() != 3 ||
      (*steps)[0] != (double)(int64_t)ral::PostOpKind::Add)
    return call.emitOpError()
           << "calls @" << call.getCallee()
           << " with an epilogue other than one bias add, which the cuda "
              "target does not support yet (cuBLASLt's epilogue runs one "
              "bias add here; disc-fuse-library-epilogues makes no other)";
  SmallVector<Value> operands(call.getOperands().take_front(kSteps));
  operands.push_back(call.getOperand(kFirstOperand));
  const std::string name = ("disc_ral_cuda_matmul_bias_" + suffix).str();
  auto declaration = symbols.lookup<func::FuncOp>(name);
  if (!declaration) {
    ModuleOp module = call->getParentOfType<ModuleOp>();
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    declaration = func::FuncOp::create(
        b, module.getLoc(), name,
        b.getFunctionType(ValueRange(operands).getTypes(), {}));
    declaration.setPrivate();
    declaration->setAttr("llvm.emit_c_interface", b.getUnitAttr());
    symbols.insert(declaration);
  }
  OpBuilder b(call);
  func::CallOp::create(b, call.getLoc(), declaration, operands);
  call.erase();
  return success();
}

struct CudaLibraryCallsPass
    : public disc::impl::DiscCudaLibraryCallsBase<CudaLibraryCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    WalkResult result = module.walk([&](func::CallOp call) {
      StringRef callee = call.getCallee();
      // Sorts become generated code (disc-cuda-sort-loops, after the loop
      // mapping).
      if (!callee.starts_with("disc_ral_") ||
          callee.starts_with("disc_ral_cuda_") ||
          callee.starts_with("disc_ral_sort_"))
        return WalkResult::advance();
      auto isFloatSuffix = [](StringRef s) {
        return s == "f32" || s == "f16" || s == "bf16";
      };
      StringRef rest = callee, kind;
      if (rest.consume_front("disc_ral_matmul_") && isFloatSuffix(rest))
        kind = "matmul";
      else if ((rest = callee).consume_front("disc_ral_matmul_post_") &&
               isFloatSuffix(rest))
        kind = "matmul_post"; // cuBLASLt's bias epilogue
      else if ((rest = callee).consume_front("disc_ral_conv_") &&
               isFloatSuffix(rest))
        kind = "conv";
      else if ((rest = callee).consume_front(
                   "disc_ral_conv_backward_weights_") &&
               isFloatSuffix(rest))
        kind = "conv_backward_weights";
      if (kind.empty()) {
        call.emitOpError() << "calls @" << call.getCallee()
                           << " (a library call), which the cuda target "
                              "does not support yet";
        return WalkResult::interrupt();
      }
      if (kind == "matmul_post")
        return failed(lowerMatmulWithBias(call, rest, symbols))
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      if (kind != "matmul" &&
          failed(checkCudnnConvolution(call, kind == "conv_backward_weights")))
        return WalkResult::interrupt();
      std::string name = ("disc_ral_cuda_" + kind + "_" + rest).str();
      auto declaration = symbols.lookup<func::FuncOp>(name);
      if (!declaration) {
        auto original = symbols.lookup<func::FuncOp>(call.getCallee());
        OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
        declaration = cast<func::FuncOp>(b.clone(*original));
        declaration.setSymName(name);
        symbols.insert(declaration);
      }
      call.setCallee(name);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    // The CPU declarations left without callers.
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>()))
      if (func.isExternal() && func.getSymName().starts_with("disc_ral_") &&
          !func.getSymName().starts_with("disc_ral_cuda_") &&
          func.symbolKnownUseEmpty(module))
        func.erase();
  }
};

} // namespace
