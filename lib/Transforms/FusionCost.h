//===- FusionCost.h - what fusion may recompute --------------*- C++ -*-===//
//
// Fusing a producer into a consumer that reads it through a broadcast (the
// consumer's indexing map drops a loop dim) recomputes the producer once per
// element along the dropped dims. That is free for a copy or an add and
// expensive for a gather or a transcendental: swin's relative-position bias
// (a gather, a sigmoid) broadcast over 49 windows became 49x its work inside
// the softmax kernel. Both loop/input fusion and stitch fusion ask these.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_TRANSFORMS_FUSIONCOST_H
#define DISC_TRANSFORMS_FUSIONCOST_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace disc {

/// True when `op`'s body holds work worth not repeating: a math op (exp,
/// tanh, erf, ...), a division or remainder, or a gather (tensor.extract).
bool isExpensiveToRecompute(mlir::Operation *op);

/// The dims the consumer of `use` loops over but does not index the used
/// value with (a broadcast), as loop positions; empty for a permutation.
llvm::SmallVector<unsigned> broadcastLoops(mlir::OpOperand &use);

/// True for a single-result, all-parallel generic that is cheap to compute
/// again in each consumer rather than materialise once: not expensive to
/// recompute, and every tensor it reads is smaller than what it writes (a
/// fill, a broadcast constant or bias, possibly with cheap arithmetic on
/// top). Reading it from memory in every consumer costs more than that.
bool isCheapToDuplicate(mlir::linalg::GenericOp producer);

} // namespace disc

#endif // DISC_TRANSFORMS_FUSIONCOST_H
