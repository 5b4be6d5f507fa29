//===- LowerIntegerContractions.cpp - integer dot/conv to linalg ----------===//
//
// oneDNN has no integer matmul or convolution for the types PyTorch uses
// (int64 above all); these become one linalg.generic each, which the
// memory-bound pipeline then tiles, parallelises and vectorises like any
// other loop nest.
//
// With float-depthwise (the cuda targets), float depthwise convolutions
// become one all-parallel linalg.generic over the output whose body loops
// over the window taps, reading the input and kernel by tensor.extract
// (the input only where a tap lies inside it: a tap in the padding adds 0,
// no padded copy). A few
// multiply-adds per output element: memory bound, and elementwise to
// fusion, which joins the batch norm and activation after it (a reduction
// generic would end the fusion there).
//
//===----------------------------------------------------------------------===//
#include "disc/Conversion/Passes.h"
#include "disc/Conversion/SizeChecks.h"
#include "disc/Dialect/Disc/DiscDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace disc {
#define GEN_PASS_DEF_DISCLOWERINTEGERCONTRACTIONS
#include "disc/Conversion/Passes.h.inc"
} // namespace disc

using namespace mlir;
using namespace disc;

namespace {

bool isIntegerOp(Operation *op) {
  return isa<IntegerType>(
      cast<ShapedType>(op->getResult(0).getType()).getElementType());
}

/// A float convolution that float-depthwise lowers: one input and one
/// output channel per group (the kernel [G, 1, k...], G > 1), no input
/// dilation, a static padding of at least 0, no epilogue.
bool isFloatDepthwise(ConvolutionOp op) {
  auto kernelType = cast<RankedTensorType>(op.getRhs().getType());
  auto type = cast<RankedTensorType>(op.getType());
  int64_t groups = op.getFeatureGroupCount();
  auto nonNegative = [](ArrayRef<int64_t> pads) {
    return llvm::all_of(pads, [](int64_t p) { return p >= 0; });
  };
  return isa<FloatType>(type.getElementType()) && groups > 1 &&
         kernelType.getDimSize(0) == groups && kernelType.getDimSize(1) == 1 &&
         !op.hasLhsDilation() && op.getDynamicPaddingLow().empty() &&
         op.getDynamicPaddingHigh().empty() &&
         nonNegative(op.getPaddingLow()) && nonNegative(op.getPaddingHigh()) &&
         op.getEpilogueOperands().empty();
}

/// A zero-filled accumulator of `type` with the sizes `dims`.
Value zeroAccumulator(OpBuilder &b, Location loc, RankedTensorType type,
                      ArrayRef<Value> dims) {
  Value zero = arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(type.getElementType(), 0));
  return linalg::FillOp::create(b, loc, zero, tensor::EmptyOp::create(b, loc, type.getShape(),
                                                type.getElementType(),
                                                dynamicSizes(type, dims))
                                    .getResult())
      .getResult(0);
}

Value dimOf(OpBuilder &b, Location loc, Value tensor, int64_t d) {
  return b.createOrFold<tensor::DimOp>(loc, tensor, d);
}

/// The multiply-accumulate body of both contractions (wraps around in the
/// element type, as PyTorch's integer kernels do).
void multiplyAccumulate(OpBuilder &b, Location loc, ValueRange args) {
  Value product = arith::MulIOp::create(b, loc, args[0], args[1]);
  linalg::YieldOp::create(b, loc,
                          arith::AddIOp::create(b, loc, args[2], product)
                              .getResult());
}

LogicalResult lowerDot(DotGeneralOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getType());
  Value lhs = op.getLhs(), rhs = op.getRhs();
  int64_t lhsRank = cast<RankedTensorType>(lhs.getType()).getRank();
  int64_t rhsRank = cast<RankedTensorType>(rhs.getType()).getRank();
  ArrayRef<int64_t> lb = op.getLhsBatchingDimensions(),
                    rb = op.getRhsBatchingDimensions(),
                    lc = op.getLhsContractingDimensions(),
                    rc = op.getRhsContractingDimensions();
  auto freeDims = [](int64_t rank, ArrayRef<int64_t> batch,
                     ArrayRef<int64_t> contracting) {
    SmallVector<int64_t> free;
    for (int64_t d = 0; d < rank; ++d)
      if (!llvm::is_contained(batch, d) && !llvm::is_contained(contracting, d))
        free.push_back(d);
    return free;
  };
  SmallVector<int64_t> lf = freeDims(lhsRank, lb, lc),
                       rf = freeDims(rhsRank, rb, rc);
  int64_t numBatch = lb.size(), numLhsFree = lf.size(),
          numRhsFree = rf.size(), numContracting = lc.size();
  int64_t numParallel = numBatch + numLhsFree + numRhsFree;
  int64_t numLoops = numParallel + numContracting;

  // The library call's checks, as asserts: paired dims agree at run time.
  for (auto [l, r] : llvm::zip(llvm::concat<const int64_t>(lb, lc),
                               llvm::concat<const int64_t>(rb, rc)))
    emitAssertEqualSizes(b, loc, dimOf(b, loc, lhs, l), dimOf(b, loc, rhs, r),
                   "disc.dot_general: lhs dim " + Twine(l) + " and rhs dim " +
                       Twine(r) + " differ");

  SmallVector<AffineExpr> lhsExprs(lhsRank), rhsExprs(rhsRank), outExprs;
  for (auto [i, d] : llvm::enumerate(lb))
    lhsExprs[d] = b.getAffineDimExpr(i);
  for (auto [i, d] : llvm::enumerate(rb))
    rhsExprs[d] = b.getAffineDimExpr(i);
  for (auto [i, d] : llvm::enumerate(lf))
    lhsExprs[d] = b.getAffineDimExpr(numBatch + i);
  for (auto [i, d] : llvm::enumerate(rf))
    rhsExprs[d] = b.getAffineDimExpr(numBatch + numLhsFree + i);
  for (auto [i, d] : llvm::enumerate(lc))
    lhsExprs[d] = b.getAffineDimExpr(numParallel + i);
  for (auto [i, d] : llvm::enumerate(rc))
    rhsExprs[d] = b.getAffineDimExpr(numParallel + i);
  for (int64_t i = 0; i < numParallel; ++i)
    outExprs.push_back(b.getAffineDimExpr(i));
  MLIRContext *ctx = op.getContext();
  SmallVector<AffineMap> maps = {AffineMap::get(numLoops, 0, lhsExprs, ctx),
                                 AffineMap::get(numLoops, 0, rhsExprs, ctx),
                                 AffineMap::get(numLoops, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iterators(numParallel,
                                             utils::IteratorType::parallel);
  iterators.append(numContracting, utils::IteratorType::reduction);

  auto dims = reifyResultDims(b, op);
  if (failed(dims))
    return op.emitOpError("cannot compute the result shape");
  Value init = zeroAccumulator(b, loc, type, *dims);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{lhs, rhs}, ValueRange{init}, maps,
      iterators, multiplyAccumulate);
  op.replaceAllUsesWith(generic.getResult(0));
  op.erase();
  return success();
}

LogicalResult lowerConvolution(ConvolutionOp op) {
  if (op.hasLhsDilation())
    return op.emitOpError(
        "integer convolution with an input dilation (transposed) is not "
        "supported");
  if (!op.getDynamicPaddingLow().empty() ||
      !op.getDynamicPaddingHigh().empty())
    return op.emitOpError(
        "integer convolution with a dynamic padding is not supported");
  ArrayRef<int64_t> low = op.getPaddingLow(), high = op.getPaddingHigh();
  if (llvm::any_of(low, [](int64_t p) { return p < 0; }) ||
      llvm::any_of(high, [](int64_t p) { return p < 0; }))
    return op.emitOpError(
        "integer convolution with a negative padding is not supported");

  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  auto type = cast<RankedTensorType>(op.getType());
  Type element = type.getElementType();
  Value input = op.getLhs(), kernel = op.getRhs();
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank(), spatial = rank - 2;
  int64_t groups = op.getFeatureGroupCount();
  ArrayRef<int64_t> strides = op.getWindowStrides(),
                    dilation = op.getRhsDilation();

  emitConvolutionWindowChecks(b, op);
  auto dims = reifyResultDims(b, op);
  if (failed(dims))
    return op.emitOpError("cannot compute the result shape");
  Value groupsValue = arith::ConstantIndexOp::create(b, loc, groups);
  // Input channels = groups x kernel dim 1 (the library's check).
  Value channels = dimOf(b, loc, input, 1);
  Value kernelChannels = dimOf(b, loc, kernel, 1);
  emitAssertEqualSizes(
      b, loc, channels,
      b.createOrFold<arith::MulIOp>(loc, kernelChannels, groupsValue),
      "disc.convolution: input channels are not groups x kernel channels");

  // Groups split off the channel dims: input [N, G, C/G, S...], kernel
  // [G, O/G, C/G, K...], result [N, G, O/G, OS...].
  auto splitGroups = [&](Value v, int64_t channelDim,
                         ArrayRef<OpFoldResult> sizes) -> Value {
    auto vType = cast<RankedTensorType>(v.getType());
    SmallVector<ReassociationIndices> reassociation;
    SmallVector<int64_t> shape;
    for (int64_t d = 0, out = 0; d < vType.getRank(); ++d) {
      if (d == channelDim) {
        reassociation.push_back({out, out + 1});
        out += 2;
        int64_t size = vType.getDimSize(d);
        shape.push_back(groups);
        shape.push_back(ShapedType::isDynamic(size) ? ShapedType::kDynamic
                                                    : size / groups);
      } else {
        reassociation.push_back({out++});
        shape.push_back(vType.getDimSize(d));
      }
    }
    return tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, element), v, reassociation,
        sizes);
  };
  auto mixedDims = [&](Value v) {
    SmallVector<OpFoldResult> sizes;
    auto vType = cast<RankedTensorType>(v.getType());
    for (int64_t d = 0; d < vType.getRank(); ++d)
      sizes.push_back(vType.isDynamicDim(d)
                          ? OpFoldResult(dimOf(b, loc, v, d))
                          : OpFoldResult(b.getIndexAttr(vType.getDimSize(d))));
    return sizes;
  };
  auto groupSizes = [&](SmallVector<OpFoldResult> sizes, int64_t channelDim) {
    OpFoldResult total = sizes[channelDim];
    OpFoldResult perGroup =
        isa<Attribute>(total)
            ? OpFoldResult(b.getIndexAttr(
                  cast<IntegerAttr>(cast<Attribute>(total)).getInt() / groups))
            : OpFoldResult(b.createOrFold<arith::DivUIOp>(
                  loc, cast<Value>(total), groupsValue));
    sizes[channelDim] = perGroup;
    sizes.insert(sizes.begin() + channelDim, b.getIndexAttr(groups));
    return sizes;
  };
  // 1. The groups split off the channel dims (before the padding: an
  // expand_shape of a pad is moved above it by elementwise fusion, with
  // sizes that do not dominate it there); 2. zero padding of the spatial
  // dims of the grouped input [N, G, C/G, S...].
  Value groupedInput =
      splitGroups(input, 1, groupSizes(mixedDims(input), 1));
  Value groupedKernel =
      splitGroups(kernel, 0, groupSizes(mixedDims(kernel), 0));
  if (llvm::any_of(low, [](int64_t p) { return p != 0; }) ||
      llvm::any_of(high, [](int64_t p) { return p != 0; })) {
    auto groupedInputType = cast<RankedTensorType>(groupedInput.getType());
    SmallVector<OpFoldResult> padLow(3, b.getIndexAttr(0)),
        padHigh(3, b.getIndexAttr(0));
    SmallVector<int64_t> paddedShape(
        groupedInputType.getShape().take_front(3));
    for (int64_t s = 0; s < spatial; ++s) {
      padLow.push_back(b.getIndexAttr(low[s]));
      padHigh.push_back(b.getIndexAttr(high[s]));
      int64_t size = groupedInputType.getDimSize(3 + s);
      paddedShape.push_back(ShapedType::isDynamic(size)
                                ? ShapedType::kDynamic
                                : size + low[s] + high[s]);
    }
    Value zero =
        arith::ConstantOp::create(b, loc, b.getIntegerAttr(element, 0));
    groupedInput = tensor::PadOp::create(
        b, loc, RankedTensorType::get(paddedShape, element), groupedInput,
        padLow, padHigh, zero);
  }

  SmallVector<int64_t> groupedShape = {type.getDimSize(0), groups};
  int64_t outChannels = type.getDimSize(1);
  groupedShape.push_back(ShapedType::isDynamic(outChannels)
                             ? ShapedType::kDynamic
                             : outChannels / groups);
  llvm::append_range(groupedShape, type.getShape().drop_front(2));
  auto groupedType = RankedTensorType::get(groupedShape, element);
  SmallVector<Value> groupedDims = {(*dims)[0], groupsValue,
                                    b.createOrFold<arith::DivUIOp>(
                                        loc, (*dims)[1], groupsValue)};
  llvm::append_range(groupedDims, ArrayRef<Value>(*dims).drop_front(2));
  Value init = zeroAccumulator(b, loc, groupedType, groupedDims);

  // The input cut to exactly the extent the windows read, (out - 1) *
  // stride + (k - 1) * dilation + 1 per spatial dim: when an output dim is
  // 1, folding unit loops turns `out * stride + k * dilation` into a plain
  // `k * dilation`, whose operand size must then equal the loop range.
  {
    auto inType = cast<RankedTensorType>(groupedInput.getType());
    SmallVector<OpFoldResult> offsets(inType.getRank(), b.getIndexAttr(0)),
        sizes, unitStrides(inType.getRank(), b.getIndexAttr(1));
    SmallVector<int64_t> cutShape(inType.getShape().take_front(3));
    for (int64_t d = 0; d < 3; ++d)
      sizes.push_back(inType.isDynamicDim(d)
                          ? OpFoldResult(dimOf(b, loc, groupedInput, d))
                          : OpFoldResult(b.getIndexAttr(inType.getDimSize(d))));
    bool cuts = false;
    for (int64_t s = 0; s < spatial; ++s) {
      int64_t out = type.getDimSize(2 + s);
      int64_t window = cast<RankedTensorType>(kernel.getType()).getDimSize(2 + s);
      int64_t size = inType.getDimSize(3 + s);
      if (!ShapedType::isDynamic(out) && !ShapedType::isDynamic(window)) {
        int64_t extent =
            std::max<int64_t>((out - 1) * strides[s] + (window - 1) * dilation[s] + 1, 0);
        cuts |= ShapedType::isDynamic(size) || extent != size;
        sizes.push_back(b.getIndexAttr(extent));
        cutShape.push_back(extent);
        continue;
      }
      // extent = max((out - 1) * stride + (k - 1) * dilation + 1, 0)
      auto c = [&](int64_t v) -> Value {
        return arith::ConstantIndexOp::create(b, loc, v);
      };
      Value outV = (*dims)[2 + s];
      Value windowV = dimOf(b, loc, kernel, 2 + s);
      Value extent = arith::AddIOp::create(
          b, loc,
          arith::AddIOp::create(
              b, loc,
              arith::MulIOp::create(b, loc,
                                    arith::SubIOp::create(b, loc, outV, c(1)),
                                    c(strides[s])),
              arith::MulIOp::create(b, loc,
                                    arith::SubIOp::create(b, loc, windowV, c(1)),
                                    c(dilation[s]))),
          c(1));
      extent = arith::MaxSIOp::create(b, loc, extent, c(0));
      sizes.push_back(extent);
      cutShape.push_back(ShapedType::kDynamic);
      cuts = true;
    }
    if (cuts)
      groupedInput = tensor::ExtractSliceOp::create(
          b, loc, RankedTensorType::get(cutShape, element), groupedInput,
          offsets, sizes, unitStrides);
  }

  // 3. Loops (n, g, o, os..., c, k...): parallel, then reduction.
  int64_t numParallel = 3 + spatial, numLoops = numParallel + 1 + spatial;
  auto d = [&](int64_t i) { return b.getAffineDimExpr(i); };
  SmallVector<AffineExpr> inputExprs = {d(0), d(1), d(numParallel)};
  SmallVector<AffineExpr> kernelExprs = {d(1), d(2), d(numParallel)};
  SmallVector<AffineExpr> outExprs = {d(0), d(1), d(2)};
  for (int64_t s = 0; s < spatial; ++s) {
    AffineExpr out = d(3 + s), window = d(numParallel + 1 + s);
    inputExprs.push_back(out * strides[s] + window * dilation[s]);
    kernelExprs.push_back(window);
    outExprs.push_back(out);
  }
  SmallVector<AffineMap> maps = {
      AffineMap::get(numLoops, 0, inputExprs, ctx),
      AffineMap::get(numLoops, 0, kernelExprs, ctx),
      AffineMap::get(numLoops, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iterators(numParallel,
                                             utils::IteratorType::parallel);
  iterators.append(1 + spatial, utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{groupedType}, ValueRange{groupedInput, groupedKernel},
      ValueRange{init}, maps, iterators, multiplyAccumulate);

  SmallVector<ReassociationIndices> merge = {{0}, {1, 2}};
  for (int64_t s = 0; s < spatial; ++s)
    merge.push_back({3 + s});
  Value result = tensor::CollapseShapeOp::create(b, loc, type,
                                                 generic.getResult(0), merge);
  op.replaceAllUsesWith(result);
  op.erase();
  return success();
}

/// out[n, c, o...] = sum over k... of in[n, c, o * stride - low + k *
/// dilation] * kernel[c, 0, k...], taps outside the input reading 0; f16 and
/// bf16 accumulate in f32 (as the libraries do).
LogicalResult lowerFloatDepthwise(ConvolutionOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getType());
  Type element = type.getElementType();
  Type acc = cast<FloatType>(element).getWidth() < 32 ? b.getF32Type()
                                                     : element;
  Value input = op.getLhs(), kernel = op.getRhs();
  int64_t rank = type.getRank(), spatial = rank - 2;
  ArrayRef<int64_t> strides = op.getWindowStrides(),
                    dilation = op.getRhsDilation(), low = op.getPaddingLow();

  emitConvolutionWindowChecks(b, op);
  auto dims = reifyResultDims(b, op);
  if (failed(dims))
    return op.emitOpError("cannot compute the result shape");
  // The library call's check: input channels = groups x kernel dim 1 (1).
  emitAssertEqualSizes(
      b, loc, dimOf(b, loc, input, 1),
      arith::ConstantIndexOp::create(b, loc, op.getFeatureGroupCount()),
      "disc.convolution: input channels are not groups x kernel channels");
  SmallVector<Value> inputSizes, windowSizes;
  for (int64_t s = 0; s < spatial; ++s) {
    inputSizes.push_back(dimOf(b, loc, input, 2 + s));
    windowSizes.push_back(dimOf(b, loc, kernel, 2 + s));
  }
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(), element,
                                       dynamicSizes(type, *dims));
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{}, ValueRange{init}, maps,
      iterators, [&](OpBuilder &gb, Location l, ValueRange) {
        auto c = [&](int64_t v) -> Value {
          return arith::ConstantIndexOp::create(gb, l, v);
        };
        Value zeroIndex = c(0), one = c(1);
        Value batch = linalg::IndexOp::create(gb, l, 0);
        Value channel = linalg::IndexOp::create(gb, l, 1);
        // in = out * stride - low + k * dilation: the first two terms per
        // spatial dim (linalg.index must be in the generic's own body).
        SmallVector<Value> bases;
        for (int64_t s = 0; s < spatial; ++s)
          bases.push_back(arith::SubIOp::create(
              gb, l,
              arith::MulIOp::create(
                  gb, l, linalg::IndexOp::create(gb, l, 2 + s), c(strides[s])),
              c(low[s])));
        // One loop per spatial dim; each level computes its input
        // coordinate and whether it lies inside the input (an unsigned
        // compare also rejects the negative ones of the low padding).
        std::function<Value(OpBuilder &, int64_t, Value, SmallVector<Value>,
                            SmallVector<Value>, Value)>
            loops = [&](OpBuilder &lb, int64_t s, Value sum,
                        SmallVector<Value> inIdx, SmallVector<Value> kIdx,
                        Value inside) -> Value {
          if (s == spatial) {
            // The input is read only inside it (a tap in the padding adds
            // 0): an input with an empty dim has no element to read.
            SmallVector<Value> xIdx = {batch, channel};
            llvm::append_range(xIdx, inIdx);
            Value zero = arith::ConstantOp::create(
                lb, l, cast<TypedAttr>(lb.getZeroAttr(acc)));
            auto read = scf::IfOp::create(
                lb, l, inside,
                [&](OpBuilder &tb, Location tl) {
                  Value x = tensor::ExtractOp::create(tb, tl, input, xIdx);
                  if (acc != element)
                    x = arith::ExtFOp::create(tb, tl, acc, x);
                  scf::YieldOp::create(tb, tl, x);
                },
                [&](OpBuilder &eb, Location el) {
                  scf::YieldOp::create(eb, el, zero);
                });
            SmallVector<Value> wIdx = {channel, zeroIndex};
            llvm::append_range(wIdx, kIdx);
            Value w = tensor::ExtractOp::create(lb, l, kernel, wIdx);
            if (acc != element)
              w = arith::ExtFOp::create(lb, l, acc, w);
            return arith::AddFOp::create(
                lb, l, sum,
                arith::MulFOp::create(lb, l, read.getResult(0), w));
          }
          Value base = bases[s];
          auto loop = scf::ForOp::create(
              lb, l, zeroIndex, windowSizes[s], one, ValueRange{sum},
              [&](OpBuilder &fb, Location fl, Value k, ValueRange carried) {
                Value i = arith::AddIOp::create(
                    fb, fl, base,
                    arith::MulIOp::create(fb, fl, k, c(dilation[s])));
                Value in = arith::CmpIOp::create(
                    fb, fl, arith::CmpIPredicate::ult, i, inputSizes[s]);
                if (inside)
                  in = arith::AndIOp::create(fb, fl, inside, in);
                SmallVector<Value> nextIn = inIdx, nextK = kIdx;
                nextIn.push_back(i);
                nextK.push_back(k);
                scf::YieldOp::create(
                    fb, fl,
                    loops(fb, s + 1, carried[0], nextIn, nextK, in));
              });
          return loop.getResult(0);
        };
        Value zero = arith::ConstantOp::create(
            gb, l, cast<TypedAttr>(gb.getZeroAttr(acc)));
        Value sum = loops(gb, 0, zero, {}, {}, Value());
        if (acc != element)
          sum = arith::TruncFOp::create(gb, l, element, sum);
        linalg::YieldOp::create(gb, l, sum);
      });
  op.replaceAllUsesWith(generic.getResult(0));
  op.erase();
  return success();
}

struct LowerIntegerContractionsPass
    : public disc::impl::DiscLowerIntegerContractionsBase<
          LowerIntegerContractionsPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<DotGeneralOp, ConvolutionOp>(op) && isIntegerOp(op))
        ops.push_back(op);
      else if (auto conv = dyn_cast<ConvolutionOp>(op);
               conv && floatDepthwise && isFloatDepthwise(conv))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      auto conv = dyn_cast<ConvolutionOp>(op);
      LogicalResult lowered =
          !conv                 ? lowerDot(cast<DotGeneralOp>(op))
          : isIntegerOp(conv)   ? lowerConvolution(conv)
                                : lowerFloatDepthwise(conv);
      if (failed(lowered))
        return signalPassFailure();
    }
  }
};

} // namespace
