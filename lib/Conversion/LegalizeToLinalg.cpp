//===- LegalizeToLinalg.cpp - memory-bound disc ops to linalg/tensor ------===//
//
// Every memory-bound disc op becomes linalg on tensors (or tensor ops, or an
// scf loop nest for scatter). Result shapes come from the op's shape
// reification, so everything works for `?` dims; where the op semantics need
// two run-time sizes to agree, a cf.assert checks it (lowered later to a
// runtime error, see disc-ral-lower-asserts). The patterns live by op
// family in LegalizeToLinalg/ (Common.h lists them); this file is the pass.
//
//===----------------------------------------------------------------------===//
#include "LegalizeToLinalg/Common.h"

namespace disc {
#define GEN_PASS_DEF_DISCLEGALIZETOLINALG
#include "disc/Conversion/Passes.h.inc"
} // namespace disc

using namespace mlir;
using namespace disc;
using namespace disc::legalize;

namespace {

struct LegalizeToLinalgPass
    : public disc::impl::DiscLegalizeToLinalgBase<LegalizeToLinalgPass> {
  using DiscLegalizeToLinalgBase::DiscLegalizeToLinalgBase;

  /// A static dim in a result type holds only for some operand sizes when
  /// the sizes come from operands at run time: from a shape operand
  /// (`dynamic_iota %shape : tensor<7x256xi64>`), or from an operand whose
  /// type has a dynamic dim (a pad of a `?` operand typed tensor<9xf32>, a
  /// gather whose `?` start indices give a batch dim typed 4). The lowering
  /// allocates from the type and loops or reads over the operands' sizes,
  /// so a mismatch must be a run-time error naming the op, not a heap
  /// overflow or a read past the operand (found by the mutation fuzzer,
  /// seeds 20783 and 20785). Every disc op whose result sizes can be
  /// reified gets the check; sizes that are equal by construction fold.
  void assertStaticResultDims() {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (!isa<DiscDialect>(op->getDialect()) ||
          !isa<InferShapedTypeOpInterface>(op))
        return;
      bool sizesFromOperands =
          isa<DynamicIotaOp, DynamicBroadcastInDimOp, DynamicReshapeOp,
              DynamicPadOp, RealDynamicSliceOp, DynamicGatherOp>(op) ||
          llvm::any_of(op->getOperandTypes(), [](Type t) {
            auto shaped = dyn_cast<ShapedType>(t);
            return shaped && !shaped.hasStaticShape();
          });
      if (sizesFromOperands)
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      OpBuilder b(op);
      for (auto [index, result] : llvm::enumerate(op->getResults())) {
        auto type = dyn_cast<RankedTensorType>(result.getType());
        if (!type || llvm::all_of(type.getShape(), ShapedType::isDynamic))
          continue;
        auto dims = reifyResultDims(b, op, index);
        if (failed(dims))
          continue;
        for (auto [i, size] : llvm::enumerate(type.getShape()))
          if (!ShapedType::isDynamic(size))
            disc::emitAssertEqualSizes(
                b, op->getLoc(), (*dims)[i], cIndex(b, op->getLoc(), size),
                op->getName().getStringRef() +
                    (op->getNumResults() > 1 ? " result " + Twine(index)
                                             : Twine("")) +
                    ": result dim " + Twine(i) + " is " + Twine(size) +
                    " in its type, but its operands give another size");
      }
      refineOperandFromResult(b, op);
    }
  }

  /// After the checks above, a static result dim is a fact about the
  /// operand dim it comes from. Where that operand dim is `?`, the operand
  /// is cast to the refined type, so that the linalg op built from both
  /// types verifies (linalg.reduce and linalg.transpose compare them: a
  /// reduce typed tensor<?x?xf32> -> tensor<5xf32> failed compilation with
  /// upstream's "init dimensions [5] doesn't match input dimensions").
  /// The cast comes after the checks, so a wrong size is still the check's
  /// run-time error.
  static void refineOperandFromResult(OpBuilder &b, Operation *op) {
    SmallVector<int64_t> operandDimOfResultDim;
    if (auto reduce = dyn_cast<ReduceOp>(op)) {
      int64_t rank =
          cast<RankedTensorType>(reduce.getOperand().getType()).getRank();
      for (int64_t d = 0; d < rank; ++d)
        if (!llvm::is_contained(reduce.getDimensions(), d))
          operandDimOfResultDim.push_back(d);
    } else if (auto transpose = dyn_cast<TransposeOp>(op)) {
      llvm::append_range(operandDimOfResultDim, transpose.getPermutation());
    } else {
      return;
    }
    Value operand = op->getOperand(0);
    auto operandType = cast<RankedTensorType>(operand.getType());
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    SmallVector<int64_t> shape(operandType.getShape());
    bool refined = false;
    for (auto [resultDim, operandDim] : llvm::enumerate(operandDimOfResultDim))
      if (ShapedType::isDynamic(shape[operandDim]) &&
          !resultType.isDynamicDim(resultDim)) {
        shape[operandDim] = resultType.getDimSize(resultDim);
        refined = true;
      }
    if (!refined)
      return;
    b.setInsertionPoint(op);
    op->setOperand(0, b.create<tensor::CastOp>(
                          op->getLoc(), operandType.clone(shape), operand));
  }

  void runOnOperation() override {
    assertStaticResultDims();
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect,
                           arith::ArithDialect, math::MathDialect,
                           scf::SCFDialect, cf::ControlFlowDialect,
                           func::FuncDialect, bufferization::BufferizationDialect,
                           memref::MemRefDialect, LLVM::LLVMDialect>();
    target.addLegalOp<UnrealizedConversionCastOp>();
    target.addIllegalDialect<DiscDialect>();
    // Library ops become runtime calls in disc-lower-library-calls, which
    // runs right before bufferization (see Pipeline.cpp for why).
    target.addLegalOp<DotGeneralOp, ConvolutionOp,
                      ConvolutionBackwardWeightsOp, AttentionOp, SortOp>();
    RewritePatternSet patterns(ctx);
    // Reshape dim groups come from the shape analysis of the unconverted
    // functions.
    ReshapeGroups reshapeGroups;
    GatherComponents gatherComponents;
    getOperation()->walk([&](func::FuncOp func) {
      ShapeConstraints shapes(func);
      func.walk([&](Operation *op) {
        auto recordComponents = [&](auto gather) {
          if (auto components = shapes.coordinateComponents(
                  gather.getStartIndices(), gather.getIndexVectorDim()))
            gatherComponents[op] = std::move(*components);
        };
        if (auto gather = dyn_cast<GatherOp>(op))
          return recordComponents(gather);
        if (auto gather = dyn_cast<DynamicGatherOp>(op))
          return recordComponents(gather);
        if (!isa<ReshapeOp, DynamicReshapeOp>(op))
          return;
        if (auto groups =
                shapes.reshapeGroups(op->getOperand(0), op->getResult(0))) {
          SmallVector<ReassociationIndices> reassociation;
          for (auto &group : *groups)
            reassociation.emplace_back(group.begin(), group.end());
          reshapeGroups[op] = std::move(reassociation);
        }
      });
    });
    populatePointwisePatterns(patterns);
    populateDataMovementPatterns(patterns, reshapeGroups);
    populateReductionPatterns(patterns);
    populateGatherScatterPatterns(patterns, gatherComponents,
                                  scatterWindowThreads);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
