//===- TransposeAfterCollapse.cpp - collapse first, transpose after --------===//
//
// reshape(transpose(x)) -> transpose(reshape(x)) when the reshape only merges
// dims that the transpose keeps together and in order. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "disc/Analysis/ShapeConstraints.h"
#include "disc/Dialect/Disc/DiscDialect.h"
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"

namespace disc {
#define GEN_PASS_DEF_DISCTRANSPOSEAFTERCOLLAPSE
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

/// The rewrite of one collapsing reshape of a transpose: `order` lists the
/// reshape's result dims in the order their source dims have in the
/// transpose's operand; `permutation` is the transpose to apply after
/// reshaping the operand in that order.
struct Plan {
  SmallVector<int64_t> order;
  SmallVector<int64_t> permutation;
};

std::optional<Plan> planFor(disc::TransposeOp transpose, Operation *reshape,
                            disc::ShapeConstraints &shapes) {
  auto sourceType = cast<RankedTensorType>(transpose.getOperand().getType());
  auto resultType = cast<RankedTensorType>(reshape->getResult(0).getType());
  if (resultType.getRank() >= sourceType.getRank())
    return std::nullopt;
  auto groups =
      shapes.reshapeGroups(transpose.getResult(), reshape->getResult(0));
  if (!groups)
    return std::nullopt;
  ArrayRef<int64_t> permutation = transpose.getPermutation();
  // Each group must come from consecutive operand dims, in order.
  SmallVector<int64_t> firstSourceDim;
  for (ArrayRef<int64_t> group : *groups) {
    for (size_t i = 1; i < group.size(); ++i)
      if (permutation[group[i]] != permutation[group[i - 1]] + 1)
        return std::nullopt;
    firstSourceDim.push_back(permutation[group.front()]);
  }
  Plan plan;
  plan.order = llvm::to_vector(llvm::seq<int64_t>(0, groups->size()));
  llvm::sort(plan.order, [&](int64_t a, int64_t b) {
    return firstSourceDim[a] < firstSourceDim[b];
  });
  // Result dim g of the old reshape is dim position(g) of the new one.
  plan.permutation = invertPermutationVector(plan.order);
  return plan;
}

/// `attr` (a disc.dims array) with its entries in `order`, or null.
Attribute permuteDims(Attribute attr, ArrayRef<int64_t> order) {
  auto dims = dyn_cast_if_present<ArrayAttr>(attr);
  if (!dims || dims.size() != order.size())
    return {};
  return ArrayAttr::get(attr.getContext(),
                        applyPermutation(dims.getValue(), order));
}

void rewrite(disc::TransposeOp transpose, Operation *reshape,
             const Plan &plan) {
  OpBuilder b(reshape);
  Location loc = reshape->getLoc();
  auto resultType = cast<RankedTensorType>(reshape->getResult(0).getType());
  auto newType =
      resultType.clone(applyPermutation(resultType.getShape(), plan.order));
  Value collapsed;
  if (auto dynamic = dyn_cast<disc::DynamicReshapeOp>(reshape)) {
    SmallVector<Value> sizes;
    for (int64_t dim : plan.order) {
      Value index = arith::ConstantIndexOp::create(b, loc, dim);
      sizes.push_back(tensor::ExtractOp::create(b, loc, dynamic.getOutputShape(),
                                                ValueRange{index}));
    }
    Value shape = tensor::FromElementsOp::create(b, loc, sizes);
    collapsed = disc::DynamicReshapeOp::create(b, loc, newType,
                                               transpose.getOperand(), shape);
  } else {
    collapsed = disc::ReshapeOp::create(b, loc, newType, transpose.getOperand());
  }
  StringRef dimsName = disc::DiscDialect::kDimsAttrName;
  Attribute dims = reshape->getAttr(dimsName);
  if (Attribute permuted = permuteDims(dims, plan.order))
    collapsed.getDefiningOp()->setAttr(dimsName, permuted);
  auto moved = disc::TransposeOp::create(b, loc, resultType, collapsed,
                                         plan.permutation);
  if (dims)
    moved->setAttr(dimsName, dims);
  reshape->getResult(0).replaceAllUsesWith(moved.getResult());
  reshape->erase();
  if (transpose->use_empty())
    transpose->erase();
}

struct TransposeAfterCollapsePass
    : public disc::impl::DiscTransposeAfterCollapseBase<
          TransposeAfterCollapsePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<Operation *> reshapes;
    func.walk([&](Operation *op) {
      if (isa<disc::ReshapeOp, disc::DynamicReshapeOp>(op) &&
          op->getOperand(0).getDefiningOp<disc::TransposeOp>())
        reshapes.push_back(op);
    });
    if (reshapes.empty())
      return;
    // Plans first: the analysis describes the function as it is now.
    disc::ShapeConstraints shapes(func);
    SmallVector<std::pair<Operation *, Plan>> plans;
    for (Operation *reshape : reshapes) {
      auto transpose =
          reshape->getOperand(0).getDefiningOp<disc::TransposeOp>();
      if (std::optional<Plan> plan = planFor(transpose, reshape, shapes))
        plans.emplace_back(reshape, std::move(*plan));
    }
    for (auto &[reshape, plan] : plans)
      rewrite(reshape->getOperand(0).getDefiningOp<disc::TransposeOp>(),
              reshape, plan);
  }
};

} // namespace
