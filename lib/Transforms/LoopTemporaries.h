//===- LoopTemporaries.h - buffers that live within one loop iteration ----===//
#ifndef DISC_LIB_TRANSFORMS_LOOPTEMPORARIES_H
#define DISC_LIB_TRANSFORMS_LOOPTEMPORARIES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace disc {

/// Whether every use of `buffer` and of its views stays in `region` and
/// none frees it, hands it to a call or returns/yields it.
inline bool staysIn(mlir::Value buffer, mlir::Region *region) {
  llvm::SmallVector<mlir::Value> worklist{buffer};
  while (!worklist.empty()) {
    mlir::Value value = worklist.pop_back_val();
    for (mlir::Operation *user : value.getUsers()) {
      if (!region->isAncestor(user->getParentRegion()) ||
          user->hasTrait<mlir::OpTrait::ReturnLike>() ||
          mlir::isa<mlir::CallOpInterface, mlir::memref::DeallocOp>(user))
        return false;
      if (auto view = mlir::dyn_cast<mlir::ViewLikeOpInterface>(user))
        if (view.getViewSource() == value)
          worklist.append(user->result_begin(), user->result_end());
    }
  }
  return true;
}

/// An allocation inside a loop body, of numbers in the identity layout,
/// that is dead when its iteration ends (staysIn its region): a per-row
/// temporary that needs no allocator.
inline bool isLoopTemporary(mlir::memref::AllocOp alloc) {
  mlir::MemRefType type = alloc.getType();
  return type.getLayout().isIdentity() &&
         type.getElementType().isIntOrFloat() &&
         alloc.getSymbolOperands().empty() &&
         alloc->getParentOfType<mlir::LoopLikeOpInterface>() &&
         staysIn(alloc.getResult(), alloc->getParentRegion());
}

/// Host code at `b`: the bytes of `alloc`'s buffer, the element size
/// times the static dims, times each dynamic size (i1 counts a byte).
inline mlir::Value loopTemporaryBytes(mlir::OpBuilder &b,
                                      mlir::memref::AllocOp alloc) {
  mlir::Location loc = alloc.getLoc();
  mlir::MemRefType type = alloc.getType();
  int64_t staticBytes = (type.getElementTypeBitWidth() + 7) / 8;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (!type.isDynamicDim(d))
      staticBytes *= type.getDimSize(d);
  mlir::Value bytes =
      mlir::arith::ConstantIndexOp::create(b, loc, staticBytes);
  for (mlir::Value size : alloc.getDynamicSizes())
    bytes = mlir::arith::MulIOp::create(b, loc, bytes, size);
  return bytes;
}

} // namespace disc

#endif // DISC_LIB_TRANSFORMS_LOOPTEMPORARIES_H
