//===- FusionCost.cpp - what fusion may recompute -------------------------===//
#include "FusionCost.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;

bool disc::isExpensiveToRecompute(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp)
    return true;
  WalkResult found = op->walk([](Operation *inner) {
    if (isa<math::MathDialect>(inner->getDialect()) ||
        isa<arith::DivFOp, arith::RemFOp, arith::DivSIOp, arith::DivUIOp,
            arith::RemSIOp, arith::RemUIOp, arith::FloorDivSIOp,
            arith::CeilDivSIOp, tensor::ExtractOp>(inner))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return found.wasInterrupted();
}

bool disc::isCheapToDuplicate(linalg::GenericOp producer) {
  if (producer->getNumResults() != 1 || !producer.hasPureTensorSemantics() ||
      producer.getNumParallelLoops() != producer.getNumLoops() ||
      isExpensiveToRecompute(producer))
    return false;
  for (OpOperand *input : producer.getDpsInputOperands()) {
    if (!isa<ShapedType>(input->get().getType()))
      continue; // a scalar
    if (producer.getMatchingIndexingMap(input).getNumResults() >=
        producer.getNumLoops())
      return false;
  }
  // The init is only a shape unless the body reads it.
  return !producer.payloadUsesValueFromOperand(producer.getDpsInitOperand(0));
}

llvm::SmallVector<unsigned> disc::broadcastLoops(OpOperand &use) {
  llvm::SmallVector<unsigned> dropped;
  auto consumer = dyn_cast<linalg::LinalgOp>(use.getOwner());
  if (!consumer)
    return dropped;
  llvm::SmallBitVector unused =
      getUnusedDimsBitVector({consumer.getMatchingIndexingMap(&use)});
  for (unsigned loop : unused.set_bits())
    dropped.push_back(loop);
  return dropped;
}
