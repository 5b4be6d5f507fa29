//===- ShapeConstraints.cpp - which dynamic dims must be equal ------------===//
#include "disc/Analysis/ShapeConstraints.h"

#include "disc/Dialect/Disc/DiscDialect.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>

using namespace mlir;
using namespace disc;

ShapeConstraints::ShapeConstraints(func::FuncOp func) {
  for (BlockArgument arg : func.getArguments())
    if (ArrayAttr dims = dimNamesOf(arg))
      joinSymbolic(arg, dims);
  func.walk([&](Operation *op) {
    visit(op);
    if (op->getNumResults() == 1)
      if (ArrayAttr dims = dimNamesOf(op->getResult(0)))
        joinSymbolic(op->getResult(0), dims);
  });
}

ArrayAttr ShapeConstraints::dimNamesOf(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    if (!func || !arg.getOwner()->isEntryBlock())
      return {};
    return func.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(),
                                            DiscDialect::kDimsAttrName);
  }
  Operation *op = value.getDefiningOp();
  if (!op || op->getNumResults() != 1)
    return {};
  return op->getAttrOfType<ArrayAttr>(DiscDialect::kDimsAttrName);
}

void ShapeConstraints::joinSymbolic(Value value, ArrayAttr dims) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || (int64_t)dims.size() != type.getRank())
    return; // the verifier reports malformed attributes
  for (auto [d, attr] : llvm::enumerate(dims)) {
    auto text = dyn_cast<StringAttr>(attr);
    int64_t ignored;
    if (!text || !text.getValue().getAsInteger(10, ignored))
      continue; // static sizes are in the type
    expression[Key{value, (int64_t)d}] = text.getValue().str();
    auto [it, inserted] =
        firstWithSymbol.try_emplace(text.getValue(), Key{value, (int64_t)d});
    int64_t cls = classOf(value, d);
    if (symbol[cls].empty())
      symbol[cls] = text.getValue().str();
    if (!inserted)
      join(it->second.first, it->second.second, value, d, nullptr);
  }
}

int64_t ShapeConstraints::idOf(Value value, int64_t dim) {
  auto [it, inserted] = ids.try_emplace(Key{value, dim}, parent.size());
  if (inserted) {
    parent.push_back(it->second);
    auto type = cast<RankedTensorType>(value.getType());
    staticSize.push_back(type.getDimSize(dim));
    reason.push_back(nullptr);
    symbol.emplace_back();
  }
  return it->second;
}

int64_t ShapeConstraints::find(int64_t id) {
  while (parent[id] != id) {
    parent[id] = parent[parent[id]];
    id = parent[id];
  }
  return id;
}

int64_t ShapeConstraints::classOf(Value value, int64_t dim) {
  return find(idOf(value, dim));
}

int64_t ShapeConstraints::staticSizeOf(int64_t classId) {
  return staticSize[find(classId)];
}

std::string ShapeConstraints::reasonOf(int64_t classId) {
  int64_t root = find(classId);
  Operation *op = reason[root];
  if (!op && !symbol[root].empty())
    return "symbolic dim " + symbol[root];
  if (!op)
    return "the argument's own type";
  return opLabel(op);
}

void ShapeConstraints::DimProduct::multiply(const DimProduct &other) {
  coefficient *= other.coefficient;
  factors.append(other.factors.begin(), other.factors.end());
  llvm::sort(factors);
}

ShapeConstraints::DimProduct ShapeConstraints::productOf(Value value,
                                                         int64_t dim) {
  DimProduct product;
  int64_t cls = classOf(value, dim);
  int64_t size = staticSizeOf(cls);
  if (!ShapedType::isDynamic(size)) {
    product.coefficient = size;
    return product;
  }
  auto className = [&](int64_t c) { return "c" + std::to_string(find(c)); };
  auto it = expression.find(Key{value, dim});
  if (it == expression.end()) {
    product.factors.push_back(className(cls));
    return product;
  }
  // "12*s0*s1": integers and identifiers joined by single '*'.
  SmallVector<StringRef> tokens;
  StringRef(it->second).split(tokens, '*');
  DimProduct parsed;
  for (StringRef token : tokens) {
    token = token.trim();
    int64_t constant;
    if (!token.getAsInteger(10, constant)) {
      parsed.coefficient *= constant;
      continue;
    }
    bool identifier =
        !token.empty() && (isalpha(token[0]) || token[0] == '_') &&
        llvm::all_of(token, [](char c) { return isalnum(c) || c == '_'; });
    if (!identifier) { // a sum, a power, a division: one opaque factor
      product.factors.push_back(className(cls));
      return product;
    }
    auto symbolKey = firstWithSymbol.find(token);
    parsed.factors.push_back(symbolKey == firstWithSymbol.end()
                                 ? "sym:" + token.str()
                                 : className(classOf(symbolKey->second.first,
                                                     symbolKey->second.second)));
  }
  llvm::sort(parsed.factors);
  return parsed;
}

std::optional<SmallVector<SmallVector<int64_t, 2>>>
ShapeConstraints::reshapeGroups(Value from, Value to) {
  auto fromType = dyn_cast<RankedTensorType>(from.getType());
  auto toType = dyn_cast<RankedTensorType>(to.getType());
  if (!fromType || !toType)
    return std::nullopt;
  bool expanding = toType.getRank() >= fromType.getRank();
  Value narrow = expanding ? from : to, wide = expanding ? to : from;
  int64_t narrowRank = expanding ? fromType.getRank() : toType.getRank();
  int64_t wideRank = expanding ? toType.getRank() : fromType.getRank();
  if (narrowRank == 0)
    return std::nullopt; // a scalar: tensor.reshape handles it
  SmallVector<DimProduct> wideDims;
  for (int64_t i = 0; i < wideRank; ++i)
    wideDims.push_back(productOf(wide, i));
  // Does `part` divide `whole`? (coefficient divides, factors a sub-multiset)
  auto divides = [](const DimProduct &part, const DimProduct &whole) {
    if (part.coefficient == 0 || whole.coefficient % part.coefficient != 0)
      return false;
    return std::includes(whole.factors.begin(), whole.factors.end(),
                         part.factors.begin(), part.factors.end());
  };
  SmallVector<SmallVector<int64_t, 2>> groups;
  int64_t next = 0;
  for (int64_t n = 0; n < narrowRank; ++n) {
    DimProduct target = productOf(narrow, n);
    SmallVector<int64_t, 2> group;
    DimProduct accumulated;
    // A unit dim of the narrow side takes one unit dim of the wide side.
    if (target.isOne()) {
      if (next >= wideRank || !wideDims[next].isOne())
        return std::nullopt;
      group.push_back(next++);
    } else {
      while (next < wideRank && !(accumulated == target)) {
        DimProduct candidate = accumulated;
        candidate.multiply(wideDims[next]);
        if (!divides(candidate, target))
          return std::nullopt;
        accumulated = candidate;
        group.push_back(next++);
      }
      if (!(accumulated == target))
        return std::nullopt;
    }
    // Trailing unit dims of the wide side join this group, unless the next
    // narrow dim is itself a unit dim that needs one.
    while (next < wideRank && wideDims[next].isOne() &&
           (n + 1 == narrowRank || !productOf(narrow, n + 1).isOne()))
      group.push_back(next++);
    groups.push_back(group);
  }
  if (next != wideRank)
    return std::nullopt;
  return groups;
}

void ShapeConstraints::join(Value a, int64_t dimA, Value b, int64_t dimB,
                            Operation *why) {
  int64_t ra = classOf(a, dimA), rb = classOf(b, dimB);
  if (ra == rb)
    return;
  parent[rb] = ra;
  if (ShapedType::isDynamic(staticSize[ra]))
    staticSize[ra] = staticSize[rb];
  if (!reason[ra])
    reason[ra] = reason[rb] ? reason[rb] : why;
  if (symbol[ra].empty())
    symbol[ra] = symbol[rb];
}

void ShapeConstraints::joinAllDims(Value a, Value b, Operation *why) {
  auto ta = cast<RankedTensorType>(a.getType());
  auto tb = cast<RankedTensorType>(b.getType());
  if (ta.getRank() != tb.getRank())
    return;
  for (int64_t i = 0; i < ta.getRank(); ++i)
    join(a, i, b, i, why);
}

void ShapeConstraints::visit(Operation *op) {
  if (op->getNumResults() != 1 ||
      !isa<RankedTensorType>(op->getResult(0).getType()) ||
      op->getDialect() == nullptr ||
      op->getDialect()->getNamespace() != DiscDialect::getDialectNamespace())
    return;
  Value result = op->getResult(0);
  int64_t rank = cast<RankedTensorType>(result.getType()).getRank();
  // Elementwise ops: every operand of the result's rank has its shape.
  if (op->hasTrait<OpTrait::Elementwise>()) {
    for (Value operand : op->getOperands())
      joinAllDims(result, operand, op);
    return;
  }
  TypeSwitch<Operation *>(op)
      .Case([&](SelectOp select) {
        joinAllDims(result, select.getPred(), op);
        joinAllDims(result, select.getOnTrue(), op);
        joinAllDims(result, select.getOnFalse(), op);
      })
      .Case([&](ClampOp clamp) {
        joinAllDims(result, clamp.getOperand(), op);
        joinAllDims(result, clamp.getMin(), op);
        joinAllDims(result, clamp.getMax(), op);
      })
      .Case([&](TransposeOp t) {
        for (auto [i, p] : llvm::enumerate(t.getPermutation()))
          join(result, i, t.getOperand(), p, op);
      })
      .Case([&](ConcatenateOp c) {
        for (Value input : c.getInputs())
          for (int64_t i = 0; i < rank; ++i)
            if (i != (int64_t)c.getDimension())
              join(result, i, input, i, op);
      })
      .Case([&](ReduceOp r) {
        int64_t out = 0;
        for (int64_t i = 0, e = r.getOperand().getType().getRank(); i < e;
             ++i)
          if (!llvm::is_contained(r.getDimensions(), i))
            join(result, out++, r.getOperand(), i, op);
      })
      .Case([&](ScatterOp s) {
        joinAllDims(result, s.getOperand(), op);
        // The updates' batch dims (those not in update_window_dims) are
        // the indices' dims other than index_vector_dim, in order.
        Value indices = s.getScatterIndices(), updates = s.getUpdates();
        int64_t indicesRank =
            cast<RankedTensorType>(indices.getType()).getRank();
        int64_t updatesRank =
            cast<RankedTensorType>(updates.getType()).getRank();
        int64_t j = 0;
        for (int64_t u = 0; u < updatesRank; ++u) {
          if (llvm::is_contained(s.getUpdateWindowDims(), u))
            continue;
          if (j == s.getIndexVectorDim())
            ++j;
          if (j >= indicesRank)
            break;
          join(indices, j++, updates, u, op);
        }
      })
      .Case([&](ReverseOp r) { joinAllDims(result, r.getOperand(), op); })
      .Case([&](ScanOp r) { joinAllDims(result, r.getOperand(), op); })
      .Case([&](SortOp r) {
        joinAllDims(r.getValues(), r.getOperand(), op);
        joinAllDims(r.getIndices(), r.getOperand(), op);
      })
      .Case([&](DotGeneralOp d) {
        Value lhs = d.getLhs(), rhs = d.getRhs();
        for (auto [l, r] : llvm::zip(d.getLhsBatchingDimensions(),
                                     d.getRhsBatchingDimensions()))
          join(lhs, l, rhs, r, op);
        for (auto [l, r] : llvm::zip(d.getLhsContractingDimensions(),
                                     d.getRhsContractingDimensions()))
          join(lhs, l, rhs, r, op);
        int64_t out = 0;
        for (int64_t l : d.getLhsBatchingDimensions())
          join(result, out++, lhs, l, op);
        auto freeDims = [&](Value v, ArrayRef<int64_t> batch,
                            ArrayRef<int64_t> contract) {
          for (int64_t i = 0, e = cast<RankedTensorType>(v.getType()).getRank();
               i < e; ++i)
            if (!llvm::is_contained(batch, i) &&
                !llvm::is_contained(contract, i))
              join(result, out++, v, i, op);
        };
        freeDims(lhs, d.getLhsBatchingDimensions(),
                 d.getLhsContractingDimensions());
        freeDims(rhs, d.getRhsBatchingDimensions(),
                 d.getRhsContractingDimensions());
      })
      .Case([&](AttentionOp a) {
        Value q = a.getQuery(), k = a.getKey(), v = a.getValue();
        join(q, 0, k, 0, op);
        join(k, 0, v, 0, op);
        join(result, 0, q, 0, op);
        // Heads: key and value agree; query heads are a multiple of them
        // (grouped-query attention), not necessarily equal.
        join(k, 1, v, 1, op);
        join(result, 1, q, 1, op);
        join(q, 3, k, 3, op);
        join(k, 2, v, 2, op);
        join(result, 2, q, 2, op);
        join(result, 3, v, 3, op);
        if (Value mask = a.getMask()) {
          auto maskType = cast<RankedTensorType>(mask.getType());
          // A mask dim that is not a static 1 is the scores' dim.
          Value scoreDims[4] = {q, q, q, k};
          int64_t scoreIndex[4] = {0, 1, 2, 2};
          for (int64_t d = 0; d < 4; ++d)
            if (!maskType.isDynamicDim(d) && maskType.getDimSize(d) != 1)
              join(mask, d, scoreDims[d], scoreIndex[d], op);
        }
      })
      .Case([&](ConvolutionBackwardWeightsOp c) {
        join(c.getInput(), 0, c.getOutputGradient(), 0, op);
        join(result, 0, c.getOutputGradient(), 1, op);
      })
      .Case([&](ConvolutionOp c) {
        join(result, 0, c.getLhs(), 0, op);
        join(result, 1, c.getRhs(), 0, op);
        if (c.getFeatureGroupCount() == 1)
          join(c.getLhs(), 1, c.getRhs(), 1, op);
      })
      .Case([&](DynamicBroadcastInDimOp b) {
        // An operand dim equals its output dim unless it is a static 1 (or
        // a dynamic dim that may be 1, unless declared non-expanding).
        auto operandType = b.getOperand().getType();
        auto known = b.getKnownNonexpandingDimensions();
        for (auto [i, d] : llvm::enumerate(b.getBroadcastDimensions()))
          if ((!operandType.isDynamicDim(i) &&
               operandType.getDimSize(i) != 1) ||
              (known && llvm::is_contained(*known, (int64_t)i)))
            join(result, d, b.getOperand(), i, op);
      })
      .Default([](Operation *) {});
}

bool ShapeConstraints::sameSize(Value a, int64_t dimA, Value b, int64_t dimB) {
  int64_t sizeA = cast<RankedTensorType>(a.getType()).getDimSize(dimA);
  int64_t sizeB = cast<RankedTensorType>(b.getType()).getDimSize(dimB);
  if (!ShapedType::isDynamic(sizeA) || !ShapedType::isDynamic(sizeB))
    return sizeA == sizeB;
  return areEqual(a, dimA, b, dimB);
}

std::optional<SmallVector<Value>>
ShapeConstraints::coordinateComponents(Value indices, int64_t indexVectorDim) {
  auto indicesType = cast<RankedTensorType>(indices.getType());
  if (indexVectorDim != indicesType.getRank() - 1 || indexVectorDim == 0)
    return std::nullopt;
  auto concat = indices.getDefiningOp<ConcatenateOp>();
  if (!concat || (int64_t)concat.getDimension() != indexVectorDim)
    return std::nullopt;
  SmallVector<Value> components;
  for (Value input : concat.getInputs()) {
    if (cast<RankedTensorType>(input.getType()).getDimSize(indexVectorDim) != 1)
      return std::nullopt;
    Operation *reshape = input.getDefiningOp();
    if (!isa_and_present<ReshapeOp, DynamicReshapeOp>(reshape))
      return std::nullopt;
    Value component = reshape->getOperand(0);
    if (cast<RankedTensorType>(component.getType()).getRank() != indexVectorDim)
      return std::nullopt;
    for (int64_t i = 0; i < indexVectorDim; ++i)
      if (!sameSize(component, i, input, i))
        return std::nullopt;
    components.push_back(component);
  }
  return components;
}
