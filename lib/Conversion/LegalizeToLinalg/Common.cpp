//===- Common.cpp - LegalizeToLinalg's shared helpers --------------------===//
#include "Common.h"

using namespace mlir;
using namespace disc;
using namespace disc::legalize;

namespace disc::legalize {

Value cIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

bool isUnsignedLike(Type t) {
  auto it = dyn_cast<IntegerType>(t);
  return it && (it.isUnsigned() || it.getWidth() == 1);
}

/// Signless version of an element type (ui8 -> i8) for arith ops.
Type signless(Type t) {
  if (auto it = dyn_cast<IntegerType>(t))
    return IntegerType::get(t.getContext(), it.getWidth());
  return t;
}

RankedTensorType signlessTensor(Type t) {
  auto tt = cast<RankedTensorType>(t);
  return RankedTensorType::get(tt.getShape(), signless(tt.getElementType()));
}

/// Slice sizes for a tensor of `type`: static dims as attributes (so that
/// slice ops infer/verify the static type), dynamic dims as `dims`.
SmallVector<OpFoldResult> mixedSizes(OpBuilder &b, RankedTensorType type,
                                     ArrayRef<Value> dims) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t i = 0; i < type.getRank(); ++i)
    sizes.push_back(type.isDynamicDim(i)
                        ? OpFoldResult(dims[i])
                        : OpFoldResult(b.getIndexAttr(type.getDimSize(i))));
  return sizes;
}

/// `v` as type `t` through an unrealized cast (signed/unsigned integer
/// tensors <-> signless ones); `v` itself when it already has type `t`.
Value castTo(OpBuilder &b, Location loc, Value v, Type t) {
  if (v.getType() == t)
    return v;
  return UnrealizedConversionCastOp::create(b, loc, t, v).getResult(0);
}

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type,
                  ArrayRef<Value> dims) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType(),
                                 disc::dynamicSizes(type, dims));
}


void assertTrue(OpBuilder &b, Location loc, Value cond, const Twine &message) {
  if (auto c = getConstantIntValue(cond); c && *c)
    return;
  cf::AssertOp::create(b, loc, cond, message.str());
}

Value product(OpBuilder &b, Location loc, ArrayRef<Value> dims) {
  Value p = cIndex(b, loc, 1);
  for (Value d : dims)
    p = arith::MulIOp::create(b, loc, p, d);
  return p;
}

} // namespace disc::legalize
