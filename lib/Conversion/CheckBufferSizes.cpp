//===- CheckBufferSizes.cpp - check run-time sizes before allocation ------===//
#include "disc/Conversion/Passes.h"
#include "disc/Conversion/SizeChecks.h"
#include "disc/Dialect/Disc/DiscDialect.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace disc {
#define GEN_PASS_DEF_DISCCHECKBUFFERSIZES
#include "disc/Conversion/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

/// A size that describes a tensor that already exists (or a constant):
/// it was checked where that tensor was made.
bool isKnownSize(Value size) {
  return getConstantIntValue(size) || size.getDefiningOp<tensor::DimOp>();
}

struct CheckBufferSizesPass
    : public disc::impl::DiscCheckBufferSizesBase<CheckBufferSizesPass> {
  void runOnOperation() override {
    SmallVector<tensor::EmptyOp> empties;
    getOperation().walk([&](tensor::EmptyOp op) {
      if (!op->getParentOfType<LoopLikeOpInterface>() &&
          !llvm::all_of(op.getDynamicSizes(), isKnownSize))
        empties.push_back(op);
    });
    for (tensor::EmptyOp op : empties) {
      OpBuilder b(op);
      RankedTensorType type = op.getType();
      SmallVector<Value> sizes;
      for (OpFoldResult size : op.getMixedSizes())
        sizes.push_back(getValueOrCreateConstantIndexOp(b, op.getLoc(), size));
      Type element = type.getElementType();
      int64_t elementBytes =
          element.isIntOrFloat()
              ? std::max<int64_t>(element.getIntOrFloatBitWidth() / 8, 1)
              : 8; // index

      disc::emitCheckedElementCount(b, op.getLoc(), sizes, elementBytes,
                                    "tensor of " + Twine(type.getRank()) +
                                        " dims at " +
                                        disc::locationString(op.getLoc()));
    }
  }
};

} // namespace
