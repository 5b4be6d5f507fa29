//===- DiscDialect.cpp - the disc dialect ---------------------------------===//
#include "disc/Dialect/Disc/DiscDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace disc;

#include "disc/Dialect/Disc/DiscOpsDialect.cpp.inc"
#include "disc/Dialect/Disc/DiscOpsEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "disc/Dialect/Disc/DiscOpsAttrs.cpp.inc"

void DiscDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "disc/Dialect/Disc/DiscOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "disc/Dialect/Disc/DiscOpsAttrs.cpp.inc"
      >();
}

Operation *DiscDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  auto elements = llvm::dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}
