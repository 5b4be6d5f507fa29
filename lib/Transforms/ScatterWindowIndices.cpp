//===- ScatterWindowIndices.cpp - scatter windows, not single elements ----===//
//
// A scatter whose index vector names every operand dim, with the positions
// along some dims given by an iota, becomes a scatter of windows along
// those dims, and its index tensor shrinks to the other components.
// See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "disc/Analysis/ShapeConstraints.h"
#include "disc/Dialect/Disc/DiscDialect.h"
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace disc {
#define GEN_PASS_DEF_DISCSCATTERWINDOWINDICES
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

/// How deep `isConstantAlong` looks through elementwise ops.
constexpr int kMaxDepth = 8;

/// The iota dimension of `value` if an iota makes it, else -1.
int64_t iotaDimOf(Value value) {
  if (auto iota = value.getDefiningOp<disc::IotaOp>())
    return iota.getIotaDimension();
  if (auto iota = value.getDefiningOp<disc::DynamicIotaOp>())
    return iota.getIotaDimension();
  return -1;
}

/// Whether `value` holds the same element at every position along `dim`
/// (so any one position along it stands for all), as far as its producers
/// show: splat constants, iotas along another dim, broadcasts that expand
/// (or add) `dim`, and elementwise ops of such values.
bool isConstantAlong(Value value, int64_t dim, int depth = 0) {
  Operation *def = value.getDefiningOp();
  if (!def || depth > kMaxDepth)
    return false;
  if (auto constant = dyn_cast<disc::ConstantOp>(def)) {
    auto elements = dyn_cast<DenseElementsAttr>(constant.getValue());
    return elements && elements.isSplat();
  }
  if (isa<disc::IotaOp, disc::DynamicIotaOp>(def))
    return iotaDimOf(value) != dim;
  auto expands = [&](Value operand, ArrayRef<int64_t> dims) {
    auto type = cast<RankedTensorType>(operand.getType());
    for (auto [i, d] : llvm::enumerate(dims))
      if (d == dim)
        return type.getDimSize(i) == 1;
    return true; // `dim` is added by the broadcast
  };
  if (auto broadcast = dyn_cast<disc::BroadcastInDimOp>(def))
    return expands(broadcast.getOperand(), broadcast.getBroadcastDimensions());
  if (auto broadcast = dyn_cast<disc::DynamicBroadcastInDimOp>(def))
    return expands(broadcast.getOperand(), broadcast.getBroadcastDimensions());
  if (def->hasTrait<OpTrait::Elementwise>() ||
      isa<disc::SelectOp, disc::ClampOp>(def)) {
    auto rank = cast<RankedTensorType>(value.getType()).getRank();
    return llvm::all_of(def->getOperands(), [&](Value operand) {
      auto type = dyn_cast<RankedTensorType>(operand.getType());
      if (type && type.getRank() == 0)
        return true; // a scalar clamp bound
      return type && type.getRank() == rank &&
             isConstantAlong(operand, dim, depth + 1);
    });
  }
  return false;
}

/// The rewrite of one scatter: `components[k]` is index component k as a
/// tensor of the scatter's batch shape; the batch dims in `windowDims`
/// (ascending) become update window dims, the components in `kept` stay in
/// the index vector.
struct Plan {
  SmallVector<Value> components;
  SmallVector<int64_t> windowDims;
  SmallVector<int64_t> kept;
  int64_t batchRank = 0;
};

std::optional<Plan> planFor(disc::ScatterOp scatter,
                            disc::ShapeConstraints &shapes) {
  if (!scatter.getUpdateWindowDims().empty())
    return std::nullopt;
  Value indices = scatter.getScatterIndices();
  auto indicesType = cast<RankedTensorType>(indices.getType());
  int64_t batchRank = indicesType.getRank() - 1;
  if (scatter.getIndexVectorDim() != batchRank)
    return std::nullopt;
  ArrayRef<int64_t> toOperand = scatter.getScatterDimsToOperandDims();
  // The index vector names every operand dim once.
  int64_t operandRank = scatter.getOperand().getType().getRank();
  if ((int64_t)toOperand.size() != operandRank)
    return std::nullopt;
  SmallVector<int64_t> named(toOperand);
  llvm::sort(named);
  for (int64_t d = 0; d < operandRank; ++d)
    if (named[d] != d)
      return std::nullopt;
  auto components = shapes.coordinateComponents(indices, batchRank);
  if (!components || components->size() != toOperand.size())
    return std::nullopt;
  Plan plan;
  plan.batchRank = batchRank;
  plan.components = std::move(*components);
  // A batch dim becomes a window dim when exactly one component is an iota
  // along it and every other component is constant along it; the operand
  // dims of the windows must keep the batch dims' order.
  SmallVector<bool> isWindowComponent(toOperand.size(), false);
  int64_t previousOperandDim = -1;
  for (int64_t dim = 0; dim < batchRank; ++dim) {
    SmallVector<int64_t> iotas;
    for (auto [k, component] : llvm::enumerate(plan.components))
      if (iotaDimOf(component) == dim)
        iotas.push_back(k);
    if (iotas.size() != 1)
      continue;
    int64_t k = iotas.front();
    if (isWindowComponent[k] || toOperand[k] < previousOperandDim)
      continue;
    bool othersConstant = true;
    for (auto [j, component] : llvm::enumerate(plan.components))
      if ((int64_t)j != k && !isConstantAlong(component, dim))
        othersConstant = false;
    if (!othersConstant)
      continue;
    isWindowComponent[k] = true;
    previousOperandDim = toOperand[k];
    plan.windowDims.push_back(dim);
  }
  for (int64_t k = 0; k < (int64_t)toOperand.size(); ++k)
    if (!isWindowComponent[k])
      plan.kept.push_back(k);
  if (plan.windowDims.empty() || plan.kept.empty())
    return std::nullopt;
  return plan;
}

/// Dim `i` of `value`, read without keeping `value` alive where possible:
/// a constant when static, a broadcast's output shape element.
Value sizeOf(OpBuilder &b, Location loc, Value value, int64_t i) {
  int64_t size = cast<RankedTensorType>(value.getType()).getDimSize(i);
  if (!ShapedType::isDynamic(size))
    return arith::ConstantIndexOp::create(b, loc, size);
  if (auto broadcast = value.getDefiningOp<disc::DynamicBroadcastInDimOp>())
    return tensor::ExtractOp::create(
        b, loc, broadcast.getOutputDimensions(),
        ValueRange{arith::ConstantIndexOp::create(b, loc, i)});
  return tensor::DimOp::create(b, loc, value, i);
}

/// `value` with its unit dims `dropped` removed (a reshape).
Value dropUnitDims(OpBuilder &b, Location loc, Value value,
                   ArrayRef<int64_t> dropped) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape;
  SmallVector<Value> sizes;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    if (llvm::is_contained(dropped, i))
      continue;
    shape.push_back(type.getDimSize(i));
    sizes.push_back(sizeOf(b, loc, value, i));
  }
  auto newType = type.clone(shape);
  if (newType.hasStaticShape())
    return disc::ReshapeOp::create(b, loc, newType, value);
  return disc::DynamicReshapeOp::create(
      b, loc, newType, value, tensor::FromElementsOp::create(b, loc, sizes));
}

/// The piece for a broadcast component (an index expanded along the window
/// dims, `idx.view(-1, 1).expand_as(src)`): the broadcast's operand without
/// the unit dims it expands along the window dims, broadcast to the piece
/// shape directly, so the full-size broadcast is never built. Null for
/// other components.
Value broadcastPiece(OpBuilder &b, Location loc, Value value,
                     ArrayRef<int64_t> windowDims, RankedTensorType pieceType,
                     ArrayRef<Value> pieceSizes) {
  Value operand;
  ArrayRef<int64_t> dims, nonexpanding;
  if (auto broadcast = value.getDefiningOp<disc::BroadcastInDimOp>()) {
    operand = broadcast.getOperand();
    dims = broadcast.getBroadcastDimensions();
  } else if (auto broadcast =
                 value.getDefiningOp<disc::DynamicBroadcastInDimOp>()) {
    operand = broadcast.getOperand();
    dims = broadcast.getBroadcastDimensions();
    if (auto known = broadcast.getKnownNonexpandingDimensions())
      nonexpanding = *known;
  } else {
    return {};
  }
  // Result dim -> piece dim: the batch dims keep their order, window dims
  // have none; the piece's last dim is the index vector's unit dim.
  SmallVector<int64_t> pieceDimOf;
  int64_t next = 0;
  for (int64_t i = 0, e = cast<RankedTensorType>(value.getType()).getRank();
       i < e; ++i)
    pieceDimOf.push_back(llvm::is_contained(windowDims, i) ? -1 : next++);
  SmallVector<int64_t> dropped, keptDims, keptNonexpanding;
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (pieceDimOf[d] >= 0) {
      if (llvm::is_contained(nonexpanding, (int64_t)i))
        keptNonexpanding.push_back((int64_t)keptDims.size());
      keptDims.push_back(pieceDimOf[d]);
      continue;
    }
    // isConstantAlong proved it: a window dim is expanded from size 1.
    dropped.push_back(i);
  }
  Value reduced = dropUnitDims(b, loc, operand, dropped);
  if (pieceType.hasStaticShape())
    return disc::BroadcastInDimOp::create(b, loc, pieceType, reduced,
                                          keptDims);
  return disc::DynamicBroadcastInDimOp::create(
      b, loc, pieceType, reduced,
      tensor::FromElementsOp::create(b, loc, pieceSizes),
      b.getDenseI64ArrayAttr(keptDims),
      keptNonexpanding.empty() ? DenseI64ArrayAttr()
                               : b.getDenseI64ArrayAttr(keptNonexpanding));
}

/// Component `value` at position 0 of the window dims, reshaped to
/// [batch dims without the window dims..., 1]: a piece of the new indices.
Value indexPiece(OpBuilder &b, Location loc, Value value,
                 ArrayRef<int64_t> windowDims) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<int64_t> slicedShape, pieceShape;
  SmallVector<Value> limits, pieceSizes;
  for (int64_t i = 0; i < rank; ++i) {
    if (llvm::is_contained(windowDims, i)) {
      slicedShape.push_back(1);
      limits.push_back(one);
      continue;
    }
    Value size = sizeOf(b, loc, value, i);
    slicedShape.push_back(type.getDimSize(i));
    pieceShape.push_back(type.getDimSize(i));
    limits.push_back(size);
    pieceSizes.push_back(size);
  }
  pieceShape.push_back(1);
  pieceSizes.push_back(one);
  auto pieceType = type.clone(pieceShape);
  if (Value piece =
          broadcastPiece(b, loc, value, windowDims, pieceType, pieceSizes))
    return piece;
  auto slicedType = type.clone(slicedShape);
  if (type.hasStaticShape()) {
    SmallVector<int64_t> starts(rank, 0), steps(rank, 1);
    Value sliced = disc::SliceOp::create(b, loc, slicedType, value, starts,
                                         slicedShape, steps);
    return disc::ReshapeOp::create(b, loc, pieceType, sliced);
  }
  Value starts = tensor::FromElementsOp::create(
      b, loc, SmallVector<Value>(rank, zero));
  Value steps =
      tensor::FromElementsOp::create(b, loc, SmallVector<Value>(rank, one));
  Value sliced = disc::RealDynamicSliceOp::create(
      b, loc, slicedType, value, starts,
      tensor::FromElementsOp::create(b, loc, limits), steps);
  return disc::DynamicReshapeOp::create(
      b, loc, pieceType, sliced,
      tensor::FromElementsOp::create(b, loc, pieceSizes));
}

void rewrite(disc::ScatterOp scatter, const Plan &plan) {
  OpBuilder b(scatter);
  Location loc = scatter.getLoc();
  ArrayRef<int64_t> toOperand = scatter.getScatterDimsToOperandDims();
  SmallVector<Value> pieces;
  SmallVector<int64_t> keptOperandDims;
  for (int64_t k : plan.kept) {
    pieces.push_back(indexPiece(b, loc, plan.components[k], plan.windowDims));
    keptOperandDims.push_back(toOperand[k]);
  }
  int64_t newBatchRank = plan.batchRank - (int64_t)plan.windowDims.size();
  Value indices = pieces.front();
  if (pieces.size() > 1) {
    auto pieceType = cast<RankedTensorType>(pieces.front().getType());
    SmallVector<int64_t> shape(pieceType.getShape());
    shape.back() = (int64_t)pieces.size();
    indices = disc::ConcatenateOp::create(b, loc, pieceType.clone(shape),
                                          pieces, newBatchRank);
  }
  SmallVector<int64_t> inserted(keptOperandDims);
  llvm::sort(inserted);
  auto windowed = disc::ScatterOp::create(
      b, loc, scatter.getType(), scatter.getOperand(), indices,
      scatter.getUpdates(), plan.windowDims, inserted, keptOperandDims,
      newBatchRank, scatter.getKind());
  if (Attribute dims = scatter->getAttr(disc::DiscDialect::kDimsAttrName))
    windowed->setAttr(disc::DiscDialect::kDimsAttrName, dims);
  scatter.replaceAllUsesWith(windowed.getResult());
  scatter.erase();
}

struct ScatterWindowIndicesPass
    : public disc::impl::DiscScatterWindowIndicesBase<
          ScatterWindowIndicesPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<disc::ScatterOp> scatters;
    func.walk([&](disc::ScatterOp op) { scatters.push_back(op); });
    if (scatters.empty())
      return;
    // Plans first: the analysis describes the function as it is now.
    disc::ShapeConstraints shapes(func);
    SmallVector<std::pair<disc::ScatterOp, Plan>> plans;
    for (disc::ScatterOp scatter : scatters)
      if (std::optional<Plan> plan = planFor(scatter, shapes))
        plans.emplace_back(scatter, std::move(*plan));
    for (auto &[scatter, plan] : plans)
      rewrite(scatter, plan);
  }
};

} // namespace
