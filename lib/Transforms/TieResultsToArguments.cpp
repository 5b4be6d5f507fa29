//===- TieResultsToArguments.cpp - results written into entry arguments ---===//
//
// `disc.result_into = r` on an entry argument: result r is materialized in
// the argument's memory (bufferization.materialize_in_destination), so that
// one-shot bufferization computes it there when nothing reads the old value
// afterwards, and copies it there at the end otherwise.
//
//===----------------------------------------------------------------------===//
#include "disc/Dialect/Disc/DiscDialect.h"
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>

namespace disc {
#define GEN_PASS_DEF_DISCTIERESULTSTOARGUMENTS
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {
/// Whether `value` may share memory with `arg`: `arg` itself, or a value
/// that bufferizes to a view of it (a reshape, a slice) through any chain
/// of such ops. Ops that do not say how they alias count as aliasing each
/// tensor operand.
bool mayAlias(Value value, BlockArgument arg,
              const bufferization::AnalysisState &state) {
  SmallVector<Value> worklist{value};
  llvm::SmallPtrSet<Value, 8> seen;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (v == arg)
      return true;
    if (!seen.insert(v).second)
      continue;
    auto result = dyn_cast<OpResult>(v);
    if (!result)
      continue;
    Operation *op = result.getOwner();
    if (state.getOptions().dynCastBufferizableOp(op)) {
      for (const bufferization::AliasingOpOperand &alias :
           state.getAliasingOpOperands(result))
        worklist.push_back(alias.opOperand->get());
      continue;
    }
    for (Value operand : op->getOperands())
      if (isa<TensorType>(operand.getType()))
        worklist.push_back(operand);
  }
  return false;
}

struct TieResultsToArgumentsPass
    : public disc::impl::DiscTieResultsToArgumentsBase<
          TieResultsToArgumentsPass> {
  void runOnOperation() override {
    const StringRef attrName = disc::DiscDialect::kResultIntoAttrName;
    auto writable = BoolAttr::get(&getContext(), true);
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      // result index -> the argument it is written into
      std::map<int64_t, BlockArgument> into; // in result order
      for (BlockArgument arg : func.getArguments()) {
        auto index = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                        attrName);
        if (!index)
          continue;
        auto [it, inserted] = into.try_emplace(index.getInt(), arg);
        if (!inserted) {
          func.emitOpError() << "arguments " << it->second.getArgNumber()
                             << " and " << arg.getArgNumber()
                             << " both carry '" << attrName << " = "
                             << index.getInt() << "'";
          return signalPassFailure();
        }
      }
      if (into.empty())
        continue;
      if (!func->hasAttr(disc::kEntryAttr)) {
        func.emitOpError() << "'" << attrName
                           << "' is only supported on the entry function";
        return signalPassFailure();
      }
      if (!func.getBody().hasOneBlock()) {
        func.emitOpError() << "'" << attrName
                           << "' needs a function with one block";
        return signalPassFailure();
      }
      auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
      OpBuilder builder(ret);
      bufferization::BufferizationOptions options;
      bufferization::AnalysisState state(options);
      for (auto [r, arg] : into) {
        Value value = ret.getOperand(r);
        func.removeArgAttr(arg.getArgNumber(), attrName);
        // Another result that is (a view of) the argument holds its value
        // from before the call: writing the argument would change it, and
        // bufferization cannot copy a returned argument. The result is
        // returned in a buffer of its own instead; the caller copies it.
        bool aliased = false;
        for (OpOperand &other : ret->getOpOperands())
          if (other.getOperandNumber() != r &&
              mayAlias(other.get(), arg, state))
            aliased = true;
        if (aliased) {
          ret.emitRemark() << "result " << r << " is not written into argument "
                           << arg.getArgNumber()
                           << " in place: another result is a view of the "
                              "argument's value before the call";
          continue;
        }
        auto materialized = bufferization::MaterializeInDestinationOp::create(
            builder, ret.getLoc(), value, arg);
        ret.setOperand(r, materialized.getResult());
        func.setArgAttr(arg.getArgNumber(),
                        bufferization::BufferizationDialect::kWritableAttrName,
                        writable);
      }
    }
  }
};
} // namespace
