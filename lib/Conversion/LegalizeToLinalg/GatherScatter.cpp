//===- GatherScatter.cpp - disc gather and scatter to linalg/scf ---------===//
//
// A gather becomes linalg.generic reading its operand at computed
// coordinates (components read in place of a built coordinate tensor); a
// scatter becomes an scf loop nest over the updates.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

using namespace mlir;
using namespace disc;
using namespace disc::legalize;

namespace disc::legalize {
namespace {

//===----------------------------------------------------------------------===//
// Gather
//===----------------------------------------------------------------------===//

/// Where one element of a gather's index vector is computed, when the
/// start indices are a concatenate along the index vector dim of components
/// each reshaped to [batch..., 1] (aten.index's broadcast coordinates,
/// torch.gather's iotas): the component is read in place of the
/// concatenated tensor, and for a broadcast component its operand, so the
/// [batch..., k] coordinate tensor is never built. (Bilinear upsampling
/// indexes [C, 2H, 2W] with two small vectors; the coordinates would be
/// 2H x 2W x 2 int64, read again for every channel.)
struct IndexComponent {
  Value source;
  /// Per source dim: the batch dim that indexes it, or -1 (always 0: a
  /// broadcast's expanded unit dim).
  SmallVector<int64_t> batchDimOf;
  /// Per source dim: an i1 "expanded at run time" flag, or null.
  SmallVector<Value> expandedAtRunTime;
};


/// How `component` (one coordinate, batch-shaped) is read: from the
/// operand of the broadcast that builds it, if any, else from itself.
static IndexComponent readIndexComponent(ConversionPatternRewriter &rewriter,
                                         Location loc, Value component) {
  IndexComponent result;
  Value source = component;
  ArrayRef<int64_t> dims;
  SmallVector<int64_t> nonexpanding;
  if (auto b = component.getDefiningOp<BroadcastInDimOp>()) {
    source = b.getOperand();
    dims = b.getBroadcastDimensions();
  } else if (auto b = component.getDefiningOp<DynamicBroadcastInDimOp>()) {
    source = b.getOperand();
    dims = b.getBroadcastDimensions();
    if (auto known = b.getKnownNonexpandingDimensions())
      nonexpanding.assign(known->begin(), known->end());
  }
  FailureOr<Value> mapped = rewriter.getRemappedValue(source);
  result.source = succeeded(mapped) && *mapped ? *mapped : source;
  auto sourceType = cast<RankedTensorType>(source.getType());
  for (int64_t i = 0; i < sourceType.getRank(); ++i) {
    if (source == component) {
      result.batchDimOf.push_back(i);
      result.expandedAtRunTime.push_back(nullptr);
      continue;
    }
    int64_t d = dims[i];
    int64_t in = sourceType.getDimSize(i);
    if (in == 1) {
      result.batchDimOf.push_back(-1);
      result.expandedAtRunTime.push_back(nullptr);
      continue;
    }
    result.batchDimOf.push_back(d);
    // The broadcast's own lowering checks that a dim is 1 or the result's.
    if (!ShapedType::isDynamic(in) ||
        llvm::is_contained(nonexpanding, (int64_t)i)) {
      result.expandedAtRunTime.push_back(nullptr);
      continue;
    }
    Value size = tensor::DimOp::create(rewriter, loc, result.source, i);
    result.expandedAtRunTime.push_back(arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::eq, size, cIndex(rewriter, loc, 1)));
  }
  return result;
}

template <typename OpTy>
struct GatherToLinalg : public OpConversionPattern<OpTy> {
  GatherToLinalg(MLIRContext *ctx, const GatherComponents &components)
      : OpConversionPattern<OpTy>(ctx), coordinateComponents(components) {}
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto outDims = reifyResultDims(rewriter, op);
    if (failed(outDims))
      return failure();
    Value operand = adaptor.getOperand();
    Value indices = adaptor.getStartIndices();
    auto type = cast<RankedTensorType>(op.getType());
    auto outType = signlessTensor(type);
    auto inSignless = signlessTensor(operand.getType());
    operand = castTo(rewriter, loc, operand, inSignless);
    int64_t resultRank = type.getRank();
    int64_t operandRank = inSignless.getRank();
    int64_t indicesRank = cast<RankedTensorType>(indices.getType()).getRank();
    int64_t ivd = op.getIndexVectorDim();
    SmallVector<Value> sliceSizes;
    if constexpr (std::is_same_v<OpTy, GatherOp>) {
      for (int64_t s : op.getSliceSizes())
        sliceSizes.push_back(cIndex(rewriter, loc, s));
    } else {
      sliceSizes = getShapeElements(rewriter, loc, adaptor.getSliceSizes());
    }
    SmallVector<Value> operandDims = getDims(rewriter, loc, operand);
    // Largest valid start per operand dim: size - slice size (clamped).
    SmallVector<Value> maxStart;
    for (int64_t d = 0; d < operandRank; ++d)
      maxStart.push_back(arith::SubIOp::create(rewriter, loc, operandDims[d],
                                               sliceSizes[d]));
    // The index vector holds one start per start_index_map entry: a
    // shorter one (a dynamic index_vector_dim) would be read past its end.
    if (ivd < indicesRank)
      disc::emitAssertEqualSizes(rewriter, loc, getDims(rewriter, loc, indices)[ivd],
                  cIndex(rewriter, loc, op.getStartIndexMap().size()),
                  opLabel(op) + ": index_vector_dim " + Twine(ivd) +
                      " of the start indices must have " +
                      Twine(op.getStartIndexMap().size()) + " elements");
    // A slice must fit in the operand (0 <= slice size <= size), unless
    // the result is empty and nothing is read: a row gathered from an
    // operand with no rows would read outside it.
    Value resultEmpty = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::eq,
        product(rewriter, loc, *outDims), cIndex(rewriter, loc, 0));
    for (int64_t d = 0; d < operandRank; ++d) {
      Value fits = arith::AndIOp::create(
          rewriter, loc,
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge,
                                maxStart[d], cIndex(rewriter, loc, 0)),
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge,
                                sliceSizes[d], cIndex(rewriter, loc, 0)));
      assertTrue(rewriter, loc,
                 arith::OrIOp::create(rewriter, loc, fits, resultEmpty),
                 opLabel(op) + ": the slice of operand dim " + Twine(d) +
                     " is larger than the operand (or negative)");
    }
    SmallVector<int64_t> offsetDims(op.getOffsetDims());
    SmallVector<int64_t> collapsed(op.getCollapsedSliceDims());
    SmallVector<int64_t> startIndexMap(op.getStartIndexMap());
    SmallVector<std::optional<IndexComponent>> components(
        startIndexMap.size());
    auto found = coordinateComponents.find(op.getOperation());
    if (found != coordinateComponents.end() &&
        found->second.size() == startIndexMap.size())
      for (auto [k, component] : llvm::enumerate(found->second))
        components[k] = readIndexComponent(rewriter, loc, component);
    Value init = emptyTensor(rewriter, loc, outType, *outDims);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{outType}, ValueRange{}, ValueRange{init},
        SmallVector<AffineMap>{rewriter.getMultiDimIdentityMap(resultRank)},
        SmallVector<utils::IteratorType>(resultRank,
                                         utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> batchIdx, offsetIdx;
          for (int64_t i = 0; i < resultRank; ++i) {
            Value v = linalg::IndexOp::create(b, l, i);
            if (llvm::is_contained(offsetDims, i))
              offsetIdx.push_back(v);
            else
              batchIdx.push_back(v);
          }
          Value zero = cIndex(b, l, 0);
          SmallVector<Value> fullStart(operandRank, zero);
          for (auto [k, d] : llvm::enumerate(startIndexMap)) {
            Value s;
            if (const std::optional<IndexComponent> &c = components[k]) {
              SmallVector<Value> idx;
              for (auto [dim, flag] :
                   llvm::zip(c->batchDimOf, c->expandedAtRunTime)) {
                Value i = dim < 0 ? zero : batchIdx[dim];
                if (flag)
                  i = arith::SelectOp::create(b, l, flag, zero, i);
                idx.push_back(i);
              }
              s = tensor::ExtractOp::create(b, l, c->source, idx);
            } else {
              SmallVector<Value> idx;
              unsigned next = 0;
              for (int64_t j = 0; j < indicesRank; ++j)
                idx.push_back(j == ivd ? cIndex(b, l, k) : batchIdx[next++]);
              s = tensor::ExtractOp::create(b, l, indices, idx);
            }
            s = arith::IndexCastOp::create(b, l, b.getIndexType(), s);
            s = arith::MaxSIOp::create(b, l, s, zero);
            s = arith::MinSIOp::create(b, l, s, maxStart[d]);
            fullStart[d] = s;
          }
          SmallVector<Value> operandIdx;
          unsigned nextOffset = 0;
          for (int64_t d = 0; d < operandRank; ++d) {
            if (llvm::is_contained(collapsed, d)) {
              operandIdx.push_back(fullStart[d]);
              continue;
            }
            operandIdx.push_back(arith::AddIOp::create(
                b, l, fullStart[d], offsetIdx[nextOffset++]));
          }
          Value v = tensor::ExtractOp::create(b, l, operand, operandIdx);
          linalg::YieldOp::create(b, l, v);
        });
    Value result = generic.getResult(0);
    result = castTo(rewriter, loc, result, type);
    rewriter.replaceOp(op, result);
    return success();
  }

private:
  const GatherComponents &coordinateComponents;
};

//===----------------------------------------------------------------------===//
// Scatter: an scf.for nest over the update batch dims (sequential: colliding
// indices combine in order); for each, the window's start is read once and
// checked whole (StableHLO: an out-of-bounds window is skipped), then an
// scf.for nest over the window dims combines the window without per-element
// checks, the innermost loop running along the updates' last dim when it is
// a window dim (a row of PyTorch Geometric's aggregation: vectorizable).
//
// With window threads, the window dims whose operand dims come before every
// indexed dim and that no index names ("leading" dims: the N, C of an
// [N, C, H, W] operand scattered at (h, w)) go around all of that as an
// scf.forall over [1, .., 1, H, W] slices of the operand: the start along
// them is always 0, so the window position along them is the operand
// position, and two iterations never write one element.
//===----------------------------------------------------------------------===//

/// The update combined into `current` for a scatter of `kind`.
static Value scatterCombine(OpBuilder &b, Location loc, ScatterKind kind,
                            Value current, Value update, bool isUnsigned) {
  switch (kind) {
  case ScatterKind::Add:
    return reduceCombine(b, loc, ReduceKind::Sum, current, update, isUnsigned);
  case ScatterKind::Mul:
    return reduceCombine(b, loc, ReduceKind::Prod, current, update,
                         isUnsigned);
  case ScatterKind::Max:
    return reduceCombine(b, loc, ReduceKind::Max, current, update, isUnsigned);
  case ScatterKind::Min:
    return reduceCombine(b, loc, ReduceKind::Min, current, update, isUnsigned);
  default:
    return update;
  }
}

struct ScatterToLoops : public OpConversionPattern<ScatterOp> {
  ScatterToLoops(MLIRContext *ctx, bool windowThreads)
      : OpConversionPattern(ctx), windowThreads(windowThreads) {}

  LogicalResult
  matchAndRewrite(ScatterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value operand = adaptor.getOperand();
    Value indices = adaptor.getScatterIndices();
    Value updates = adaptor.getUpdates();
    auto type = cast<RankedTensorType>(op.getType());
    auto st = signlessTensor(type);
    bool isUnsigned = isUnsignedLike(type.getElementType());
    operand = castTo(rewriter, loc, operand, st);
    updates = castTo(rewriter, loc, updates, signlessTensor(updates.getType()));
    int64_t operandRank = type.getRank();
    int64_t indicesRank = cast<RankedTensorType>(indices.getType()).getRank();
    int64_t ivd = op.getIndexVectorDim();
    SmallVector<int64_t> windowDims(op.getUpdateWindowDims());
    SmallVector<int64_t> inserted(op.getInsertedWindowDims());
    SmallVector<int64_t> toOperand(op.getScatterDimsToOperandDims());
    ScatterKind kind = op.getKind();
    SmallVector<Value> updateDims = getDims(rewriter, loc, updates);
    SmallVector<Value> operandDims = getDims(rewriter, loc, operand);
    SmallVector<Value> batchUbs, windowUbs;
    for (auto [i, size] : llvm::enumerate(updateDims))
      (llvm::is_contained(windowDims, (int64_t)i) ? windowUbs : batchUbs)
          .push_back(size);
    // The loops run over the updates' batch dims and read the indices at
    // the same positions: the two must agree (StableHLO's constraint); the
    // index vector has one entry per scatter_dims_to_operand_dims.
    {
      SmallVector<Value> indexDims = getDims(rewriter, loc, indices);
      if (ivd < indicesRank)
        disc::emitAssertEqualSizes(rewriter, loc, indexDims[ivd],
                    cIndex(rewriter, loc, toOperand.size()),
                    opLabel(op) + ": index_vector_dim " + Twine(ivd) +
                        " of the scatter indices must have " +
                        Twine(toOperand.size()) + " elements");
      unsigned next = 0;
      for (int64_t j = 0; j < indicesRank && next < batchUbs.size(); ++j) {
        if (j == ivd)
          continue;
        disc::emitAssertEqualSizes(rewriter, loc, indexDims[j], batchUbs[next],
                    opLabel(op) + ": scatter_indices dim " + Twine(j) +
                        " differs from updates batch dim " + Twine(next));
        ++next;
      }
    }
    // Per operand dim: its window position (the k-th window dim of the
    // updates covers the k-th operand dim not inserted), or -1.
    SmallVector<int64_t> windowOf(operandRank, -1);
    {
      int64_t k = 0;
      for (int64_t d = 0; d < operandRank; ++d)
        if (!llvm::is_contained(inserted, d))
          windowOf[d] = k++;
    }
    // The leading dims (see the comment above): the threads' dims.
    SmallVector<int64_t> leading;
    if (windowThreads && !toOperand.empty()) {
      int64_t firstIndexed = *llvm::min_element(toOperand);
      for (int64_t d = 0; d < firstIndexed; ++d)
        if (windowOf[d] >= 0)
          leading.push_back(d);
    }
    // A nest of unit-step loops from 0 to `ubs`, carrying `init`.
    auto loopNest = [&](OpBuilder &b, Location l, ValueRange ubs, Value init,
                        function_ref<scf::ValueVector(
                            OpBuilder &, Location, ValueRange, ValueRange)>
                            body) {
      return scf::buildLoopNest(
          b, l, SmallVector<Value>(ubs.size(), cIndex(b, l, 0)), ubs,
          SmallVector<Value>(ubs.size(), cIndex(b, l, 1)), ValueRange{init},
          body);
    };

    // The sequential scatter into `target`: the operand, or a slice of it
    // at `leadingPositions` (one per leading dim, size 1 in the slice).
    auto scatterInto = [&](OpBuilder &builder, Location bl, Value target,
                           ValueRange leadingPositions) -> Value {
      SmallVector<Value> targetDims =
          leading.empty() ? operandDims : getDims(builder, bl, target);
      // The window positions each loop iterates: all window dims but the
      // leading ones, which `leadingPositions` fix.
      SmallVector<Value> loopUbs;
      SmallVector<int64_t> loopWindow; // window position -> loop, or -1
      loopWindow.assign(windowUbs.size(), -1);
      for (int64_t d = 0; d < operandRank; ++d)
        if (windowOf[d] >= 0 && !llvm::is_contained(leading, d)) {
          loopWindow[windowOf[d]] = loopUbs.size();
          loopUbs.push_back(windowUbs[windowOf[d]]);
        }
      scf::LoopNest nest = loopNest(
          builder, bl, batchUbs, target,
          [&](OpBuilder &b, Location l, ValueRange batchIvs,
              ValueRange iterArgs) -> scf::ValueVector {
            Value acc = iterArgs[0];
            Value zero = cIndex(b, l, 0);
            SmallVector<Value> start(operandRank, zero);
            for (auto [k, d] : llvm::enumerate(toOperand)) {
              SmallVector<Value> idx;
              unsigned next = 0;
              for (int64_t j = 0; j < indicesRank; ++j)
                idx.push_back(j == ivd ? cIndex(b, l, k) : batchIvs[next++]);
              Value s = tensor::ExtractOp::create(b, l, indices, idx);
              start[d] = arith::IndexCastOp::create(b, l, b.getIndexType(), s);
            }
            // The whole window in bounds: start >= 0, start + size <= dim
            // (the leading dims are checked once, around the threads).
            Value inBounds = arith::ConstantIntOp::create(b, l, 1, 1);
            for (int64_t d = 0; d < operandRank; ++d) {
              if (llvm::is_contained(leading, d))
                continue;
              Value size = windowOf[d] < 0 ? cIndex(b, l, 1)
                                           : windowUbs[windowOf[d]];
              Value end = arith::AddIOp::create(b, l, start[d], size);
              Value ge = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge,
                                               start[d], zero);
              Value le = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sle,
                                               end, targetDims[d]);
              inBounds = arith::AndIOp::create(
                  b, l, inBounds, arith::AndIOp::create(b, l, ge, le));
            }
            auto ifOp = scf::IfOp::create(
                b, l, inBounds,
                [&](OpBuilder &tb, Location tl) {
                  scf::LoopNest window = loopNest(
                      tb, tl, loopUbs, acc,
                      [&](OpBuilder &wb, Location wl, ValueRange loopIvs,
                          ValueRange windowArgs) -> scf::ValueVector {
                        Value written = windowArgs[0];
                        // Window position k's offset: a loop's, or a
                        // thread's for a leading dim.
                        SmallVector<Value> offset(windowUbs.size());
                        for (auto [k, loop] : llvm::enumerate(loopWindow))
                          if (loop >= 0)
                            offset[k] = loopIvs[loop];
                        for (auto [j, d] : llvm::enumerate(leading))
                          offset[windowOf[d]] = leadingPositions[j];
                        SmallVector<Value> updateIdx;
                        unsigned nextBatch = 0, nextWin = 0;
                        for (int64_t i = 0; i < (int64_t)updateDims.size();
                             ++i)
                          updateIdx.push_back(
                              llvm::is_contained(windowDims, i)
                                  ? offset[nextWin++]
                                  : batchIvs[nextBatch++]);
                        // In the slice, a leading dim's position is 0.
                        SmallVector<Value> targetIdx;
                        for (int64_t d = 0; d < operandRank; ++d) {
                          if (llvm::is_contained(leading, d))
                            targetIdx.push_back(zero);
                          else if (windowOf[d] < 0)
                            targetIdx.push_back(start[d]);
                          else
                            targetIdx.push_back(arith::AddIOp::create(
                                wb, wl, start[d], offset[windowOf[d]]));
                        }
                        Value v = tensor::ExtractOp::create(wb, wl, updates,
                                                            updateIdx);
                        if (kind != ScatterKind::Replace) {
                          Value cur = tensor::ExtractOp::create(
                              wb, wl, written, targetIdx);
                          v = scatterCombine(wb, wl, kind, cur, v, isUnsigned);
                        }
                        return {tensor::InsertOp::create(wb, wl, v, written,
                                                         targetIdx)};
                      });
                  scf::YieldOp::create(tb, tl,
                                       window.results.empty()
                                           ? ValueRange{acc}
                                           : ValueRange{window.results[0]});
                },
                [&](OpBuilder &eb, Location el) {
                  scf::YieldOp::create(eb, el, acc);
                });
            return {ifOp.getResult(0)};
          });
      return nest.results.empty() ? target : nest.results[0];
    };

    Value result;
    if (leading.empty()) {
      result = scatterInto(rewriter, loc, operand, ValueRange{});
    } else {
      // A window longer than its operand dim is out of bounds for every
      // update: no thread runs.
      Value fits = arith::ConstantIntOp::create(rewriter, loc, 1, 1);
      for (int64_t d : leading)
        fits = arith::AndIOp::create(
            rewriter, loc, fits,
            arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sle,
                                  windowUbs[windowOf[d]], operandDims[d]));
      Value zero = cIndex(rewriter, loc, 0);
      SmallVector<OpFoldResult> threadUbs;
      for (int64_t d : leading)
        threadUbs.push_back(arith::SelectOp::create(
                                rewriter, loc, fits, windowUbs[windowOf[d]],
                                zero)
                                .getResult());
      auto forall = scf::ForallOp::create(rewriter, loc, threadUbs,
                                          ValueRange{operand}, std::nullopt);
      OpBuilder body = OpBuilder::atBlockBegin(forall.getBody());
      Value shared = forall.getRegionIterArgs()[0];
      SmallVector<OpFoldResult> offsets(operandRank, body.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes =
          tensor::getMixedSizes(body, loc, shared);
      SmallVector<OpFoldResult> strides(operandRank, body.getIndexAttr(1));
      for (auto [j, d] : llvm::enumerate(leading)) {
        offsets[d] = forall.getInductionVars()[j];
        sizes[d] = body.getIndexAttr(1);
      }
      Value slice = tensor::ExtractSliceOp::create(body, loc, shared, offsets,
                                                   sizes, strides);
      Value written =
          scatterInto(body, loc, slice, forall.getInductionVars());
      body.setInsertionPointToStart(forall.getTerminator().getBody());
      tensor::ParallelInsertSliceOp::create(body, loc, written, shared,
                                            offsets, sizes, strides);
      result = forall.getResult(0);
    }
    result = castTo(rewriter, loc, result, type);
    rewriter.replaceOp(op, result);
    return success();
  }

private:
  bool windowThreads;
};

} // namespace

void populateGatherScatterPatterns(RewritePatternSet &patterns,
                                   const GatherComponents &components,
                                   bool windowThreads) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<GatherToLinalg<GatherOp>, GatherToLinalg<DynamicGatherOp>>(
      ctx, components);
  patterns.add<ScatterToLoops>(ctx, windowThreads);
}

} // namespace disc::legalize
