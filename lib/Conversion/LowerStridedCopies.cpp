//===- LowerStridedCopies.cpp - strided memref.copy -> linalg.copy --------===//
#include "disc/Conversion/Passes.h"

namespace disc {
#define GEN_PASS_DEF_DISCLOWERSTRIDEDCOPIES
#include "disc/Conversion/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

bool isIdentityLayout(Value memref) {
  auto type = dyn_cast<MemRefType>(memref.getType());
  return type && type.getLayout().isIdentity();
}

struct LowerStridedCopiesPass
    : public disc::impl::DiscLowerStridedCopiesBase<LowerStridedCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      auto source = dyn_cast<MemRefType>(copy.getSource().getType());
      auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
      // Ranked memrefs only; unranked ones have no loop nest to become.
      if (!source || !target || source.getRank() == 0)
        return;
      if (isIdentityLayout(copy.getSource()) &&
          isIdentityLayout(copy.getTarget()))
        return; // one memcpy
      copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    }
  }
};

} // namespace
