//===- LowerLibraryCalls.cpp - library ops -> RAL calls -------------------===//
#include "disc/Conversion/Passes.h"
#include "disc/Conversion/SizeChecks.h"
#include "disc/Dialect/Disc/DiscDialect.h"
#include "disc/Transforms/Passes.h"

#include "disc/Runtime/RalApi.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <optional>

namespace disc {
#define GEN_PASS_DEF_DISCLOWERLIBRARYCALLS
#include "disc/Conversion/Passes.h.inc"
} // namespace disc

using namespace mlir;
using namespace disc;

namespace {

Value cIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value cI64(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 64);
}

/// "f32", "f16", "bf16" or failure.
FailureOr<std::string> librarySuffix(Type elementType) {
  if (elementType.isF32())
    return std::string("f32");
  if (elementType.isF16())
    return std::string("f16");
  if (elementType.isBF16())
    return std::string("bf16");
  return failure();
}

/// The RAL context argument of the function containing `op`.
FailureOr<Value> ralContext(Operation *op) {
  auto func = op->getParentOfType<func::FuncOp>();
  if (!func || func.getNumArguments() == 0 ||
      !func.getArgAttr(0, kRalContextAttr))
    return failure();
  return func.getArgument(0);
}

/// Declares (once) `func.func private @name(!llvm.ptr, memref<*xT> x
/// numMemrefs, i64 x numScalars[, memref<*xf64>, memref<*xT> x
/// kMaxEpilogueOperands], trailingScalars...) attributes
/// {llvm.emit_c_interface}`; the bracketed part with `withEpilogue`
/// (RalApi.h's `_post_` entry points).
func::FuncOp declareRalFunction(ModuleOp module, StringRef name,
                                Type elementType, unsigned numMemrefs,
                                unsigned numScalars, bool withEpilogue = false,
                                ArrayRef<Type> trailingScalars = {}) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToStart(module.getBody());
  MLIRContext *ctx = module.getContext();
  SmallVector<Type> inputs{LLVM::LLVMPointerType::get(ctx)};
  for (unsigned i = 0; i < numMemrefs; ++i)
    inputs.push_back(UnrankedMemRefType::get(elementType, 0));
  for (unsigned i = 0; i < numScalars; ++i)
    inputs.push_back(b.getI64Type());
  if (withEpilogue) {
    inputs.push_back(UnrankedMemRefType::get(b.getF64Type(), 0));
    for (int i = 0; i < ral::kMaxEpilogueOperands; ++i)
      inputs.push_back(UnrankedMemRefType::get(elementType, 0));
  }
  inputs.append(trailingScalars.begin(), trailingScalars.end());
  auto func = func::FuncOp::create(b, module.getLoc(), name,
                                   b.getFunctionType(inputs, {}));
  func.setPrivate();
  func->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
  return func;
}

/// An operand as an unranked memref of any layout (read only).
Value operandBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  auto layout = StridedLayoutAttr::get(
      b.getContext(), ShapedType::kDynamic,
      SmallVector<int64_t>(type.getRank(), ShapedType::kDynamic));
  auto memrefType =
      MemRefType::get(type.getShape(), type.getElementType(), layout);
  auto toBuffer =
      bufferization::ToBufferOp::create(b, loc, memrefType, tensor);
  toBuffer.setReadOnly(true);
  return memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(type.getElementType(), 0), toBuffer);
}

/// Result buffer of `type` with the given dims.
Value allocResult(OpBuilder &b, Location loc, RankedTensorType type,
                  ArrayRef<Value> dims) {
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  return memref::AllocOp::create(b, loc, memrefType, dynamicSizes(type, dims));
}

/// A fresh buffer for `op`'s (single) result, its dims reified from the
/// operands.
FailureOr<Value> allocOpResult(OpBuilder &b, Operation *op) {
  auto dims = reifyResultDims(b, op);
  if (failed(dims))
    return op->emitOpError("cannot compute the result shape");
  return allocResult(b, op->getLoc(),
                     cast<RankedTensorType>(op->getResult(0).getType()), *dims);
}

Value resultTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   Value buffer) {
  auto toTensor = bufferization::ToTensorOp::create(b, loc, type, buffer);
  toTensor.setRestrict(true);
  toTensor.setWritable(true);
  return toTensor;
}

Value shapeOf(OpBuilder &b, Location loc, ArrayRef<Value> dims) {
  return tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({(int64_t)dims.size()}, b.getIndexType()),
      dims);
}

Value product(OpBuilder &b, Location loc, ArrayRef<Value> dims) {
  Value p = cIndex(b, loc, 1);
  for (Value d : dims)
    p = arith::MulIOp::create(b, loc, p, d);
  return p;
}

int64_t staticProduct(RankedTensorType type, ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims) {
    if (type.isDynamicDim(d))
      return ShapedType::kDynamic;
    p *= type.getDimSize(d);
  }
  return p;
}

/// Brings `value` to rank 3 [B, X, Y] with B = prod(group0), X = prod(group1),
/// Y = prod(group2), after permuting its dims to group0 ++ group1 ++ group2
/// (a disc.transpose only when that order is not already the natural one).
Value toRank3(OpBuilder &b, Location loc, Value value,
              ArrayRef<int64_t> group0, ArrayRef<int64_t> group1,
              ArrayRef<int64_t> group2) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> perm(group0);
  perm.append(group1.begin(), group1.end());
  perm.append(group2.begin(), group2.end());
  if (!llvm::equal(perm, llvm::seq<int64_t>(0, type.getRank()))) {
    SmallVector<int64_t> shape;
    for (int64_t p : perm)
      shape.push_back(type.getDimSize(p));
    value = TransposeOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), value,
        perm);
  }
  SmallVector<Value> dims = getDims(b, loc, value);
  auto pt = cast<RankedTensorType>(value.getType());
  size_t n0 = group0.size(), n1 = group1.size();
  auto range = [&](size_t from, size_t count) {
    return ArrayRef<Value>(dims).slice(from, count);
  };
  auto staticRange = [&](size_t from, size_t count) {
    SmallVector<int64_t> idx;
    for (size_t i = from; i < from + count; ++i)
      idx.push_back(i);
    return staticProduct(pt, idx);
  };
  SmallVector<int64_t> shape3{staticRange(0, n0), staticRange(n0, n1),
                              staticRange(n0 + n1, group2.size())};
  auto type3 = RankedTensorType::get(shape3, type.getElementType());
  if (pt == type3)
    return value;
  SmallVector<Value> dims3{product(b, loc, range(0, n0)),
                           product(b, loc, range(n0, n1)),
                           product(b, loc, range(n0 + n1, group2.size()))};
  return DynamicReshapeOp::create(b, loc, type3, value,
                                  shapeOf(b, loc, dims3));
}

SmallVector<int64_t> complement(int64_t rank, ArrayRef<int64_t> a,
                                ArrayRef<int64_t> b) {
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < rank; ++i)
    if (!llvm::is_contained(a, i) && !llvm::is_contained(b, i))
      out.push_back(i);
  return out;
}

bool isNaturalOrder(ArrayRef<int64_t> a, ArrayRef<int64_t> b,
                    ArrayRef<int64_t> c) {
  SmallVector<int64_t> all(a);
  all.append(b.begin(), b.end());
  all.append(c.begin(), c.end());
  return llvm::equal(all, llvm::seq<int64_t>(0, all.size()));
}

// The compiler's post-op kinds are the runtime's (RalApi.h).
static_assert((int64_t)PostOpKind::Add == (int64_t)ral::PostOpKind::Add &&
              (int64_t)PostOpKind::Minimum ==
                  (int64_t)ral::PostOpKind::Minimum &&
              (int64_t)PostOpKind::Relu == (int64_t)ral::PostOpKind::Relu &&
              (int64_t)PostOpKind::GeluErf ==
                  (int64_t)ral::PostOpKind::GeluErf);

/// Appends the epilogue arguments of a `_post_` entry point to `args`: the
/// (kind, alpha, beta) triples as a constant f64 buffer, then the operands
/// (after `reshape`, which brings each to the library call's rank), then
/// `filler` in the unused slots.
LogicalResult appendEpilogueArgs(OpBuilder &b, Location loc, Operation *op,
                                 ArrayAttr epilogue, ValueRange operands,
                                 function_ref<Value(Value)> reshape,
                                 Value filler, SmallVectorImpl<Value> &args) {
  if ((int64_t)operands.size() > ral::kMaxEpilogueOperands)
    return op->emitOpError() << "has " << operands.size()
                             << " epilogue operands; the runtime takes at most "
                             << ral::kMaxEpilogueOperands;
  SmallVector<double> triples;
  for (Attribute attr : epilogue) {
    auto step = cast<PostOpAttr>(attr);
    triples.append({(double)(int64_t)step.getKind(),
                    step.getAlpha().convertToDouble(),
                    step.getBeta().convertToDouble()});
  }
  auto stepsType = RankedTensorType::get({(int64_t)triples.size()},
                                         b.getF64Type());
  Value steps = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(stepsType, ArrayRef<double>(triples)));
  args.push_back(operandBuffer(b, loc, steps));
  for (Value operand : operands)
    args.push_back(operandBuffer(b, loc, reshape(operand)));
  for (int64_t i = operands.size(); i < ral::kMaxEpilogueOperands; ++i)
    args.push_back(filler);
  return success();
}

/// "_post_" + the suffix for a library op with an epilogue, else "_" + the
/// suffix; fails for an epilogue on f16/bf16 unless `halfEpilogues`.
FailureOr<std::string> entrySuffix(Operation *op, ArrayAttr epilogue,
                                   StringRef suffix, bool halfEpilogues) {
  if (epilogue.empty())
    return ("_" + suffix).str();
  if (suffix != "f32" && !halfEpilogues)
    return op->emitOpError() << "has an epilogue on " << suffix
                             << "; library epilogues are f32 only";
  return ("_post_" + suffix).str();
}

LogicalResult lowerDotGeneral(DotGeneralOp op, Value ctx,
                              bool halfEpilogues) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto suffix = librarySuffix(op.getLhs().getType().getElementType());
  if (failed(suffix))
    return op.emitOpError()
           << "has element type " << op.getLhs().getType().getElementType()
           << "; the CPU library (oneDNN) supports f32, f16 and bf16";
  auto lhsType = op.getLhs().getType(), rhsType = op.getRhs().getType();
  ArrayRef<int64_t> lb = op.getLhsBatchingDimensions(),
                    lc = op.getLhsContractingDimensions(),
                    rb = op.getRhsBatchingDimensions(),
                    rc = op.getRhsContractingDimensions();
  SmallVector<int64_t> lf = complement(lhsType.getRank(), lb, lc);
  SmallVector<int64_t> rf = complement(rhsType.getRank(), rb, rc);
  // lhs as [B, M, K], or [B, K, M] with transA when that is its natural
  // layout; rhs as [B, K, N], or [B, N, K] with transB.
  bool transA = !isNaturalOrder(lb, lf, lc) && isNaturalOrder(lb, lc, lf);
  bool transB = !isNaturalOrder(rb, rc, rf) && isNaturalOrder(rb, rf, rc);
  Value a = transA ? toRank3(b, loc, op.getLhs(), lb, lc, lf)
                   : toRank3(b, loc, op.getLhs(), lb, lf, lc);
  Value bb = transB ? toRank3(b, loc, op.getRhs(), rb, rf, rc)
                    : toRank3(b, loc, op.getRhs(), rb, rc, rf);
  SmallVector<Value> aDims = getDims(b, loc, a), bDims = getDims(b, loc, bb);
  Value batch = aDims[0], m = transA ? aDims[2] : aDims[1];
  Value n = transB ? bDims[1] : bDims[2];
  auto resultType = cast<RankedTensorType>(op.getType());
  auto aType = cast<RankedTensorType>(a.getType());
  auto bType = cast<RankedTensorType>(bb.getType());
  SmallVector<int64_t> cShape{aType.getDimSize(0),
                              aType.getDimSize(transA ? 2 : 1),
                              bType.getDimSize(transB ? 1 : 2)};
  auto cType = RankedTensorType::get(cShape, resultType.getElementType());
  Value cBuffer = allocResult(b, loc, cType, {batch, m, n});
  ArrayAttr epilogue = op.getEpilogue();
  auto entry = entrySuffix(op, epilogue, *suffix, halfEpilogues);
  if (failed(entry))
    return failure();
  func::FuncOp callee = declareRalFunction(
      op->getParentOfType<ModuleOp>(), "disc_ral_matmul" + *entry,
      resultType.getElementType(), 3, 2, !epilogue.empty());
  Value cUnranked = memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(resultType.getElementType(), 0),
      cBuffer);
  SmallVector<Value> args{ctx,
                          operandBuffer(b, loc, a),
                          operandBuffer(b, loc, bb),
                          cUnranked,
                          cI64(b, loc, transA),
                          cI64(b, loc, transB)};
  if (!epilogue.empty()) {
    // Operands have the result's rank [batch..., lhs free..., rhs free...];
    // the call's result is [B, M, N], each the product of one group.
    int64_t numBatch = lb.size();
    auto groups = [&](int64_t from, int64_t count) {
      return llvm::to_vector(llvm::seq<int64_t>(from, from + count));
    };
    SmallVector<int64_t> g0 = groups(0, numBatch),
                         g1 = groups(numBatch, lf.size()),
                         g2 = groups(numBatch + lf.size(), rf.size());
    if (failed(appendEpilogueArgs(
            b, loc, op, epilogue, op.getEpilogueOperands(),
            [&](Value e) { return toRank3(b, loc, e, g0, g1, g2); }, cUnranked,
            args)))
      return failure();
  }
  func::CallOp::create(b, loc, callee, args);
  Value c = resultTensor(b, loc, cType, cBuffer);
  // Back to [batch..., lhs free..., rhs free...].
  if (cType != resultType) {
    auto dims = reifyResultDims(b, op);
    if (failed(dims))
      return op.emitOpError("cannot compute the result shape");
    c = DynamicReshapeOp::create(b, loc, resultType, c,
                                 shapeOf(b, loc, *dims));
  }
  op.replaceAllUsesWith(c);
  op.erase();
  return success();
}

LogicalResult lowerConvolution(ConvolutionOp op, Value ctx) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto suffix = librarySuffix(op.getLhs().getType().getElementType());
  if (failed(suffix))
    return op.emitOpError()
           << "has element type " << op.getLhs().getType().getElementType()
           << "; the CPU library (oneDNN) supports f32, f16 and bf16";
  auto resultType = cast<RankedTensorType>(op.getType());
  emitConvolutionWindowChecks(b, op);
  FailureOr<Value> out = allocOpResult(b, op);
  if (failed(out))
    return failure();
  ArrayAttr epilogue = op.getEpilogue();
  auto entry = entrySuffix(op, epilogue, *suffix, /*halfEpilogues=*/false);
  if (failed(entry))
    return failure();
  func::FuncOp callee = declareRalFunction(
      op->getParentOfType<ModuleOp>(), "disc_ral_conv" + *entry,
      resultType.getElementType(), 3, 16, !epilogue.empty());
  Value outUnranked = memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(resultType.getElementType(), 0), *out);
  SmallVector<Value> args{ctx, operandBuffer(b, loc, op.getLhs()),
                          operandBuffer(b, loc, op.getRhs()), outUnranked};
  auto pushParams = [&](ArrayRef<int64_t> values, int64_t fill) {
    for (int64_t i = 0; i < 3; ++i)
      args.push_back(
          cI64(b, loc, i < (int64_t)values.size() ? values[i] : fill));
  };
  // A dynamic padding entry is its index operand as i64 (the library
  // rejects a negative value at run time).
  auto pushPadding = [&](ArrayRef<int64_t> statics, ValueRange dynamics) {
    SmallVector<OpFoldResult> mixed = getMixedValues(statics, dynamics, b);
    for (int64_t i = 0; i < 3; ++i) {
      if (i >= (int64_t)mixed.size())
        args.push_back(cI64(b, loc, 0));
      else if (auto value = dyn_cast<Value>(mixed[i]))
        args.push_back(
            arith::IndexCastOp::create(b, loc, b.getI64Type(), value));
      else
        args.push_back(cI64(b, loc, *getConstantIntValue(mixed[i])));
    }
  };
  pushParams(op.getWindowStrides(), 1);
  pushPadding(op.getPaddingLow(), op.getDynamicPaddingLow());
  pushPadding(op.getPaddingHigh(), op.getDynamicPaddingHigh());
  pushParams(op.getRhsDilation(), 1);
  pushParams(op.getLhsDilation().value_or(ArrayRef<int64_t>()), 1);
  args.push_back(cI64(b, loc, op.getFeatureGroupCount()));
  for (int64_t p : op.getPaddingLow())
    if (p < 0 && !ShapedType::isDynamic(p))
      return op.emitOpError("negative convolution padding is not supported");
  for (int64_t p : op.getPaddingHigh())
    if (p < 0 && !ShapedType::isDynamic(p))
      return op.emitOpError("negative convolution padding is not supported");
  if (op.hasLhsDilation()) {
    // The library runs a deconvolution of the undilated input, whose
    // padding is rhs_dilation * (k - 1) minus this one (checked again at
    // run time when the kernel size is dynamic).
    auto kernelType = op.getRhs().getType();
    for (auto [s, stride] : llvm::enumerate(op.getWindowStrides())) {
      if (stride != 1)
        return op.emitOpError("with lhs_dilation, window_strides must be 1 "
                              "(a transposed convolution)");
      int64_t window = kernelType.getDimSize(2 + s);
      if (ShapedType::isDynamic(window))
        continue;
      int64_t span = op.getRhsDilation()[s] * (window - 1);
      auto exceeds = [&](int64_t pad) {
        return !ShapedType::isDynamic(pad) && pad > span;
      };
      if (exceeds(op.getPaddingLow()[s]) || exceeds(op.getPaddingHigh()[s]))
        return op.emitOpError()
               << "with lhs_dilation, padding must be at most rhs_dilation * "
                  "(kernel size - 1) = "
               << span << " in spatial dim " << s;
    }
  }
  if (!epilogue.empty() &&
      failed(appendEpilogueArgs(
          b, loc, op, epilogue, op.getEpilogueOperands(),
          [](Value e) { return e; }, outUnranked, args)))
    return failure();
  func::CallOp::create(b, loc, callee, args);
  op.replaceAllUsesWith(resultTensor(b, loc, resultType, *out));
  op.erase();
  return success();
}

/// `disc_ral_conv_backward_weights_<t>(ctx, input, output gradient, kernel
/// gradient, strides[3], padLo[3], padHi[3], dilations[3], lhsDilations[3],
/// groups)`: the convolution's parameter list (the input dilations are 1).
LogicalResult lowerConvolutionBackwardWeights(ConvolutionBackwardWeightsOp op,
                                              Value ctx) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Type elementType = op.getInput().getType().getElementType();
  auto suffix = librarySuffix(elementType);
  if (failed(suffix))
    return op.emitOpError()
           << "has element type " << elementType
           << "; the CPU library (oneDNN) supports f32, f16 and bf16";
  auto resultType = cast<RankedTensorType>(op.getType());
  FailureOr<Value> out = allocOpResult(b, op);
  if (failed(out))
    return failure();
  func::FuncOp callee = declareRalFunction(
      op->getParentOfType<ModuleOp>(),
      "disc_ral_conv_backward_weights_" + *suffix, elementType, 3, 16);
  Value outUnranked = memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(elementType, 0), *out);
  SmallVector<Value> args{ctx, operandBuffer(b, loc, op.getInput()),
                          operandBuffer(b, loc, op.getOutputGradient()),
                          outUnranked};
  auto pushParams = [&](ArrayRef<int64_t> values, int64_t fill) {
    for (int64_t i = 0; i < 3; ++i)
      args.push_back(
          cI64(b, loc, i < (int64_t)values.size() ? values[i] : fill));
  };
  pushParams(op.getWindowStrides(), 1);
  pushParams(op.getPaddingLow(), 0);
  pushParams(op.getPaddingHigh(), 0);
  pushParams(op.getRhsDilation(), 1);
  pushParams({}, 1);
  args.push_back(cI64(b, loc, op.getFeatureGroupCount()));
  func::CallOp::create(b, loc, callee, args);
  op.replaceAllUsesWith(resultTensor(b, loc, resultType, *out));
  op.erase();
  return success();
}

/// The op's scale, or 1 / sqrt(head dim) (computed at run time when the
/// head dim is dynamic), as an f64.
Value attentionScale(OpBuilder &b, Location loc, AttentionOp op) {
  if (std::optional<APFloat> scale = op.getScale())
    return arith::ConstantOp::create(
        b, loc, b.getF64FloatAttr(scale->convertToDouble()));
  auto queryType = op.getQuery().getType();
  if (!queryType.isDynamicDim(3))
    return arith::ConstantOp::create(
        b, loc,
        b.getF64FloatAttr(1.0 / std::sqrt((double)queryType.getDimSize(3))));
  Value headDim = tensor::DimOp::create(b, loc, op.getQuery(), 3);
  Value asInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), headDim);
  Value asFloat = arith::UIToFPOp::create(b, loc, b.getF64Type(), asInt);
  Value root = math::SqrtOp::create(b, loc, asFloat);
  Value one = arith::ConstantOp::create(b, loc, b.getF64FloatAttr(1.0));
  return arith::DivFOp::create(b, loc, one, root);
}

LogicalResult lowerAttention(AttentionOp op, Value ctx) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Type elementType = op.getQuery().getType().getElementType();
  if (!elementType.isF32())
    return op.emitOpError() << "has element type " << elementType
                            << "; the CPU attention kernel supports f32";
  auto resultType = cast<RankedTensorType>(op.getType());
  FailureOr<Value> out = allocOpResult(b, op);
  if (failed(out))
    return failure();
  // (ctx, q, k, v, mask, out, has_mask, causal, scale)
  func::FuncOp callee = declareRalFunction(
      op->getParentOfType<ModuleOp>(), "disc_ral_attention_f32", elementType,
      5, 2, /*withEpilogue=*/false, {b.getF64Type()});
  Value outUnranked = memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(elementType, 0), *out);
  Value mask = op.getMask();
  SmallVector<Value> args{ctx,
                          operandBuffer(b, loc, op.getQuery()),
                          operandBuffer(b, loc, op.getKey()),
                          operandBuffer(b, loc, op.getValue()),
                          mask ? operandBuffer(b, loc, mask) : outUnranked,
                          outUnranked,
                          cI64(b, loc, mask ? 1 : 0),
                          cI64(b, loc, op.getCausal() ? 1 : 0),
                          attentionScale(b, loc, op)};
  func::CallOp::create(b, loc, callee, args);
  op.replaceAllUsesWith(resultTensor(b, loc, resultType, *out));
  op.erase();
  return success();
}

/// The element type's name in the sort entry points ("f32", "i64", "i1").
FailureOr<std::string> sortSuffix(Type elementType) {
  if (auto suffix = librarySuffix(elementType); succeeded(suffix))
    return suffix;
  if (elementType.isF64())
    return std::string("f64");
  if (auto integer = dyn_cast<IntegerType>(elementType))
    return "i" + std::to_string(integer.getWidth());
  return failure();
}

LogicalResult lowerSort(SortOp op, Value ctx) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto valuesType = cast<RankedTensorType>(op.getValues().getType());
  auto indicesType = cast<RankedTensorType>(op.getIndices().getType());
  Type elementType = valuesType.getElementType();
  FailureOr<std::string> suffix = sortSuffix(elementType);
  if (failed(suffix))
    return op.emitOpError() << "has element type " << elementType
                            << ", which the runtime's sort does not take";
  auto dims = reifyResultDims(b, op);
  if (failed(dims))
    return op.emitOpError("cannot compute the result shape");
  Value values = allocResult(b, loc, valuesType, *dims);
  Value indices = allocResult(b, loc, indicesType, *dims);
  // (ctx, input, values, indices, dim, descending)
  std::string name = "disc_ral_sort_" + *suffix;
  auto module = op->getParentOfType<ModuleOp>();
  auto callee = module.lookupSymbol<func::FuncOp>(name);
  Type unranked = UnrankedMemRefType::get(elementType, 0);
  Type unrankedIndices = UnrankedMemRefType::get(b.getI64Type(), 0);
  if (!callee) {
    OpBuilder top(module.getBodyRegion());
    top.setInsertionPointToStart(module.getBody());
    SmallVector<Type> inputs{LLVM::LLVMPointerType::get(op.getContext()),
                             unranked, unranked, unrankedIndices,
                             b.getI64Type(), b.getI64Type()};
    callee = func::FuncOp::create(top, module.getLoc(), name,
                                  top.getFunctionType(inputs, {}));
    callee.setPrivate();
    callee->setAttr("llvm.emit_c_interface", UnitAttr::get(op.getContext()));
  }
  SmallVector<Value> args{
      ctx, operandBuffer(b, loc, op.getOperand()),
      memref::CastOp::create(b, loc, unranked, values),
      memref::CastOp::create(b, loc, unrankedIndices, indices),
      cI64(b, loc, op.getDimension()), cI64(b, loc, op.getDescending() ? 1 : 0)};
  func::CallOp::create(b, loc, callee, args);
  op.getValues().replaceAllUsesWith(resultTensor(b, loc, valuesType, values));
  op.getIndices().replaceAllUsesWith(
      resultTensor(b, loc, indicesType, indices));
  op.erase();
  return success();
}

struct LowerLibraryCallsPass
    : public disc::impl::DiscLowerLibraryCallsBase<LowerLibraryCallsPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<DotGeneralOp, ConvolutionOp, ConvolutionBackwardWeightsOp,
              AttentionOp, SortOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      FailureOr<Value> ctx = ralContext(op);
      if (failed(ctx)) {
        op->emitOpError("needs the RAL context: its function has no "
                        "disc.ral_context argument (run disc-add-ral-context)");
        return signalPassFailure();
      }
      LogicalResult result =
          TypeSwitch<Operation *, LogicalResult>(op)
              .Case([&](DotGeneralOp dot) {
                return lowerDotGeneral(dot, *ctx, halfEpilogues);
              })
              .Case([&](ConvolutionOp conv) {
                return lowerConvolution(conv, *ctx);
              })
              .Case([&](ConvolutionBackwardWeightsOp conv) {
                return lowerConvolutionBackwardWeights(conv, *ctx);
              })
              .Case([&](AttentionOp attention) {
                return lowerAttention(attention, *ctx);
              })
              .Case([&](SortOp sort) { return lowerSort(sort, *ctx); });
      if (failed(result))
        return signalPassFailure();
    }
  }
};

} // namespace
