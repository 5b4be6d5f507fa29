//===- DiscDialect.cpp - the disc dialect ---------------------------------===//
#include "disc/Dialect/Disc/DiscDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace disc;

#include "disc/Dialect/Disc/DiscOpsDialect.cpp.inc"
#include "disc/Dialect/Disc/DiscOpsEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "disc/Dialect/Disc/DiscOpsAttrs.cpp.inc"

namespace {
/// Every disc op is pure and region-free: calls to functions made of them
/// can always be inlined (the entry must become one function).
struct DiscInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Operation *, bool) const final {
    return true;
  }
  bool isLegalToInline(Region *, Region *, bool, IRMapping &) const final {
    return true;
  }
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void DiscDialect::initialize() {
  addInterfaces<DiscInlinerInterface>();
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

std::string disc::locationString(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn()))
        .str();
  if (auto name = dyn_cast<NameLoc>(loc))
    return locationString(name.getChildLoc());
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return locationString(callSite.getCallee());
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (!isa<UnknownLoc>(inner))
        return locationString(inner);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << loc;
  return text;
}

std::string disc::opLabel(Operation *op) {
  return (op->getName().getStringRef() + " at " +
          locationString(op->getLoc()))
      .str();
}
