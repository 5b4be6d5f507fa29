//===- PrintShapeConstraints.cpp - test pass for ShapeConstraints ---------===//
#include "disc/Analysis/ShapeConstraints.h"
#include "disc/Transforms/Passes.h"
#include "disc/Dialect/Disc/DiscDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

namespace disc {
#define GEN_PASS_DEF_DISCPRINTSHAPECONSTRAINTS
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {
/// For each function, prints one line per tensor argument/result dim:
///   "@f %argN dim D -> class C (static S | dynamic)"
/// where classes are renumbered in order of first appearance.
struct PrintShapeConstraintsPass
    : public disc::impl::DiscPrintShapeConstraintsBase<
          PrintShapeConstraintsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      disc::ShapeConstraints constraints(func);
      llvm::DenseMap<int64_t, int64_t> renumber;
      auto print = [&](StringRef what, Value v) {
        auto type = dyn_cast<RankedTensorType>(v.getType());
        if (!type)
          return;
        for (int64_t d = 0; d < type.getRank(); ++d) {
          int64_t c = constraints.classOf(v, d);
          int64_t id = renumber.try_emplace(c, renumber.size()).first->second;
          int64_t size = constraints.staticSizeOf(c);
          llvm::outs() << "@" << func.getSymName() << " " << what << " dim "
                       << d << " -> class " << id;
          if (ShapedType::isDynamic(size))
            llvm::outs() << " dynamic\n";
          else
            llvm::outs() << " static " << size << "\n";
        }
      };
      for (auto arg : func.getArguments())
        print(("%arg" + Twine(arg.getArgNumber())).str(), arg);
      // Reshapes: the dim groups the products prove, in program order.
      unsigned reshapeIndex = 0;
      func.walk([&](Operation *op) {
        if (!isa<disc::ReshapeOp, disc::DynamicReshapeOp>(op))
          return;
        llvm::outs() << "@" << func.getSymName() << " reshape "
                     << reshapeIndex++ << " groups ";
        auto groups =
            constraints.reshapeGroups(op->getOperand(0), op->getResult(0));
        if (!groups) {
          llvm::outs() << "unproven\n";
          return;
        }
        llvm::outs() << "[";
        llvm::interleaveComma(*groups, llvm::outs(), [&](auto &group) {
          llvm::outs() << "[";
          llvm::interleaveComma(group, llvm::outs());
          llvm::outs() << "]";
        });
        llvm::outs() << "]\n";
      });
      func.walk([&](func::ReturnOp ret) {
        for (auto [i, v] : llvm::enumerate(ret.getOperands()))
          print(("result" + Twine(i)).str(), v);
      });
    }
  }
};
} // namespace
