//===- DiscDialect.cpp - the disc dialect ---------------------------------===//
#include "disc/Dialect/Disc/DiscDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
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

Attribute PostOpAttr::parse(AsmParser &parser, Type) {
  StringRef keyword;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() || parser.parseKeyword(&keyword))
    return {};
  std::optional<PostOpKind> kind = symbolizePostOpKind(keyword);
  if (!kind) {
    parser.emitError(loc) << "unknown post-op kind '" << keyword << "'";
    return {};
  }
  double alpha = 0.0, beta = 0.0;
  if (succeeded(parser.parseOptionalComma()) &&
      (parser.parseFloat(alpha) || parser.parseComma() ||
       parser.parseFloat(beta)))
    return {};
  if (parser.parseGreater())
    return {};
  return PostOpAttr::get(parser.getContext(), *kind, alpha, beta);
}

void PostOpAttr::print(AsmPrinter &printer) const {
  printer << '<' << stringifyPostOpKind(getKind());
  if (!getAlpha().isZero() || !getBeta().isZero()) {
    printer << ", ";
    printer.printFloat(getAlpha());
    printer << ", ";
    printer.printFloat(getBeta());
  }
  printer << '>';
}

/// Checks a `disc.dims` value against the type it describes.
static LogicalResult verifyDimsAttr(Attribute attr, Type type,
                                    function_ref<InFlightDiagnostic()> error) {
  auto dims = dyn_cast<ArrayAttr>(attr);
  if (!dims || !llvm::all_of(dims, llvm::IsaPred<StringAttr>))
    return error() << "'" << DiscDialect::kDimsAttrName
                   << "' must be an array of strings";
  // Ranked tensors, and the memrefs they become after bufferization.
  auto tensorType = dyn_cast<ShapedType>(type);
  if (!tensorType || !tensorType.hasRank())
    return error() << "'" << DiscDialect::kDimsAttrName
                   << "' describes a ranked tensor, not " << type;
  if ((int64_t)dims.size() != tensorType.getRank())
    return error() << "'" << DiscDialect::kDimsAttrName << "' has "
                   << dims.size() << " entries for a rank-"
                   << tensorType.getRank() << " tensor";
  for (auto [i, dim] : llvm::enumerate(dims)) {
    int64_t size = tensorType.getDimSize(i);
    StringRef text = cast<StringAttr>(dim).getValue();
    int64_t value;
    if (!ShapedType::isDynamic(size) && !text.getAsInteger(10, value) &&
        value != size)
      return error() << "'" << DiscDialect::kDimsAttrName << "' says dim " << i
                     << " is " << value << " but the type says " << size;
  }
  return success();
}

/// `disc.result_into = r` on argument `argIndex` of a function: r names
/// one of the function's results, of the argument's type.
static LogicalResult verifyResultIntoAttr(Operation *op, unsigned regionIndex,
                                          unsigned argIndex, Attribute value) {
  auto error = [&] {
    return op->emitOpError()
           << "'" << DiscDialect::kResultIntoAttrName << "' on argument "
           << argIndex << ": ";
  };
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function || regionIndex != 0)
    return error() << "only a function's arguments can carry it";
  auto index = dyn_cast<IntegerAttr>(value);
  if (!index)
    return error() << "expected an integer result index, got " << value;
  ArrayRef<Type> results = function.getResultTypes();
  int64_t r = index.getInt();
  if (r < 0 || r >= static_cast<int64_t>(results.size()))
    return error() << "result " << r << " does not exist (the function has "
                   << results.size() << ")";
  if (argIndex >= function.getNumArguments())
    return error() << "the argument does not exist";
  Type argType = function.getArgumentTypes()[argIndex];
  if (results[r] != argType)
    return error() << "result " << r << " has type " << results[r]
                   << ", the argument " << argType;
  return success();
}

LogicalResult DiscDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  if (attr.getName() != kDimsAttrName)
    return success();
  if (op->getNumResults() != 1)
    return op->emitOpError() << "'" << kDimsAttrName
                             << "' needs an op with one result";
  return verifyDimsAttr(attr.getValue(), op->getResult(0).getType(),
                        [&] { return op->emitOpError(); });
}

LogicalResult DiscDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  if (attr.getName() == kResultIntoAttrName)
    return verifyResultIntoAttr(op, regionIndex, argIndex, attr.getValue());
  if (attr.getName() != kDimsAttrName)
    return success();
  Region &region = op->getRegion(regionIndex);
  if (region.empty() || argIndex >= region.front().getNumArguments())
    return op->emitOpError() << "'" << kDimsAttrName
                             << "' on a missing argument";
  return verifyDimsAttr(attr.getValue(),
                        region.front().getArgument(argIndex).getType(),
                        [&] { return op->emitOpError(); });
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
