//===- VerifyCompilable.cpp - reject what verifies but cannot compile -----===//
//
// Checks the programs that upstream verifiers accept and later passes take
// on trust (see the pass description in Passes.td). Every failure is an
// error at the offending op; the pass changes nothing.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <limits>

namespace disc {
#define GEN_PASS_DEF_DISCVERIFYCOMPILABLE
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

/// Static tensors up to this many elements can be materialised (as a
/// constant, a buffer or an LLVM array type).
constexpr int64_t kMaxStaticElements = std::numeric_limits<int32_t>::max();

/// The element count of a static shape, or nullopt when it overflows.
std::optional<int64_t> staticElementCount(ShapedType type) {
  int64_t count = 1;
  for (int64_t size : type.getShape()) {
    if (ShapedType::isDynamic(size))
      continue;
    std::optional<int64_t> next = llvm::checkedMul(count, size);
    if (!next)
      return std::nullopt;
    count = *next;
  }
  return count;
}

LogicalResult checkType(Operation *op, Type type, StringRef what) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasRank())
    return success();
  std::optional<int64_t> count = staticElementCount(shaped);
  if (!count)
    return op->emitOpError() << what << " type " << type
                             << " has more elements than a 64-bit count holds";
  if (*count > kMaxStaticElements)
    return op->emitOpError()
           << what << " type " << type << " has " << *count
           << " elements in its static dims; DISC materialises at most "
           << kMaxStaticElements << " (make the dims dynamic)";
  return success();
}

/// A constant index (an `index` constant) within [0, bound).
LogicalResult checkConstantIndex(Operation *op, Value index, int64_t bound,
                                 const Twine &what) {
  APInt value;
  if (!matchPattern(index, m_ConstantInt(&value)))
    return success();
  int64_t v = value.getSExtValue();
  if (v >= 0 && v < bound)
    return success();
  return op->emitOpError() << what << " " << v << " is out of range [0, "
                           << bound << ")";
}

LogicalResult checkDimOp(Operation *op, Value source, Value index) {
  auto type = dyn_cast<ShapedType>(source.getType());
  if (!type || !type.hasRank())
    return success();
  return checkConstantIndex(op, index, type.getRank(),
                            "dim index of a rank-" + Twine(type.getRank()) +
                                " source");
}

LogicalResult checkElementIndices(Operation *op, Value source,
                                  ValueRange indices) {
  auto type = cast<ShapedType>(source.getType());
  for (auto [d, index] : llvm::enumerate(indices)) {
    if (type.isDynamicDim(d))
      continue;
    if (failed(checkConstantIndex(op, index, type.getDimSize(d),
                                  "index of dim " + Twine(d))))
      return failure();
  }
  return success();
}

/// Index constants (scalar or elements) must not be INT64_MIN.
LogicalResult checkIndexConstant(arith::ConstantOp op) {
  const int64_t marker = std::numeric_limits<int64_t>::min();
  Attribute value = op.getValue();
  auto isMarker = [&](const APInt &v) { return v.getSExtValue() == marker; };
  bool bad = false;
  if (auto i = dyn_cast<IntegerAttr>(value))
    bad = i.getType().isIndex() && isMarker(i.getValue());
  else if (auto dense = dyn_cast<DenseIntElementsAttr>(value))
    bad = dense.getElementType().isIndex() &&
          llvm::any_of(dense.getValues<APInt>(), isMarker);
  if (bad)
    return op.emitOpError()
           << "index value " << marker
           << " is MLIR's marker for a dynamic size; it is not a valid index";
  return success();
}

/// The op-specific checks (index operands).
LogicalResult checkOp(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([](arith::ConstantOp c) { return checkIndexConstant(c); })
      .Case([](tensor::DimOp d) {
        return checkDimOp(d, d.getSource(), d.getIndex());
      })
      .Case([](memref::DimOp d) {
        return checkDimOp(d, d.getSource(), d.getIndex());
      })
      .Case([](tensor::ExtractOp e) {
        return checkElementIndices(e, e.getTensor(), e.getIndices());
      })
      .Case([](tensor::InsertOp i) {
        return checkElementIndices(i, i.getDest(), i.getIndices());
      })
      .Default([](Operation *) { return success(); });
}

struct VerifyCompilablePass
    : public disc::impl::DiscVerifyCompilableBase<VerifyCompilablePass> {
  void runOnOperation() override {
    bool failedAny = false;
    getOperation()->walk([&](Operation *op) {
      for (Value v : op->getResults())
        failedAny |= failed(checkType(op, v.getType(), "result"));
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            failedAny |=
                failed(checkType(op, arg.getType(), "block argument"));
      failedAny |= failed(checkOp(op));
    });
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
