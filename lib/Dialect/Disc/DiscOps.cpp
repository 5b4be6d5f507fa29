//===- DiscOps.cpp - disc op verifiers, folders and shape functions -------===//
#include "disc/Dialect/Disc/DiscDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace disc;

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

static Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

SmallVector<Value> disc::getDims(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<Value> dims;
  for (int64_t i = 0, e = type.getRank(); i < e; ++i) {
    if (type.isDynamicDim(i))
      dims.push_back(tensor::DimOp::create(b, loc, value, i));
    else
      dims.push_back(indexConst(b, loc, type.getDimSize(i)));
  }
  return dims;
}

SmallVector<Value> disc::getShapeElements(OpBuilder &b, Location loc,
                                          Value shape) {
  auto type = cast<RankedTensorType>(shape.getType());
  SmallVector<Value> elements;
  if (auto fromElements = shape.getDefiningOp<tensor::FromElementsOp>()) {
    for (Value v : fromElements.getElements())
      elements.push_back(v.getType().isIndex()
                             ? v
                             : arith::IndexCastOp::create(b, loc,
                                                          b.getIndexType(), v)
                                   .getResult());
    return elements;
  }
  for (int64_t i = 0, e = type.getDimSize(0); i < e; ++i) {
    Value v = tensor::ExtractOp::create(b, loc, shape,
                                        ValueRange{indexConst(b, loc, i)});
    if (!v.getType().isIndex())
      v = arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
    elements.push_back(v);
  }
  return elements;
}

static LogicalResult packShape(OpBuilder &b, Location loc, ValueRange dims,
                               SmallVectorImpl<Value> &shapes) {
  shapes.push_back(tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({(int64_t)dims.size()}, b.getIndexType()),
      dims));
  return success();
}

LogicalResult disc::reifyShapeOf(OpBuilder &b, Location loc, Value value,
                                 SmallVectorImpl<Value> &shapes) {
  return packShape(b, loc, getDims(b, loc, value), shapes);
}

FailureOr<SmallVector<Value>> disc::reifyResultDims(OpBuilder &b, Operation *op,
                                                    unsigned resultIndex) {
  auto iface = dyn_cast<InferShapedTypeOpInterface>(op);
  if (!iface)
    return failure();
  SmallVector<Value> shapes;
  if (failed(iface.reifyReturnTypeShapes(b, op->getOperands(), shapes)) ||
      shapes.size() <= resultIndex)
    return failure();
  return getShapeElements(b, op->getLoc(), shapes[resultIndex]);
}

static LogicalResult staticShape(OpBuilder &b, Location loc, Type type,
                                 SmallVectorImpl<Value> &shapes) {
  auto tensorType = cast<RankedTensorType>(type);
  if (!tensorType.hasStaticShape())
    return failure();
  SmallVector<Value> dims;
  for (int64_t d : tensorType.getShape())
    dims.push_back(indexConst(b, loc, d));
  return packShape(b, loc, dims, shapes);
}

/// Checks a static dim against an expected value; dynamic dims always pass.
static bool compatibleDim(int64_t actual, int64_t expected) {
  return ShapedType::isDynamic(actual) || ShapedType::isDynamic(expected) ||
         actual == expected;
}

static LogicalResult checkDimsInRange(Operation *op, ArrayRef<int64_t> dims,
                                      int64_t rank, StringRef what,
                                      bool unique = true) {
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t d : dims) {
    if (d < 0 || d >= rank)
      return op->emitOpError() << what << " dim " << d
                               << " is out of range for rank " << rank;
    if (unique && !seen.insert(d).second)
      return op->emitOpError() << what << " dim " << d << " appears twice";
  }
  return success();
}

/// The batch dims of a gather's result or a scatter's updates (the dims not
/// in `windowDims`) are, in order, the indices' dims with the index vector
/// dim left out: a static size that differs would have the compiled code
/// read indices past their end.
static LogicalResult
checkBatchDimsMatchIndices(Operation *op, ShapedType valuesType,
                           StringRef valuesName, ArrayRef<int64_t> windowDims,
                           ShapedType indicesType, StringRef indicesName,
                           int64_t indexVectorDim) {
  int64_t nextBatch = 0;
  for (int64_t i = 0; i < valuesType.getRank(); ++i) {
    if (llvm::is_contained(windowDims, i))
      continue;
    int64_t indicesDim =
        nextBatch < indexVectorDim ? nextBatch : nextBatch + 1;
    ++nextBatch;
    int64_t expected = indicesType.getDimSize(indicesDim);
    int64_t actual = valuesType.getDimSize(i);
    if (!compatibleDim(actual, expected))
      return op->emitOpError()
             << valuesName << " dim " << i << " is " << actual
             << " but is a batch dim of size " << expected << " ("
             << indicesName << " dim " << indicesDim << ")";
  }
  return success();
}

/// The elements of a 1-D shape operand known at compile time: all of a
/// constant's, those of a tensor.from_elements that are constants (the
/// others nullopt); empty when neither.
static SmallVector<std::optional<int64_t>> constantShapeElements(Value shape) {
  SmallVector<std::optional<int64_t>> elements;
  DenseIntElementsAttr values;
  if (matchPattern(shape, m_Constant(&values))) {
    for (const APInt &value : values.getValues<APInt>())
      elements.push_back(value.getSExtValue());
  } else if (auto fromElements =
                 shape.getDefiningOp<tensor::FromElementsOp>()) {
    for (Value v : fromElements.getElements())
      elements.push_back(getConstantIntValue(v));
  }
  return elements;
}

/// Checks a shape-like operand (a 1-d index tensor): its length, and that
/// every element known at compile time (constantShapeElements) is at least
/// `minValue`. Such elements reach static type and slice lists in the
/// lowering, where a negative size or INT64_MIN (MLIR's marker for a
/// dynamic entry) is undefined, so they are rejected here rather than at
/// run time.
static LogicalResult checkShapeOperand(Operation *op, Value shape,
                                       int64_t expectedLength, StringRef what,
                                       int64_t minValue = 0) {
  auto type = cast<RankedTensorType>(shape.getType());
  if (!compatibleDim(type.getDimSize(0), expectedLength))
    return op->emitOpError() << what << " has " << type.getDimSize(0)
                             << " elements, expected " << expectedLength;
  for (auto [i, element] : llvm::enumerate(constantShapeElements(shape))) {
    if (!element)
      continue;
    int64_t v = *element;
    if (v < minValue || v == std::numeric_limits<int64_t>::min())
      return op->emitOpError()
             << what << " element " << i << " is " << v << "; it must be "
             << (minValue == std::numeric_limits<int64_t>::min() + 1
                     ? "a size, not INT64_MIN"
                     : ">= " + std::to_string(minValue));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult SelectOp::verify() {
  auto predType = getPred().getType();
  auto resultType = cast<RankedTensorType>(getResult().getType());
  if (predType.getRank() != 0 &&
      failed(verifyCompatibleShape(predType, resultType)))
    return emitOpError() << "pred shape " << predType
                         << " must be rank 0 or match the operand shape "
                         << resultType;
  return success();
}

LogicalResult SelectOp::reifyReturnTypeShapes(OpBuilder &b, ValueRange operands,
                                              SmallVectorImpl<Value> &shapes) {
  return reifyShapeOf(b, getLoc(), operands[1], shapes);
}

LogicalResult ClampOp::verify() {
  auto operandType = getOperand().getType();
  for (auto [name, bound] : {std::pair<StringRef, Value>{"min", getMin()},
                             {"max", getMax()}}) {
    auto type = cast<RankedTensorType>(bound.getType());
    if (type.getRank() != 0 &&
        failed(verifyCompatibleShape(type, operandType)))
      return emitOpError() << name << " must be rank 0 or have the operand's "
                           << "shape, got " << type;
  }
  return success();
}

LogicalResult ClampOp::reifyReturnTypeShapes(OpBuilder &b, ValueRange operands,
                                             SmallVectorImpl<Value> &shapes) {
  return reifyShapeOf(b, getLoc(), operands[1], shapes);
}

OpFoldResult ConvertOp::fold(FoldAdaptor) {
  if (getOperand().getType() == getType())
    return getOperand();
  return {};
}

static bool isSplatConstant(Attribute attr, double fvalue, int64_t ivalue) {
  auto splat = llvm::dyn_cast_if_present<SplatElementsAttr>(attr);
  if (!splat)
    return false;
  Type elementType = splat.getElementType();
  if (isa<FloatType>(elementType))
    return splat.getSplatValue<APFloat>().convertToDouble() == fvalue &&
           !(fvalue == 0.0 && splat.getSplatValue<APFloat>().isNegative());
  if (auto intType = dyn_cast<IntegerType>(elementType))
    return splat.getSplatValue<APInt>().getSExtValue() == ivalue &&
           intType.getWidth() > 1;
  return false;
}

/// The constant `value` is, or a broadcast of: `known` when the folder already
/// has it, else the splat operand of a (dynamic_)broadcast_in_dim. PyTorch's
/// decompositions write `x * 1` and `x * alpha` with a broadcast scalar.
static Attribute constantThroughBroadcast(Value value, Attribute known) {
  if (known)
    return known;
  Operation *def = value.getDefiningOp();
  if (!def || !isa<BroadcastInDimOp, DynamicBroadcastInDimOp>(def))
    return {};
  Attribute operand;
  if (!matchPattern(def->getOperand(0), m_Constant(&operand)))
    return {};
  return operand;
}

/// The operand that `op` returns unchanged when the other one is the
/// identity element (a splat `identity`, possibly broadcast), or null.
template <typename BinaryOp>
static Value foldIdentityOperand(BinaryOp op, Attribute lhs, Attribute rhs,
                                 llvm::function_ref<bool(Attribute)> identity) {
  if (identity(constantThroughBroadcast(op.getRhs(), rhs)) &&
      op.getLhs().getType() == op.getType())
    return op.getLhs();
  if (identity(constantThroughBroadcast(op.getLhs(), lhs)) &&
      op.getRhs().getType() == op.getType())
    return op.getRhs();
  return {};
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  // x + 0 -> x for integers; x + (-0.0) -> x for floats (x + 0.0 is not an
  // identity when x is -0.0).
  return foldIdentityOperand(
      *this, adaptor.getLhs(), adaptor.getRhs(), [](Attribute attr) {
        auto splat = llvm::dyn_cast_if_present<SplatElementsAttr>(attr);
        if (!splat)
          return false;
        if (isa<FloatType>(splat.getElementType())) {
          APFloat v = splat.getSplatValue<APFloat>();
          return v.isZero() && v.isNegative();
        }
        return isSplatConstant(attr, 0.0, 0);
      });
}

namespace {
/// x + scatter_add(zeros, indices, updates) -> scatter_add(x, indices,
/// updates): the updates added into x itself, with no table of zeros to
/// fill and no second pass over it. An embedding used twice, or tied to an
/// output projection, has its gradients summed this way: two
/// embedding_dense_backward scatters into zeros [vocab, d] and an add, or
/// one and a matmul's gradient. Each element's sum is reassociated (x
/// first, then the updates in order) and an element no update reaches is x
/// itself where it was 0 + x (-0.0 stays -0.0): the rounding of a sum, as
/// any reordering of it. Only where the scatter has no other user.
struct FoldAddIntoScatterOfZeros : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rewriter) const override {
    for (unsigned i = 0; i < 2; ++i) {
      auto scatter = op->getOperand(i).getDefiningOp<ScatterOp>();
      if (!scatter || scatter.getKind() != ScatterKind::Add ||
          !scatter->hasOneUse())
        continue;
      Value table = scatter.getOperand();
      Attribute known;
      matchPattern(table, m_Constant(&known));
      if (!isSplatConstant(constantThroughBroadcast(table, known), 0.0, 0))
        continue;
      Value other = op->getOperand(1 - i);
      rewriter.setInsertionPoint(op);
      auto folded = cast<ScatterOp>(rewriter.clone(*scatter));
      folded.getOperandMutable().assign(other);
      rewriter.replaceOp(op, folded.getResult());
      rewriter.eraseOp(scatter);
      return success();
    }
    return failure();
  }
};
} // namespace

void AddOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                        MLIRContext *context) {
  results.add<FoldAddIntoScatterOfZeros>(context);
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  return foldIdentityOperand(
      *this, adaptor.getLhs(), adaptor.getRhs(),
      [](Attribute attr) { return isSplatConstant(attr, 1.0, 1); });
}

//===----------------------------------------------------------------------===//
// Constant / iota
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange, DictionaryAttr attrs,
    OpaqueProperties properties, RegionRange,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  ConstantOpAdaptor adaptor(ValueRange{}, attrs, properties);
  auto value = adaptor.getValue();
  if (!value)
    return failure();
  inferredReturnTypes.push_back(value.getType());
  return success();
}

LogicalResult ConstantOp::verify() {
  auto type = dyn_cast<RankedTensorType>(getValue().getType());
  if (!type || !type.hasStaticShape())
    return emitOpError("value must be a statically shaped tensor");
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult ThreadScratchOp::verify() {
  // I64Attr's getter is unsigned: read the signed value.
  const int64_t slot = getSlotAttr().getInt();
  if (slot < 0)
    return emitOpError() << "slot must be >= 0, got " << slot;
  auto type = cast<MemRefType>(getBuffer().getType());
  if (!type.getLayout().isIdentity() || !type.isDynamicDim(0))
    return emitOpError("result must be memref<?xi8> (identity layout, "
                       "dynamic size)");
  return success();
}

LogicalResult IotaOp::verify() {
  auto type = cast<RankedTensorType>(getType());
  if (!type.hasStaticShape())
    return emitOpError("result must be statically shaped; use "
                       "disc.dynamic_iota for dynamic shapes");
  if (getIotaDimension() < 0 || getIotaDimension() >= type.getRank())
    return emitOpError() << "iota_dimension " << getIotaDimension()
                         << " is out of range for rank " << type.getRank();
  return success();
}

LogicalResult IotaOp::reifyReturnTypeShapes(OpBuilder &b, ValueRange,
                                            SmallVectorImpl<Value> &shapes) {
  return staticShape(b, getLoc(), getType(), shapes);
}

LogicalResult DynamicIotaOp::verify() {
  auto type = cast<RankedTensorType>(getType());
  if (getIotaDimension() < 0 || getIotaDimension() >= type.getRank())
    return emitOpError() << "iota_dimension " << getIotaDimension()
                         << " is out of range for rank " << type.getRank();
  return checkShapeOperand(*this, getOutputShape(), type.getRank(),
                           "output_shape");
}

LogicalResult
DynamicIotaOp::reifyReturnTypeShapes(OpBuilder &b, ValueRange operands,
                                     SmallVectorImpl<Value> &shapes) {
  return packShape(b, getLoc(), getShapeElements(b, getLoc(), operands[0]),
                   shapes);
}

//===----------------------------------------------------------------------===//
// Broadcast
//===----------------------------------------------------------------------===//

static LogicalResult verifyBroadcastDims(Operation *op,
                                         RankedTensorType operandType,
                                         RankedTensorType resultType,
                                         ArrayRef<int64_t> dims) {
  if ((int64_t)dims.size() != operandType.getRank())
    return op->emitOpError() << "broadcast_dimensions has " << dims.size()
                             << " entries, expected the operand rank "
                             << operandType.getRank();
  if (failed(checkDimsInRange(op, dims, resultType.getRank(),
                              "broadcast_dimensions")))
    return failure();
  for (auto [i, d] : llvm::enumerate(dims)) {
    int64_t in = operandType.getDimSize(i), out = resultType.getDimSize(d);
    if (!ShapedType::isDynamic(in) && in != 1 && !compatibleDim(in, out))
      return op->emitOpError() << "operand dim " << i << " (" << in
                               << ") cannot broadcast to result dim " << d
                               << " (" << out << ")";
  }
  return success();
}

LogicalResult BroadcastInDimOp::verify() {
  auto resultType = cast<RankedTensorType>(getType());
  if (!resultType.hasStaticShape())
    return emitOpError("result must be statically shaped; use "
                       "disc.dynamic_broadcast_in_dim for dynamic shapes");
  return verifyBroadcastDims(*this, getOperand().getType(), resultType,
                             getBroadcastDimensions());
}

LogicalResult
BroadcastInDimOp::reifyReturnTypeShapes(OpBuilder &b, ValueRange,
                                        SmallVectorImpl<Value> &shapes) {
  return staticShape(b, getLoc(), getType(), shapes);
}

OpFoldResult BroadcastInDimOp::fold(FoldAdaptor adaptor) {
  if (auto splat =
          llvm::dyn_cast_if_present<SplatElementsAttr>(adaptor.getOperand()))
    return SplatElementsAttr::get(cast<ShapedType>(getType()),
                                  splat.getSplatValue<Attribute>());
  if (getOperand().getType() == getType() &&
      llvm::equal(getBroadcastDimensions(),
                  llvm::seq<int64_t>(0, getType().getRank())))
    return getOperand();
  return {};
}

LogicalResult DynamicBroadcastInDimOp::verify() {
  auto resultType = cast<RankedTensorType>(getType());
  if (failed(checkShapeOperand(*this, getOutputDimensions(),
                               resultType.getRank(), "output_dimensions")))
    return failure();
  if (failed(verifyBroadcastDims(*this, getOperand().getType(), resultType,
                                 getBroadcastDimensions())))
    return failure();
  if (auto known = getKnownNonexpandingDimensions()) {
    auto operandType = getOperand().getType();
    if (failed(checkDimsInRange(*this, *known, operandType.getRank(),
                                "known_nonexpanding_dimensions")))
      return failure();
    for (int64_t d : *known) {
      int64_t in = operandType.getDimSize(d);
      int64_t out = resultType.getDimSize(getBroadcastDimensions()[d]);
      if (!compatibleDim(in, out))
        return emitOpError() << "operand dim " << d << " (" << in
                             << ") is declared non-expanding but the result "
                                "dim is "
                             << out;
    }
  }
  return success();
}

LogicalResult DynamicBroadcastInDimOp::reifyReturnTypeShapes(
    OpBuilder &b, ValueRange operands, SmallVectorImpl<Value> &shapes) {
  return packShape(b, getLoc(), getShapeElements(b, getLoc(), operands[1]),
                   shapes);
}

//===----------------------------------------------------------------------===//
// Reshape
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto operandType = getOperand().getType();
  auto resultType = cast<RankedTensorType>(getType());
  if (!resultType.hasStaticShape())
    return emitOpError("result must be statically shaped; use "
                       "disc.dynamic_reshape for dynamic shapes");
  if (operandType.hasStaticShape() &&
      operandType.getNumElements() != resultType.getNumElements())
    return emitOpError() << "operand has " << operandType.getNumElements()
                         << " elements but the result has "
                         << resultType.getNumElements();
  return success();
}

LogicalResult ReshapeOp::reifyReturnTypeShapes(OpBuilder &b, ValueRange,
                                               SmallVectorImpl<Value> &shapes) {
  return staticShape(b, getLoc(), getType(), shapes);
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getOperand().getType() == getType())
    return getOperand();
  if (auto dense =
          llvm::dyn_cast_if_present<DenseElementsAttr>(adaptor.getOperand()))
    return dense.reshape(cast<ShapedType>(getType()));
  return {};
}

LogicalResult DynamicReshapeOp::verify() {
  auto operandType = getOperand().getType();
  auto resultType = cast<RankedTensorType>(getType());
  if (failed(checkShapeOperand(*this, getOutputShape(), resultType.getRank(),
                               "output_shape")))
    return failure();
  if (operandType.hasStaticShape() && resultType.hasStaticShape() &&
      operandType.getNumElements() != resultType.getNumElements())
    return emitOpError() << "operand has " << operandType.getNumElements()
                         << " elements but the result has "
                         << resultType.getNumElements();
  return success();
}

LogicalResult
DynamicReshapeOp::reifyReturnTypeShapes(OpBuilder &b, ValueRange operands,
                                        SmallVectorImpl<Value> &shapes) {
  return packShape(b, getLoc(), getShapeElements(b, getLoc(), operands[1]),
                   shapes);
}

//===----------------------------------------------------------------------===//
// Reverse
//===----------------------------------------------------------------------===//

LogicalResult ReverseOp::verify() {
  return checkDimsInRange(*this, getDimensions(), getType().getRank(),
                          "dimensions");
}

OpFoldResult ReverseOp::fold(FoldAdaptor) {
  // Reversing nothing, or only dims of size 1, is the identity.
  auto type = getType();
  if (llvm::all_of(getDimensions(),
                   [&](int64_t d) { return type.getDimSize(d) == 1; }))
    return getOperand();
  return {};
}

//===----------------------------------------------------------------------===//
// Transpose
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::verify() {
  auto operandType = getOperand().getType();
  auto resultType = cast<RankedTensorType>(getType());
  ArrayRef<int64_t> perm = getPermutation();
  if ((int64_t)perm.size() != operandType.getRank() ||
      resultType.getRank() != operandType.getRank())
    return emitOpError() << "permutation size " << perm.size()
                         << ", operand rank and result rank must agree";
  if (failed(checkDimsInRange(*this, perm, operandType.getRank(),
                              "permutation")))
    return failure();
  for (auto [i, p] : llvm::enumerate(perm))
    if (!compatibleDim(resultType.getDimSize(i), operandType.getDimSize(p)))
      return emitOpError() << "result dim " << i << " ("
                           << resultType.getDimSize(i)
                           << ") does not match operand dim " << p << " ("
                           << operandType.getDimSize(p) << ")";
  return success();
}

LogicalResult TransposeOp::reifyReturnTypeShapes(
    OpBuilder &b, ValueRange operands, SmallVectorImpl<Value> &shapes) {
  SmallVector<Value> in = getDims(b, getLoc(), operands[0]), out;
  for (int64_t p : getPermutation())
    out.push_back(in[p]);
  return packShape(b, getLoc(), out, shapes);
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  if (getOperand().getType() == getType() &&
      llvm::equal(getPermutation(),
                  llvm::seq<int64_t>(0, getType().getRank())))
    return getOperand();
  return {};
}

//===----------------------------------------------------------------------===//
// Slice
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::verify() {
  auto operandType = getOperand().getType();
  auto resultType = cast<RankedTensorType>(getType());
  int64_t rank = operandType.getRank();
  auto start = getStartIndices(), limit = getLimitIndices(),
       strides = getStrides();
  if ((int64_t)start.size() != rank || (int64_t)limit.size() != rank ||
      (int64_t)strides.size() != rank || resultType.getRank() != rank)
    return emitOpError("start, limit, strides and result rank must all equal "
                       "the operand rank");
  for (int64_t i = 0; i < rank; ++i) {
    if (strides[i] <= 0)
      return emitOpError() << "stride " << i << " must be positive";
    if (start[i] < 0 || limit[i] < start[i])
      return emitOpError() << "dim " << i << ": need 0 <= start <= limit, got "
                           << start[i] << ", " << limit[i];
    if (!ShapedType::isDynamic(operandType.getDimSize(i)) &&
        limit[i] > operandType.getDimSize(i))
      return emitOpError() << "dim " << i << ": limit " << limit[i]
                           << " exceeds the operand size "
                           << operandType.getDimSize(i);
    int64_t size = (limit[i] - start[i] + strides[i] - 1) / strides[i];
    if (!compatibleDim(resultType.getDimSize(i), size))
      return emitOpError() << "result dim " << i << " must be " << size;
  }
  return success();
}

LogicalResult SliceOp::reifyReturnTypeShapes(OpBuilder &b, ValueRange,
                                             SmallVectorImpl<Value> &shapes) {
  SmallVector<Value> dims;
  for (auto [s, l, st] :
       llvm::zip(getStartIndices(), getLimitIndices(), getStrides()))
    dims.push_back(indexConst(b, getLoc(), (l - s + st - 1) / st));
  return packShape(b, getLoc(), dims, shapes);
}

LogicalResult RealDynamicSliceOp::verify() {
  int64_t rank = getOperand().getType().getRank();
  if (cast<RankedTensorType>(getType()).getRank() != rank)
    return emitOpError("result rank must equal the operand rank");
  if (failed(checkShapeOperand(*this, getStartIndices(), rank,
                               "start_indices")) ||
      failed(checkShapeOperand(*this, getLimitIndices(), rank,
                               "limit_indices")) ||
      failed(checkShapeOperand(*this, getStrides(), rank, "strides",
                               /*minValue=*/1)))
    return failure();
  return success();
}

LogicalResult
RealDynamicSliceOp::reifyReturnTypeShapes(OpBuilder &b, ValueRange operands,
                                          SmallVectorImpl<Value> &shapes) {
  Location loc = getLoc();
  auto start = getShapeElements(b, loc, operands[1]);
  auto limit = getShapeElements(b, loc, operands[2]);
  auto strides = getShapeElements(b, loc, operands[3]);
  SmallVector<Value> dims;
  Value one = indexConst(b, loc, 1);
  for (auto [s, l, st] : llvm::zip(start, limit, strides)) {
    Value span = arith::SubIOp::create(b, loc, l, s);
    Value num = arith::AddIOp::create(
        b, loc, span, arith::SubIOp::create(b, loc, st, one));
    dims.push_back(arith::DivUIOp::create(b, loc, num, st));
  }
  return packShape(b, loc, dims, shapes);
}

//===----------------------------------------------------------------------===//
// Concatenate
//===----------------------------------------------------------------------===//

LogicalResult ConcatenateOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  auto resultType = cast<RankedTensorType>(getType());
  int64_t rank = resultType.getRank(), dim = getDimension();
  if (dim < 0 || dim >= rank)
    return emitOpError() << "dimension " << dim << " is out of range for rank "
                         << rank;
  int64_t total = 0;
  for (auto [idx, input] : llvm::enumerate(getInputs())) {
    auto type = cast<RankedTensorType>(input.getType());
    if (type.getRank() != rank)
      return emitOpError() << "input " << idx << " has rank " << type.getRank()
                           << ", expected " << rank;
    for (int64_t i = 0; i < rank; ++i)
      if (i != dim && !compatibleDim(type.getDimSize(i),
                                     resultType.getDimSize(i)))
        return emitOpError() << "input " << idx << " dim " << i << " ("
                             << type.getDimSize(i)
                             << ") does not match the result ("
                             << resultType.getDimSize(i) << ")";
    if (ShapedType::isDynamic(type.getDimSize(dim)) ||
        ShapedType::isDynamic(total))
      total = ShapedType::kDynamic;
    else
      total += type.getDimSize(dim);
  }
  if (!compatibleDim(resultType.getDimSize(dim), total))
    return emitOpError() << "result dim " << dim << " must be " << total;
  return success();
}

LogicalResult ConcatenateOp::reifyReturnTypeShapes(
    OpBuilder &b, ValueRange operands, SmallVectorImpl<Value> &shapes) {
  Location loc = getLoc();
  SmallVector<Value> dims = getDims(b, loc, operands[0]);
  int64_t dim = getDimension();
  for (Value input : operands.drop_front())
    dims[dim] = arith::AddIOp::create(b, loc, dims[dim],
                                      getDims(b, loc, input)[dim]);
  return packShape(b, loc, dims, shapes);
}

//===----------------------------------------------------------------------===//
// Pad
//===----------------------------------------------------------------------===//

static Value paddedDim(OpBuilder &b, Location loc, Value in, Value lo, Value hi,
                       Value interior) {
  // lo + hi + in + max(in - 1, 0) * interior
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  Value inMinusOne = arith::MaxSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, in, one), zero);
  Value sum = arith::AddIOp::create(
      b, loc, in, arith::MulIOp::create(b, loc, inMinusOne, interior));
  return arith::AddIOp::create(b, loc, sum,
                               arith::AddIOp::create(b, loc, lo, hi));
}

LogicalResult PadOp::verify() {
  auto operandType = getOperand().getType();
  auto resultType = cast<RankedTensorType>(getType());
  int64_t rank = operandType.getRank();
  if (getPaddingValue().getType().getRank() != 0)
    return emitOpError("padding_value must be rank 0");
  if ((int64_t)getEdgePaddingLow().size() != rank ||
      (int64_t)getEdgePaddingHigh().size() != rank ||
      (int64_t)getInteriorPadding().size() != rank ||
      resultType.getRank() != rank)
    return emitOpError("padding amounts and result rank must equal the "
                       "operand rank");
  const int64_t maxPadding = std::numeric_limits<int32_t>::max();
  for (int64_t i = 0; i < rank; ++i) {
    if (getInteriorPadding()[i] < 0)
      return emitOpError() << "interior padding of dim " << i
                           << " must be non-negative";
    for (int64_t amount : {getEdgePaddingLow()[i], getEdgePaddingHigh()[i],
                           getInteriorPadding()[i]})
      if (amount > maxPadding || amount < -maxPadding)
        return emitOpError() << "padding of dim " << i << " is " << amount
                             << "; DISC pads by at most " << maxPadding;
    int64_t in = operandType.getDimSize(i);
    if (ShapedType::isDynamic(in))
      continue;
    // In checked arithmetic: amounts near the int64 limits must not wrap.
    std::optional<int64_t> interior = llvm::checkedMul(
        std::max<int64_t>(in - 1, 0), getInteriorPadding()[i]);
    std::optional<int64_t> edges =
        llvm::checkedAdd(getEdgePaddingLow()[i], getEdgePaddingHigh()[i]);
    std::optional<int64_t> grown =
        interior ? llvm::checkedAdd(in, *interior) : std::nullopt;
    std::optional<int64_t> padded =
        grown && edges ? llvm::checkedAdd(*grown, *edges) : std::nullopt;
    if (!padded)
      return emitOpError() << "padding of dim " << i
                           << " overflows a 64-bit size";
    int64_t out = *padded;
    if (out < 0 || !compatibleDim(resultType.getDimSize(i), out))
      return emitOpError() << "result dim " << i << " must be " << out;
  }
  return success();
}

LogicalResult PadOp::reifyReturnTypeShapes(OpBuilder &b, ValueRange operands,
                                           SmallVectorImpl<Value> &shapes) {
  Location loc = getLoc();
  SmallVector<Value> in = getDims(b, loc, operands[0]), out;
  for (auto [i, d] : llvm::enumerate(in))
    out.push_back(paddedDim(b, loc, d,
                            indexConst(b, loc, getEdgePaddingLow()[i]),
                            indexConst(b, loc, getEdgePaddingHigh()[i]),
                            indexConst(b, loc, getInteriorPadding()[i])));
  return packShape(b, loc, out, shapes);
}

LogicalResult DynamicPadOp::verify() {
  int64_t rank = getOperand().getType().getRank();
  if (getPaddingValue().getType().getRank() != 0)
    return emitOpError("padding_value must be rank 0");
  if (cast<RankedTensorType>(getType()).getRank() != rank)
    return emitOpError("result rank must equal the operand rank");
  const int64_t anyPadding = std::numeric_limits<int64_t>::min() + 1;
  if (failed(checkShapeOperand(*this, getEdgePaddingLow(), rank,
                               "edge_padding_low", anyPadding)) ||
      failed(checkShapeOperand(*this, getEdgePaddingHigh(), rank,
                               "edge_padding_high", anyPadding)) ||
      failed(checkShapeOperand(*this, getInteriorPadding(), rank,
                               "interior_padding")))
    return failure();
  // Constant amounts within PadOp's bound (the lowering asserts it for the
  // others at run time): folded, a larger one wraps the padded size or the
  // interior stride (interior + 1) at compile time.
  const int64_t maxPadding = std::numeric_limits<int32_t>::max();
  for (Value amounts :
       {getEdgePaddingLow(), getEdgePaddingHigh(), getInteriorPadding()}) {
    for (auto [i, amount] : llvm::enumerate(constantShapeElements(amounts)))
      if (amount && (*amount > maxPadding || *amount < -maxPadding))
        return emitOpError() << "padding of dim " << i << " is " << *amount
                             << "; DISC pads by at most " << maxPadding;
  }
  return success();
}

LogicalResult
DynamicPadOp::reifyReturnTypeShapes(OpBuilder &b, ValueRange operands,
                                    SmallVectorImpl<Value> &shapes) {
  Location loc = getLoc();
  SmallVector<Value> in = getDims(b, loc, operands[0]), out;
  auto lo = getShapeElements(b, loc, operands[2]);
  auto hi = getShapeElements(b, loc, operands[3]);
  auto interior = getShapeElements(b, loc, operands[4]);
  for (auto [i, d] : llvm::enumerate(in))
    out.push_back(paddedDim(b, loc, d, lo[i], hi[i], interior[i]));
  return packShape(b, loc, out, shapes);
}

//===----------------------------------------------------------------------===//
// Reduce
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::verify() {
  auto operandType = getOperand().getType();
  auto resultType = cast<RankedTensorType>(getType());
  if (failed(checkDimsInRange(*this, getDimensions(), operandType.getRank(),
                              "reduction")))
    return failure();
  if (resultType.getRank() + (int64_t)getDimensions().size() !=
      operandType.getRank())
    return emitOpError() << "result rank " << resultType.getRank()
                         << " must be the operand rank minus the number of "
                            "reduced dims";
  Type elementType = operandType.getElementType();
  ReduceKind kind = getKind();
  if ((kind == ReduceKind::And || kind == ReduceKind::Or) &&
      !elementType.isInteger())
    return emitOpError("and/or reductions need an integer or i1 operand");
  int64_t r = 0;
  for (int64_t i = 0; i < operandType.getRank(); ++i) {
    if (llvm::is_contained(getDimensions(), i))
      continue;
    if (!compatibleDim(resultType.getDimSize(r), operandType.getDimSize(i)))
      return emitOpError() << "result dim " << r << " does not match operand "
                           << "dim " << i;
    ++r;
  }
  return success();
}

LogicalResult ReduceOp::reifyReturnTypeShapes(OpBuilder &b, ValueRange operands,
                                              SmallVectorImpl<Value> &shapes) {
  SmallVector<Value> in = getDims(b, getLoc(), operands[0]), out;
  for (auto [i, d] : llvm::enumerate(in))
    if (!llvm::is_contained(getDimensions(), (int64_t)i))
      out.push_back(d);
  return packShape(b, getLoc(), out, shapes);
}

//===----------------------------------------------------------------------===//
// Scan
//===----------------------------------------------------------------------===//

LogicalResult ScanOp::verify() {
  auto type = getType();
  if (getDimension() < 0 || getDimension() >= type.getRank())
    return emitOpError() << "dimension " << getDimension()
                         << " is out of range for rank " << type.getRank();
  bool isFloat = isa<FloatType>(type.getElementType());
  ReduceKind kind = getKind();
  if ((kind == ReduceKind::And || kind == ReduceKind::Or) && isFloat)
    return emitOpError("and/or scans need an integer or i1 operand");
  return success();
}

LogicalResult SortOp::verify() {
  int64_t rank = cast<RankedTensorType>(getOperand().getType()).getRank();
  if (rank == 0)
    return emitOpError("needs an operand of rank 1 or more");
  if (getDimension() < 0 || getDimension() >= rank)
    return emitOpError() << "dimension " << getDimension()
                         << " is out of range for rank " << rank;
  return success();
}

//===----------------------------------------------------------------------===//
// Gather
//===----------------------------------------------------------------------===//

/// Result shape of a gather: batch dims of the indices (without
/// index_vector_dim) interleaved with the non-collapsed slice sizes placed at
/// offset_dims.
template <typename OpTy>
static SmallVector<Value> gatherResultDims(OpTy op, OpBuilder &b,
                                           Value startIndices,
                                           ArrayRef<Value> sliceSizes) {
  Location loc = op.getLoc();
  SmallVector<Value> indexDims = getDims(b, loc, startIndices);
  int64_t indexVectorDim = op.getIndexVectorDim();
  SmallVector<Value> batchDims;
  for (auto [i, d] : llvm::enumerate(indexDims))
    if ((int64_t)i != indexVectorDim)
      batchDims.push_back(d);
  SmallVector<Value> offsetSizes;
  for (auto [i, s] : llvm::enumerate(sliceSizes))
    if (!llvm::is_contained(op.getCollapsedSliceDims(), (int64_t)i))
      offsetSizes.push_back(s);
  int64_t resultRank = batchDims.size() + offsetSizes.size();
  SmallVector<Value> result;
  unsigned nextBatch = 0, nextOffset = 0;
  for (int64_t i = 0; i < resultRank; ++i) {
    if (llvm::is_contained(op.getOffsetDims(), i))
      result.push_back(offsetSizes[nextOffset++]);
    else
      result.push_back(batchDims[nextBatch++]);
  }
  return result;
}

template <typename OpTy>
static LogicalResult verifyGather(OpTy op, int64_t numSliceSizes) {
  auto operandType = op.getOperand().getType();
  auto indicesType = op.getStartIndices().getType();
  auto resultType = cast<RankedTensorType>(op.getType());
  int64_t operandRank = operandType.getRank();
  int64_t ivd = op.getIndexVectorDim();
  if (ivd < 0 || ivd > indicesType.getRank())
    return op.emitOpError() << "index_vector_dim " << ivd
                            << " is out of range";
  int64_t indexVectorSize =
      ivd == indicesType.getRank() ? 1 : indicesType.getDimSize(ivd);
  if (!ShapedType::isDynamic(indexVectorSize) &&
      indexVectorSize != (int64_t)op.getStartIndexMap().size())
    return op.emitOpError() << "start_index_map has "
                            << op.getStartIndexMap().size()
                            << " entries but the index vector has "
                            << indexVectorSize;
  if (numSliceSizes != operandRank)
    return op.emitOpError() << "slice_sizes has " << numSliceSizes
                            << " entries, expected the operand rank "
                            << operandRank;
  if (failed(checkDimsInRange(op, op.getStartIndexMap(), operandRank,
                              "start_index_map")) ||
      failed(checkDimsInRange(op, op.getCollapsedSliceDims(), operandRank,
                              "collapsed_slice_dims")))
    return failure();
  int64_t batchRank =
      indicesType.getRank() - (ivd == indicesType.getRank() ? 0 : 1);
  int64_t expectedRank = batchRank + operandRank -
                         (int64_t)op.getCollapsedSliceDims().size();
  if (resultType.getRank() != expectedRank)
    return op.emitOpError() << "result rank " << resultType.getRank()
                            << " must be " << expectedRank;
  if ((int64_t)op.getOffsetDims().size() !=
      operandRank - (int64_t)op.getCollapsedSliceDims().size())
    return op.emitOpError("offset_dims must name one result dim per "
                          "non-collapsed slice dim");
  if (failed(checkDimsInRange(op, op.getOffsetDims(), resultType.getRank(),
                              "offset_dims")))
    return failure();
  return checkBatchDimsMatchIndices(op, resultType, "result",
                                    op.getOffsetDims(), indicesType,
                                    "start indices", ivd);
}

LogicalResult GatherOp::verify() {
  if (failed(verifyGather(*this, getSliceSizes().size())))
    return failure();
  ArrayRef<int64_t> sliceSizes = getSliceSizes();
  for (int64_t d : getCollapsedSliceDims())
    if (sliceSizes[d] != 1)
      return emitOpError() << "collapsed slice dim " << d
                           << " must have slice size 1";
  auto operandType = getOperand().getType();
  for (auto [d, size] : llvm::enumerate(sliceSizes)) {
    int64_t operandDim = operandType.getDimSize(d);
    if (size < 0 ||
        (!ShapedType::isDynamic(operandDim) && size > operandDim))
      return emitOpError() << "slice size " << size << " of dim " << d
                           << " must be in [0, " << operandDim << "]";
  }
  // The offset dims are the slice's sizes, the collapsed ones left out.
  auto resultType = cast<RankedTensorType>(getType());
  int64_t nextSlice = 0;
  for (int64_t i = 0; i < resultType.getRank(); ++i) {
    if (!llvm::is_contained(getOffsetDims(), i))
      continue;
    while (llvm::is_contained(getCollapsedSliceDims(), nextSlice))
      ++nextSlice;
    int64_t actual = resultType.getDimSize(i);
    if (!ShapedType::isDynamic(actual) && actual != sliceSizes[nextSlice])
      return emitOpError() << "result dim " << i << " is " << actual
                           << " but is an offset dim of slice size "
                           << sliceSizes[nextSlice] << " (operand dim "
                           << nextSlice << ")";
    ++nextSlice;
  }
  return success();
}

LogicalResult GatherOp::reifyReturnTypeShapes(OpBuilder &b, ValueRange operands,
                                              SmallVectorImpl<Value> &shapes) {
  SmallVector<Value> sizes;
  for (int64_t s : getSliceSizes())
    sizes.push_back(indexConst(b, getLoc(), s));
  return packShape(b, getLoc(), gatherResultDims(*this, b, operands[1], sizes),
                   shapes);
}

LogicalResult DynamicGatherOp::verify() {
  auto sizesType = cast<RankedTensorType>(getSliceSizes().getType());
  if (sizesType.isDynamicDim(0))
    return emitOpError("slice_sizes must have a static length");
  return verifyGather(*this, sizesType.getDimSize(0));
}

LogicalResult
DynamicGatherOp::reifyReturnTypeShapes(OpBuilder &b, ValueRange operands,
                                       SmallVectorImpl<Value> &shapes) {
  auto sizes = getShapeElements(b, getLoc(), operands[2]);
  return packShape(b, getLoc(), gatherResultDims(*this, b, operands[1], sizes),
                   shapes);
}

//===----------------------------------------------------------------------===//
// Scatter
//===----------------------------------------------------------------------===//

LogicalResult ScatterOp::verify() {
  auto operandType = getOperand().getType();
  auto indicesType = getScatterIndices().getType();
  auto updatesType = getUpdates().getType();
  int64_t operandRank = operandType.getRank();
  int64_t ivd = getIndexVectorDim();
  if (ivd < 0 || ivd > indicesType.getRank())
    return emitOpError() << "index_vector_dim " << ivd << " is out of range";
  if (failed(checkDimsInRange(*this, getScatterDimsToOperandDims(),
                              operandRank, "scatter_dims_to_operand_dims")) ||
      failed(checkDimsInRange(*this, getInsertedWindowDims(), operandRank,
                              "inserted_window_dims")) ||
      failed(checkDimsInRange(*this, getUpdateWindowDims(),
                              updatesType.getRank(), "update_window_dims")))
    return failure();
  if ((int64_t)getUpdateWindowDims().size() +
          (int64_t)getInsertedWindowDims().size() !=
      operandRank)
    return emitOpError("update_window_dims + inserted_window_dims must cover "
                       "the operand rank");
  int64_t batchRank =
      indicesType.getRank() - (ivd == indicesType.getRank() ? 0 : 1);
  if (updatesType.getRank() !=
      batchRank + (int64_t)getUpdateWindowDims().size())
    return emitOpError() << "updates rank " << updatesType.getRank()
                         << " must be " << batchRank << " (scatter batch) + "
                         << getUpdateWindowDims().size() << " (window)";
  // Static sizes the lowering relies on: the updates' batch dims are the
  // indices', a window dim is at most its operand dim (the k-th window dim
  // is the k-th dim not inserted).
  int64_t nextOperand = 0;
  for (int64_t i = 0; i < updatesType.getRank(); ++i) {
    if (!llvm::is_contained(getUpdateWindowDims(), i))
      continue;
    while (llvm::is_contained(getInsertedWindowDims(), nextOperand))
      ++nextOperand;
    int64_t actual = updatesType.getDimSize(i);
    int64_t bound = operandType.getDimSize(nextOperand);
    if (!ShapedType::isDynamic(actual) && !ShapedType::isDynamic(bound) &&
        actual > bound)
      return emitOpError() << "updates dim " << i << " is " << actual
                           << ", a window dim larger than operand dim "
                           << nextOperand << " (" << bound << ")";
    ++nextOperand;
  }
  return checkBatchDimsMatchIndices(*this, updatesType, "updates",
                                    getUpdateWindowDims(), indicesType,
                                    "scatter indices", ivd);
}

namespace {
/// scatter(operand, indices, transpose(x, perm)) -> scatter(operand,
/// indices, x) when `perm` lists the window dims in ascending order and the
/// batch dims in ascending order: update dim i is x's dim perm[i], so the
/// k-th window dim and the k-th batch dim stay the k-th of x.
struct FoldTransposeIntoScatter : OpRewritePattern<ScatterOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ScatterOp op,
                                PatternRewriter &rewriter) const override {
    auto transpose = op.getUpdates().getDefiningOp<TransposeOp>();
    if (!transpose)
      return failure();
    ArrayRef<int64_t> perm = transpose.getPermutation();
    ArrayRef<int64_t> windowDims = op.getUpdateWindowDims();
    int64_t previousWindow = -1, previousBatch = -1;
    SmallVector<int64_t> foldedWindowDims;
    for (int64_t i = 0; i < (int64_t)perm.size(); ++i) {
      int64_t &previous =
          llvm::is_contained(windowDims, i) ? previousWindow : previousBatch;
      if (perm[i] < previous)
        return failure();
      previous = perm[i];
      if (llvm::is_contained(windowDims, i))
        foldedWindowDims.push_back(perm[i]);
    }
    Attribute dims = op->getAttr(DiscDialect::kDimsAttrName);
    auto folded = rewriter.replaceOpWithNewOp<ScatterOp>(
        op, op.getType(), op.getOperand(), op.getScatterIndices(),
        transpose.getOperand(), foldedWindowDims, op.getInsertedWindowDims(),
        op.getScatterDimsToOperandDims(), op.getIndexVectorDim(),
        op.getKind());
    if (dims)
      folded->setAttr(DiscDialect::kDimsAttrName, dims);
    return success();
  }
};
} // namespace

void ScatterOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<FoldTransposeIntoScatter>(context);
}

LogicalResult ScatterOp::reifyReturnTypeShapes(OpBuilder &b,
                                               ValueRange operands,
                                               SmallVectorImpl<Value> &shapes) {
  return reifyShapeOf(b, getLoc(), operands[0], shapes);
}

//===----------------------------------------------------------------------===//
// Dot general
//===----------------------------------------------------------------------===//


/// A library op's epilogue: one operand per binary step, each of the
/// result's rank and element type with dims 1 or the result's.
static LogicalResult verifyEpilogue(Operation *op, ArrayAttr epilogue,
                                    OperandRange operands,
                                    RankedTensorType resultType) {
  Type element = resultType.getElementType();
  if (element != cast<ShapedType>(op->getOperand(0).getType()).getElementType() ||
      element != cast<ShapedType>(op->getOperand(1).getType()).getElementType())
    return op->emitOpError(
        "operands and result must have the same element type");
  if (isa<IntegerType>(element) && !epilogue.empty())
    return op->emitOpError("an integer op takes no epilogue");
  int64_t binarySteps = 0;
  for (Attribute step : epilogue)
    if (cast<PostOpAttr>(step).isBinary())
      ++binarySteps;
  if (binarySteps != (int64_t)operands.size())
    return op->emitOpError() << "epilogue has " << binarySteps
                             << " binary steps but " << operands.size()
                             << " epilogue operands";
  for (auto [index, operand] : llvm::enumerate(operands)) {
    auto type = cast<RankedTensorType>(operand.getType());
    if (type.getRank() != resultType.getRank())
      return op->emitOpError()
             << "epilogue operand " << index << " must have the result's rank "
             << resultType.getRank();
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.getDimSize(d) != 1 &&
          !compatibleDim(type.getDimSize(d), resultType.getDimSize(d)))
        return op->emitOpError()
               << "epilogue operand " << index << " dim " << d
               << " must be 1 or the result's (" << resultType.getDimSize(d)
               << ")";
  }
  return success();
}

LogicalResult DotGeneralOp::verify() {
  auto lhsType = getLhs().getType(), rhsType = getRhs().getType();
  auto resultType = cast<RankedTensorType>(getType());
  auto lb = getLhsBatchingDimensions(), rb = getRhsBatchingDimensions();
  auto lc = getLhsContractingDimensions(), rc = getRhsContractingDimensions();
  if (lb.size() != rb.size())
    return emitOpError("lhs and rhs must have the same number of batching dims");
  if (lc.size() != rc.size())
    return emitOpError(
        "lhs and rhs must have the same number of contracting dims");
  SmallVector<int64_t> lhsAll(lb), rhsAll(rb);
  lhsAll.append(lc.begin(), lc.end());
  rhsAll.append(rc.begin(), rc.end());
  if (failed(checkDimsInRange(*this, lhsAll, lhsType.getRank(),
                              "lhs batching/contracting")) ||
      failed(checkDimsInRange(*this, rhsAll, rhsType.getRank(),
                              "rhs batching/contracting")))
    return failure();
  for (auto [l, r] : llvm::zip(lhsAll, rhsAll))
    if (!compatibleDim(lhsType.getDimSize(l), rhsType.getDimSize(r)))
      return emitOpError() << "lhs dim " << l << " (" << lhsType.getDimSize(l)
                           << ") and rhs dim " << r << " ("
                           << rhsType.getDimSize(r) << ") must be equal";
  SmallVector<int64_t> expected;
  for (int64_t d : lb)
    expected.push_back(lhsType.getDimSize(d));
  for (int64_t i = 0; i < lhsType.getRank(); ++i)
    if (!llvm::is_contained(lhsAll, i))
      expected.push_back(lhsType.getDimSize(i));
  for (int64_t i = 0; i < rhsType.getRank(); ++i)
    if (!llvm::is_contained(rhsAll, i))
      expected.push_back(rhsType.getDimSize(i));
  if ((int64_t)expected.size() != resultType.getRank())
    return emitOpError() << "result rank must be " << expected.size();
  for (auto [i, e] : llvm::enumerate(expected))
    if (!compatibleDim(resultType.getDimSize(i), e))
      return emitOpError() << "result dim " << i << " must be " << e;
  return verifyEpilogue(*this, getEpilogue(), getEpilogueOperands(),
                        resultType);
}

namespace {
/// dot_general(transpose(x, perm), ...) -> dot_general(x, ...) with the
/// batching and contracting dims mapped through `perm`. Legal when the free
/// dims keep their relative order (they are the result's dims); the batch
/// dims keep their pairing because the lists keep their order.
struct FoldTransposeIntoDotGeneral : OpRewritePattern<DotGeneralOp> {
  using OpRewritePattern::OpRewritePattern;

  /// The dim lists of `x` for an operand `transpose(x, perm)`, or failure.
  static FailureOr<std::pair<SmallVector<int64_t>, SmallVector<int64_t>>>
  foldedDims(TransposeOp transpose, ArrayRef<int64_t> batching,
             ArrayRef<int64_t> contracting) {
    ArrayRef<int64_t> perm = transpose.getPermutation();
    int64_t previousFree = -1;
    for (int64_t i = 0; i < (int64_t)perm.size(); ++i) {
      if (llvm::is_contained(batching, i) || llvm::is_contained(contracting, i))
        continue;
      if (perm[i] < previousFree)
        return failure();
      previousFree = perm[i];
    }
    auto map = [&](ArrayRef<int64_t> dims) {
      return llvm::map_to_vector(dims, [&](int64_t d) { return perm[d]; });
    };
    return std::make_pair(map(batching), map(contracting));
  }

  LogicalResult matchAndRewrite(DotGeneralOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<int64_t> lb(op.getLhsBatchingDimensions()),
        lc(op.getLhsContractingDimensions()),
        rb(op.getRhsBatchingDimensions()),
        rc(op.getRhsContractingDimensions());
    Value lhs = op.getLhs(), rhs = op.getRhs();
    bool changed = false;
    if (auto t = lhs.getDefiningOp<TransposeOp>()) {
      if (auto dims = foldedDims(t, lb, lc); succeeded(dims)) {
        std::tie(lb, lc) = *dims;
        lhs = t.getOperand();
        changed = true;
      }
    }
    if (auto t = rhs.getDefiningOp<TransposeOp>()) {
      if (auto dims = foldedDims(t, rb, rc); succeeded(dims)) {
        std::tie(rb, rc) = *dims;
        rhs = t.getOperand();
        changed = true;
      }
    }
    if (!changed)
      return failure();
    // The result is the same: its symbolic dims stay (read before the
    // replacement erases `op`).
    Attribute dims = op->getAttr(DiscDialect::kDimsAttrName);
    auto folded = rewriter.replaceOpWithNewOp<DotGeneralOp>(
        op, op.getType(), lhs, rhs, op.getEpilogueOperands(), lb, rb, lc, rc,
        op.getEpilogue());
    if (dims)
      folded->setAttr(DiscDialect::kDimsAttrName, dims);
    return success();
  }
};
} // namespace

void DotGeneralOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                               MLIRContext *context) {
  results.add<FoldTransposeIntoDotGeneral>(context);
}

LogicalResult DotGeneralOp::reifyReturnTypeShapes(
    OpBuilder &b, ValueRange operands, SmallVectorImpl<Value> &shapes) {
  Location loc = getLoc();
  auto lhs = getDims(b, loc, operands[0]), rhs = getDims(b, loc, operands[1]);
  SmallVector<Value> out;
  for (int64_t d : getLhsBatchingDimensions())
    out.push_back(lhs[d]);
  for (int64_t i = 0; i < (int64_t)lhs.size(); ++i)
    if (!llvm::is_contained(getLhsBatchingDimensions(), i) &&
        !llvm::is_contained(getLhsContractingDimensions(), i))
      out.push_back(lhs[i]);
  for (int64_t i = 0; i < (int64_t)rhs.size(); ++i)
    if (!llvm::is_contained(getRhsBatchingDimensions(), i) &&
        !llvm::is_contained(getRhsContractingDimensions(), i))
      out.push_back(rhs[i]);
  return packShape(b, loc, out, shapes);
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

/// Window attributes as oneDNN and cuDNN take them: their descriptors
/// hold 32-bit values, and a library refused a larger one only when
/// called, where DISC's own loop nests took it (a stride of 2^32).
static LogicalResult verifyFitsInt32(Operation *op, StringRef name,
                                     ArrayRef<int64_t> values) {
  for (int64_t v : values)
    if (!ShapedType::isDynamic(v) && // a padding given as an operand
        (v < std::numeric_limits<int32_t>::min() ||
         v > std::numeric_limits<int32_t>::max()))
      return op->emitOpError()
             << name << " " << v
             << " does not fit in 32 bits (the convolution libraries' limit)";
  return success();
}

/// A convolution's per-spatial-dim attributes: one entry per spatial dim,
/// positive strides and dilations, each in 32 bits.
static LogicalResult verifyWindowAttributes(Operation *op, int64_t spatial,
                                            ArrayRef<int64_t> strides,
                                            ArrayRef<int64_t> paddingLow,
                                            ArrayRef<int64_t> paddingHigh,
                                            ArrayRef<int64_t> dilation) {
  for (auto [name, attr] : {std::pair<StringRef, ArrayRef<int64_t>>{
                                "window_strides", strides},
                            {"padding_low", paddingLow},
                            {"padding_high", paddingHigh},
                            {"rhs_dilation", dilation}})
    if ((int64_t)attr.size() != spatial)
      return op->emitOpError() << name << " needs " << spatial << " entries";
  for (int64_t s : strides)
    if (s <= 0)
      return op->emitOpError("window_strides must be positive");
  for (int64_t d : dilation)
    if (d <= 0)
      return op->emitOpError("rhs_dilation must be positive");
  for (auto [name, attr] : {std::pair<StringRef, ArrayRef<int64_t>>{
                                "window_strides", strides},
                            {"padding_low", paddingLow},
                            {"padding_high", paddingHigh},
                            {"rhs_dilation", dilation}})
    if (failed(verifyFitsInt32(op, name, attr)))
      return failure();
  return success();
}

LogicalResult ConvolutionOp::verify() {
  auto lhsType = getLhs().getType(), rhsType = getRhs().getType();
  auto resultType = cast<RankedTensorType>(getType());
  int64_t rank = lhsType.getRank();
  if (rank < 3 || rank > 5)
    return emitOpError() << "supports 1-d to 3-d convolution (rank 3 to 5), "
                            "got rank "
                         << rank;
  if (rhsType.getRank() != rank || resultType.getRank() != rank)
    return emitOpError("input, kernel and result must have the same rank");
  int64_t spatial = rank - 2;
  if (failed(verifyWindowAttributes(*this, spatial, getWindowStrides(),
                                    getPaddingLow(), getPaddingHigh(),
                                    getRhsDilation())))
    return failure();
  for (auto [name, attr, values] :
       {std::tuple<StringRef, ArrayRef<int64_t>, ValueRange>{
            "padding_low", getPaddingLow(), getDynamicPaddingLow()},
        {"padding_high", getPaddingHigh(), getDynamicPaddingHigh()}})
    if ((int64_t)values.size() != llvm::count(attr, ShapedType::kDynamic))
      return emitOpError()
             << name << " has " << llvm::count(attr, ShapedType::kDynamic)
             << " dynamic entries but " << values.size() << " operands";
  Type elementType = lhsType.getElementType();
  if (rhsType.getElementType() != elementType ||
      resultType.getElementType() != elementType)
    return emitOpError("input, kernel and result must have one element type");
  for (Value operand : getEpilogueOperands())
    if (getElementTypeOrSelf(operand.getType()) != elementType)
      return emitOpError("epilogue operands must have the input's element "
                         "type");
  if (std::optional<ArrayRef<int64_t>> lhsDilation = getLhsDilation()) {
    if ((int64_t)lhsDilation->size() != spatial)
      return emitOpError() << "lhs_dilation needs " << spatial << " entries";
    for (int64_t d : *lhsDilation)
      if (d <= 0)
        return emitOpError("lhs_dilation must be positive");
    if (failed(verifyFitsInt32(*this, "lhs_dilation", *lhsDilation)))
      return failure();
  }
  int64_t groups = getFeatureGroupCount();
  if (groups <= 0)
    return emitOpError("feature_group_count must be positive");
  int64_t c = lhsType.getDimSize(1), i = rhsType.getDimSize(1),
          o = rhsType.getDimSize(0);
  if (!ShapedType::isDynamic(c) && !ShapedType::isDynamic(i) &&
      c != i * groups)
    return emitOpError() << "input features (" << c
                         << ") must equal kernel input features (" << i
                         << ") x feature_group_count (" << groups << ")";
  if (!ShapedType::isDynamic(o) && o % groups != 0)
    return emitOpError() << "kernel output features (" << o
                         << ") must be divisible by feature_group_count";
  if (!compatibleDim(resultType.getDimSize(1), o) ||
      !compatibleDim(resultType.getDimSize(0), lhsType.getDimSize(0)))
    return emitOpError("result must be [N, O, spatial...]");
  // Spatial sizes known here: the window must fit and the result's size
  // must be the one it gives (the depthwise loop nests would otherwise
  // read past the input as if it were padding).
  for (int64_t s = 0; s < spatial; ++s) {
    int64_t in = lhsType.getDimSize(2 + s), k = rhsType.getDimSize(2 + s);
    int64_t lo = getPaddingLow()[s], hi = getPaddingHigh()[s];
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(k) ||
        ShapedType::isDynamic(lo) || ShapedType::isDynamic(hi))
      continue;
    // buildWindowSpans' arithmetic on static sizes, checked: a static size
    // may be near 2^63 (what a fuzzer writes); sizes whose arithmetic
    // overflows are left to the run-time checks. (buildWindowSpans folds
    // Values and has no way to report an overflow, hence two forms.)
    auto mulAdd = [](int64_t x, int64_t y, int64_t z) {
      std::optional<int64_t> product = llvm::checkedMul(x, y);
      return product ? llvm::checkedAdd(*product, z) : std::nullopt;
    };
    std::optional<int64_t> dilated = mulAdd(getLhsDilationAt(s), in - 1, 1);
    std::optional<int64_t> window = mulAdd(getRhsDilation()[s], k - 1, 1);
    std::optional<int64_t> padded =
        dilated ? mulAdd(1, std::max<int64_t>(*dilated, 0), lo) : std::nullopt;
    padded = padded ? llvm::checkedAdd(*padded, hi) : std::nullopt;
    std::optional<int64_t> checkedSpan =
        window && padded ? llvm::checkedSub(*padded, *window) : std::nullopt;
    if (!checkedSpan)
      continue;
    int64_t span = *checkedSpan;
    if (span < 0)
      return emitOpError() << "along spatial dim " << s
                           << " the kernel (dilated) is larger than the "
                              "padded input ("
                           << *window << " > " << *padded << ")";
    int64_t expected = span / getWindowStrides()[s] + 1;
    int64_t actual = resultType.getDimSize(2 + s);
    if (!ShapedType::isDynamic(actual) && actual != expected)
      return emitOpError() << "result spatial dim " << s << " is " << actual
                           << ", expected " << expected;
  }
  return verifyEpilogue(*this, getEpilogue(), getEpilogueOperands(),
                        resultType);
}

SmallVector<Value> ConvolutionOp::buildWindowSpans(OpBuilder &b,
                                                   ValueRange operands) {
  Location loc = getLoc();
  Adaptor adaptor(operands, *this);
  SmallVector<OpFoldResult> padLow = getMixedValues(
      getPaddingLow(), adaptor.getDynamicPaddingLow(), b);
  SmallVector<OpFoldResult> padHigh = getMixedValues(
      getPaddingHigh(), adaptor.getDynamicPaddingHigh(), b);
  auto in = getDims(b, loc, operands[0]), k = getDims(b, loc, operands[1]);
  // Folded as built: static sizes give constant spans (no check needed).
  auto add = [&](Value x, Value y) {
    return b.createOrFold<arith::AddIOp>(loc, x, y);
  };
  auto sub = [&](Value x, Value y) {
    return b.createOrFold<arith::SubIOp>(loc, x, y);
  };
  auto mul = [&](Value x, int64_t y) {
    return b.createOrFold<arith::MulIOp>(loc, x, indexConst(b, loc, y));
  };
  Value one = indexConst(b, loc, 1);
  SmallVector<Value> spans;
  for (int64_t s = 0, e = in.size() - 2; s < e; ++s) {
    // dilated in + lo + hi - (dil * (k - 1) + 1), the input dilated to
    // max(lhs_dil * (in - 1) + 1, 0).
    Value dilated = in[s + 2];
    if (int64_t lhsDilation = getLhsDilationAt(s); lhsDilation != 1)
      dilated = b.createOrFold<arith::MaxSIOp>(
          loc, add(mul(sub(dilated, one), lhsDilation), one),
          indexConst(b, loc, 0));
    Value padded =
        add(dilated,
            add(getValueOrCreateConstantIndexOp(b, loc, padLow[s]),
                getValueOrCreateConstantIndexOp(b, loc, padHigh[s])));
    Value window = add(mul(sub(k[s + 2], one), getRhsDilation()[s]), one);
    spans.push_back(sub(padded, window));
  }
  return spans;
}

LogicalResult ConvolutionOp::reifyReturnTypeShapes(
    OpBuilder &b, ValueRange operands, SmallVectorImpl<Value> &shapes) {
  Location loc = getLoc();
  auto in = getDims(b, loc, operands[0]), k = getDims(b, loc, operands[1]);
  SmallVector<Value> out{in[0], k[0]};
  Value one = indexConst(b, loc, 1);
  // span / stride + 1; a negative span is an error checked before the
  // result is allocated (disc::emitConvolutionWindowChecks).
  for (auto [s, span] : llvm::enumerate(buildWindowSpans(b, operands))) {
    Value q = arith::DivSIOp::create(
        b, loc, span, indexConst(b, loc, getWindowStrides()[s]));
    out.push_back(arith::AddIOp::create(b, loc, q, one));
  }
  return packShape(b, loc, out, shapes);
}

LogicalResult ConvolutionBackwardWeightsOp::verify() {
  auto inputType = getInput().getType(),
       gradientType = getOutputGradient().getType();
  auto resultType = cast<RankedTensorType>(getType());
  int64_t rank = inputType.getRank();
  if (rank < 3 || rank > 5)
    return emitOpError() << "supports 1-d to 3-d convolutions (rank 3 to 5), "
                            "got rank "
                         << rank;
  if (gradientType.getRank() != rank || resultType.getRank() != rank)
    return emitOpError(
        "input, output gradient and result must have the same rank");
  Type elementType = inputType.getElementType();
  if (gradientType.getElementType() != elementType ||
      resultType.getElementType() != elementType)
    return emitOpError(
        "input, output gradient and result must have one element type");
  int64_t spatial = rank - 2;
  if (failed(verifyWindowAttributes(*this, spatial, getWindowStrides(),
                                    getPaddingLow(), getPaddingHigh(),
                                    getRhsDilation())))
    return failure();
  for (ArrayRef<int64_t> padding : {getPaddingLow(), getPaddingHigh()})
    for (int64_t p : padding)
      if (p < 0)
        return emitOpError("padding must be non-negative");
  int64_t groups = getFeatureGroupCount();
  if (groups <= 0)
    return emitOpError("feature_group_count must be positive");
  if (!compatibleDim(gradientType.getDimSize(0), inputType.getDimSize(0)))
    return emitOpError("input and output gradient must have one batch size");
  int64_t o = resultType.getDimSize(0), i = resultType.getDimSize(1),
          c = inputType.getDimSize(1);
  if (!compatibleDim(o, gradientType.getDimSize(1)))
    return emitOpError("result dim 0 must be the output gradient's features");
  if (!ShapedType::isDynamic(o) && o % groups != 0)
    return emitOpError() << "output features (" << o
                         << ") must be divisible by feature_group_count";
  if (!ShapedType::isDynamic(c) && !ShapedType::isDynamic(i) &&
      c != i * groups)
    return emitOpError() << "input features (" << c
                         << ") must equal result dim 1 (" << i
                         << ") x feature_group_count (" << groups << ")";
  if (Value kernelSize = getKernelSize()) {
    auto kernelSizeType = cast<RankedTensorType>(kernelSize.getType());
    if (kernelSizeType.getDimSize(0) != spatial)
      return emitOpError() << "kernel_size must have one entry per spatial "
                              "dim ("
                           << spatial << "), got type " << kernelSizeType;
  }
  for (int64_t s = 0; s < spatial; ++s) {
    int64_t k = resultType.getDimSize(2 + s);
    if (ShapedType::isDynamic(k)) {
      if (!getKernelSize())
        return emitOpError()
               << "needs a static kernel size or a kernel_size operand; "
                  "spatial dim "
               << s << " is dynamic";
      continue;
    }
    int64_t in = inputType.getDimSize(2 + s),
            out = gradientType.getDimSize(2 + s);
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(out))
      continue;
    int64_t span = getRhsDilation()[s] * (k - 1) + 1;
    int64_t padded = in + getPaddingLow()[s] + getPaddingHigh()[s];
    int64_t expected =
        padded < span ? 0 : (padded - span) / getWindowStrides()[s] + 1;
    if (out != expected)
      return emitOpError() << "output gradient spatial dim " << s << " is "
                           << out << "; the convolution's output has "
                           << expected;
  }
  return success();
}

LogicalResult ConvolutionBackwardWeightsOp::reifyReturnTypeShapes(
    OpBuilder &b, ValueRange operands, SmallVectorImpl<Value> &shapes) {
  Location loc = getLoc();
  auto resultType = cast<RankedTensorType>(getType());
  SmallVector<Value> out;
  if (resultType.isDynamicDim(0))
    out.push_back(tensor::DimOp::create(b, loc, operands[1], 1));
  else
    out.push_back(indexConst(b, loc, resultType.getDimSize(0)));
  if (resultType.isDynamicDim(1))
    out.push_back(arith::DivUIOp::create(
        b, loc, tensor::DimOp::create(b, loc, operands[0], 1),
        indexConst(b, loc, getFeatureGroupCount())));
  else
    out.push_back(indexConst(b, loc, resultType.getDimSize(1)));
  // The verifier requires kernel_size for a dynamic kernel dim. Its sizes
  // are taken from the tensor.from_elements that builds it where there is
  // one, not read back from it: bufferized, such a read is a load from a
  // buffer, which the cuda target's host code cannot make.
  SmallVector<Value> kernelSizes;
  for (int64_t d = 2, e = resultType.getRank(); d < e; ++d) {
    if (!resultType.isDynamicDim(d)) {
      out.push_back(indexConst(b, loc, resultType.getDimSize(d)));
      continue;
    }
    if (kernelSizes.empty())
      kernelSizes = getShapeElements(b, loc, operands[2]);
    out.push_back(kernelSizes[d - 2]);
  }
  return packShape(b, loc, out, shapes);
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::verify() {
  auto q = getQuery().getType(), k = getKey().getType(),
       v = getValue().getType();
  auto result = cast<RankedTensorType>(getType());
  for (auto [name, type] : {std::pair<StringRef, RankedTensorType>{"query", q},
                            {"key", k},
                            {"value", v},
                            {"result", result}})
    if (type.getRank() != 4)
      return emitOpError() << name << " must have rank 4 ([B, H, seq, dim]), "
                           << "got rank " << type.getRank();
  auto sameDim = [&](StringRef what, int64_t a, int64_t b) -> LogicalResult {
    if (compatibleDim(a, b))
      return success();
    return emitOpError() << what << " differ (" << a << " vs " << b << ")";
  };
  if (failed(sameDim("query and key batch sizes", q.getDimSize(0),
                     k.getDimSize(0))) ||
      failed(sameDim("key and value batch sizes", k.getDimSize(0),
                     v.getDimSize(0))) ||
      failed(sameDim("key and value head counts", k.getDimSize(1),
                     v.getDimSize(1))))
    return failure();
  // Grouped-query attention: the key/value heads divide the query heads.
  int64_t queryHeads = q.getDimSize(1), keyHeads = k.getDimSize(1);
  if (!ShapedType::isDynamic(queryHeads) && !ShapedType::isDynamic(keyHeads) &&
      (keyHeads == 0 ? queryHeads != 0 : queryHeads % keyHeads != 0))
    return emitOpError() << "query head count " << queryHeads
                         << " is not a multiple of the key/value head count "
                         << keyHeads;
  if (failed(sameDim("query and key head dims", q.getDimSize(3),
                     k.getDimSize(3))) ||
      failed(sameDim("key and value sequence lengths", k.getDimSize(2),
                     v.getDimSize(2))))
    return failure();
  SmallVector<int64_t> expected{q.getDimSize(0), q.getDimSize(1),
                                q.getDimSize(2), v.getDimSize(3)};
  for (auto [i, e] : llvm::enumerate(expected))
    if (!compatibleDim(result.getDimSize(i), e))
      return emitOpError() << "result dim " << i << " must be " << e
                           << " ([B, H, L, Ev])";
  if (Value mask = getMask()) {
    auto m = cast<RankedTensorType>(mask.getType());
    if (m.getRank() != 4)
      return emitOpError() << "mask must have rank 4, got rank "
                           << m.getRank();
    SmallVector<int64_t> scores{q.getDimSize(0), q.getDimSize(1),
                                q.getDimSize(2), k.getDimSize(2)};
    for (int64_t d = 0; d < 4; ++d)
      if (m.getDimSize(d) != 1 && !compatibleDim(m.getDimSize(d), scores[d]))
        return emitOpError() << "mask dim " << d << " (" << m.getDimSize(d)
                             << ") must be 1 or the scores' (" << scores[d]
                             << ")";
    if (m.getElementType() != q.getElementType())
      return emitOpError("mask must have the query's element type");
  }
  if (getScale() && !std::isfinite(getScale()->convertToDouble()))
    return emitOpError("scale must be finite");
  return success();
}

LogicalResult AttentionOp::reifyReturnTypeShapes(
    OpBuilder &b, ValueRange operands, SmallVectorImpl<Value> &shapes) {
  Location loc = getLoc();
  auto q = getDims(b, loc, operands[0]), v = getDims(b, loc, operands[2]);
  return packShape(b, loc, {q[0], q[1], q[2], v[3]}, shapes);
}

#define GET_OP_CLASSES
#include "disc/Dialect/Disc/DiscOps.cpp.inc"
