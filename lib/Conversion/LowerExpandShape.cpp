//===- LowerExpandShape.cpp - memref.expand_shape to reinterpret_cast -----===//
#include "disc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace disc {
#define GEN_PASS_DEF_DISCLOWEREXPANDSHAPE
#include "disc/Conversion/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

struct LowerExpandShapePass
    : public disc::impl::DiscLowerExpandShapeBase<LowerExpandShapePass> {
  void runOnOperation() override {
    SmallVector<memref::ExpandShapeOp> ops;
    getOperation().walk([&](memref::ExpandShapeOp op) { ops.push_back(op); });
    for (memref::ExpandShapeOp op : ops)
      if (failed(lower(op)))
        return signalPassFailure();
  }

  LogicalResult lower(memref::ExpandShapeOp op) {
    MemRefType resultType = op.getResultType();
    SmallVector<int64_t> staticStrides;
    int64_t staticOffset;
    if (failed(resultType.getStridesAndOffset(staticStrides, staticOffset)))
      return op.emitOpError("result layout is not strided");
    OpBuilder b(op);
    Location loc = op.getLoc();
    auto metadata =
        memref::ExtractStridedMetadataOp::create(b, loc, op.getSrc());
    SmallVector<OpFoldResult> sizes = op.getMixedOutputShape();
    SmallVector<OpFoldResult> strides(resultType.getRank());
    auto asValue = [&](OpFoldResult ofr) -> Value {
      if (auto value = dyn_cast<Value>(ofr))
        return value;
      return arith::ConstantIndexOp::create(
          b, loc, cast<IntegerAttr>(cast<Attribute>(ofr)).getInt());
    };
    for (auto [sourceDim, group] :
         llvm::enumerate(op.getReassociationIndices())) {
      Value stride = metadata.getStrides()[sourceDim];
      for (int64_t d : llvm::reverse(group)) {
        strides[d] = stride;
        stride = arith::MulIOp::create(b, loc, stride, asValue(sizes[d]));
      }
    }
    for (auto [d, s] : llvm::enumerate(staticStrides))
      if (!ShapedType::isDynamic(s))
        strides[d] = b.getIndexAttr(s);
    OpFoldResult offset =
        ShapedType::isDynamic(staticOffset)
            ? OpFoldResult(metadata.getOffset())
            : OpFoldResult(b.getIndexAttr(staticOffset));
    for (auto [d, size] : llvm::enumerate(sizes))
      if (!resultType.isDynamicDim(d))
        sizes[d] = b.getIndexAttr(resultType.getDimSize(d));
    auto cast = memref::ReinterpretCastOp::create(
        b, loc, resultType, metadata.getBaseBuffer(), offset, sizes, strides);
    op.getResult().replaceAllUsesWith(cast.getResult());
    op.erase();
    return success();
  }
};

} // namespace
