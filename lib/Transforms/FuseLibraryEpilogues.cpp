//===- FuseLibraryEpilogues.cpp - elementwise tails into library calls ----===//
//
// The elementwise ops that follow a dot_general or convolution (bias add, an
// inference batch norm's subtract/multiply/add, the activation) become the
// library op's epilogue, which oneDNN applies as post-ops while the result is
// still in registers; for the cuda target (`cublaslt`), a dot_general's bias
// add, which cuBLASLt adds as it writes the product. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "disc/Analysis/ShapeConstraints.h"
#include "disc/Dialect/Disc/DiscDialect.h"
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <cmath>

namespace disc {
#define GEN_PASS_DEF_DISCFUSELIBRARYEPILOGUES
#include "disc/Transforms/Passes.h.inc"
} // namespace disc

using namespace mlir;
using disc::PostOpAttr;
using disc::PostOpKind;

namespace {

/// The runtime takes at most this many epilogue operands per call
/// (RalApi.h, kMaxEpilogueOperands).
constexpr int64_t kMaxEpilogueOperands = 6;

/// Without `all`: the most binary steps a convolution's epilogue may have.
constexpr int64_t kMaxProfitableConvBinarySteps = 2;

/// Why maximum, minimum and clamp (ReLU, ReLU6, hardtanh) are not fused:
/// oneDNN's relu, clip, clip_v2 and binary max/min post-ops (x86 jit,
/// vmaxps/vminps) turn a NaN result into the bound or the other operand,
/// where PyTorch and DISC's loop kernels propagate it.
constexpr const char *kNanDroppingReason =
    "oneDNN's max/min/relu/clip post-ops do not propagate NaN";

/// The splat value of `value` when it is a float constant, possibly
/// broadcast.
std::optional<double> splatConstant(Value value) {
  Operation *op = value.getDefiningOp();
  if (isa_and_present<disc::BroadcastInDimOp, disc::DynamicBroadcastInDimOp>(
          op))
    return splatConstant(op->getOperand(0));
  DenseFPElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)) || !attr.isSplat())
    return std::nullopt;
  return attr.getSplatValue<APFloat>().convertToDouble();
}

/// The sizes of a dot_general result's dim groups, in order: batch, lhs
/// free, rhs free (each group one dim of the library call's [B, M, N]).
std::array<int64_t, 3> resultGroups(disc::DotGeneralOp dot) {
  int64_t batch = dot.getLhsBatchingDimensions().size();
  return {batch,
          dot.getLhs().getType().getRank() - batch -
              (int64_t)dot.getLhsContractingDimensions().size(),
          dot.getRhs().getType().getRank() - batch -
              (int64_t)dot.getRhsContractingDimensions().size()};
}

/// How one epilogue operand is read: for each result dim, whether the
/// operand has size 1 there (broadcast) or the result's size.
struct OperandPlan {
  Value source;               // the tensor the operand is built from
  SmallVector<int64_t> dimOf; // result dim -> source dim, or -1 (size 1)
};

/// Collects the epilogue of one library op.
class EpilogueBuilder {
public:
  /// `cublaslt`: only what cuBLASLt's epilogue computes (one bias add).
  EpilogueBuilder(Operation *library, disc::ShapeConstraints &shapes,
                  bool cublaslt)
      : library(library), result(library->getResult(0)), shapes(shapes),
        resultType(cast<RankedTensorType>(result.getType())),
        cublaslt(cublaslt) {}

  /// Extends the chain as far as it goes; returns the reason it stopped.
  std::string collect();

  /// Replaces the library op and the absorbed chain by one library op with
  /// the epilogue. Returns false when nothing was absorbed.
  bool rewrite();

  ArrayRef<Attribute> steps() const { return stepAttrs; }
  int64_t numBinarySteps() const { return operandPlans.size(); }

private:
  /// Whether result dim `d` is statically 1.
  bool resultDimIsOne(int64_t d) const {
    return resultType.getDimSize(d) == 1;
  }
  /// Whether dim `sourceDim` of `source` equals result dim `d`.
  bool equalsResultDim(Value source, int64_t sourceDim, int64_t d) {
    auto type = cast<RankedTensorType>(source.getType());
    int64_t size = type.getDimSize(sourceDim);
    if (!ShapedType::isDynamic(size) &&
        size == resultType.getDimSize(d))
      return true;
    return shapes.areEqual(source, sourceDim, result, d);
  }
  std::optional<OperandPlan> planOperand(Value other, std::string &why);
  bool layoutSupported(const OperandPlan &plan, std::string &why);
  bool isPackedColumnBias(const OperandPlan &plan, std::string &why);
  Value materialize(OpBuilder &b, const OperandPlan &plan);
  bool matchBinary(Operation *user, Value acc, std::string &why);
  Operation *matchSwish(Value acc);
  Operation *matchGeluErf(Value acc);

  Operation *library;
  Value result;
  disc::ShapeConstraints &shapes;
  RankedTensorType resultType;
  bool cublaslt;

  SmallVector<Attribute> stepAttrs;
  SmallVector<OperandPlan> operandPlans;
  SmallVector<Operation *> absorbed; // in program order
};

std::optional<OperandPlan> EpilogueBuilder::planOperand(Value other,
                                                        std::string &why) {
  int64_t rank = resultType.getRank();
  OperandPlan plan;
  plan.dimOf.assign(rank, -1);
  Operation *def = other.getDefiningOp();
  if (isa_and_present<disc::BroadcastInDimOp, disc::DynamicBroadcastInDimOp>(
          def)) {
    plan.source = def->getOperand(0);
    ArrayRef<int64_t> dims =
        isa<disc::BroadcastInDimOp>(def)
            ? cast<disc::BroadcastInDimOp>(def).getBroadcastDimensions()
            : cast<disc::DynamicBroadcastInDimOp>(def)
                  .getBroadcastDimensions();
    auto sourceType = cast<RankedTensorType>(plan.source.getType());
    int64_t lastResultDim = -1;
    for (auto [sourceDim, d] : llvm::enumerate(dims)) {
      if (sourceType.getDimSize(sourceDim) == 1)
        continue; // broadcast (or a result dim of size 1)
      if (!equalsResultDim(plan.source, sourceDim, d)) {
        why = "cannot prove a broadcast operand dim equals the result's";
        return std::nullopt;
      }
      // The operand is the source reshaped (materialize): its dims must
      // keep their order.
      if (d < lastResultDim) {
        why = "the broadcast transposes its operand";
        return std::nullopt;
      }
      lastResultDim = d;
      plan.dimOf[d] = sourceDim;
    }
    return plan;
  }
  // A full-size operand.
  plan.source = other;
  for (int64_t d = 0; d < rank; ++d) {
    if (!equalsResultDim(other, d, d)) {
      why = "cannot prove an operand has the result's shape";
      return std::nullopt;
    }
    plan.dimOf[d] = d;
  }
  return plan;
}

/// Whether the library can read an operand of this shape: a convolution
/// takes per-channel or scalar operands (its result has oneDNN's blocked
/// layout inside the call); a dot_general takes operands whose dims within
/// each of the result's groups (batch, lhs free, rhs free), which the call
/// merges into one, are all broadcast or all full.
bool EpilogueBuilder::layoutSupported(const OperandPlan &plan,
                                      std::string &why) {
  int64_t rank = resultType.getRank();
  if (isa<disc::ConvolutionOp>(library)) {
    for (int64_t d = 0; d < rank; ++d)
      if (d != 1 && plan.dimOf[d] >= 0 && !resultDimIsOne(d)) {
        why = "a convolution epilogue reads per-channel or scalar operands";
        return false;
      }
    return true;
  }
  int64_t begin = 0;
  for (int64_t size : resultGroups(cast<disc::DotGeneralOp>(library))) {
    bool broadcast = false, full = false;
    for (int64_t d = begin; d < begin + size; ++d) {
      if (resultDimIsOne(d))
        continue;
      (plan.dimOf[d] >= 0 ? full : broadcast) = true;
    }
    if (broadcast && full) {
      why = "the operand broadcasts only some dims of a group the matmul "
            "merges";
      return false;
    }
    begin += size;
  }
  return true;
}

/// cuBLASLt's bias (CUBLASLT_EPILOGUE_BIAS): one value per column of the
/// call's [B, M, N] result, read as a packed vector. The operand is
/// broadcast over the batch and lhs free dims and has the rhs free dims;
/// it is built from a function argument (DISC's inputs are contiguous) or
/// a computed tensor, not from a slice, which may be a strided view.
bool EpilogueBuilder::isPackedColumnBias(const OperandPlan &plan,
                                         std::string &why) {
  int64_t rank = resultType.getRank();
  int64_t rhsFree = resultGroups(cast<disc::DotGeneralOp>(library))[2];
  for (int64_t d = 0; d < rank; ++d) {
    bool columnDim = d >= rank - rhsFree;
    bool full = plan.dimOf[d] >= 0;
    if (resultDimIsOne(d) || full == columnDim)
      continue;
    why = columnDim ? "the operand is broadcast along the output columns, "
                      "not a per-column bias"
                    : "the operand varies along the batch or rows, not a "
                      "per-column bias";
    return false;
  }
  Value source = plan.source;
  while (isa_and_present<disc::ReshapeOp, disc::DynamicReshapeOp>(
      source.getDefiningOp()))
    source = source.getDefiningOp()->getOperand(0);
  if (isa_and_present<disc::SliceOp, disc::RealDynamicSliceOp>(
          source.getDefiningOp())) {
    why = "the bias is a slice, which may be a strided view";
    return false;
  }
  return true;
}

/// The epilogue operand: the source reshaped to the result's rank, with
/// size-1 dims where it is broadcast.
Value EpilogueBuilder::materialize(OpBuilder &b, const OperandPlan &plan) {
  Location loc = library->getLoc();
  auto sourceType = cast<RankedTensorType>(plan.source.getType());
  SmallVector<int64_t> shape;
  bool dynamic = false;
  for (int64_t sourceDim : plan.dimOf) {
    shape.push_back(sourceDim < 0 ? 1 : sourceType.getDimSize(sourceDim));
    dynamic |= ShapedType::isDynamic(shape.back());
  }
  auto type = RankedTensorType::get(shape, resultType.getElementType());
  if (type == sourceType)
    return plan.source;
  if (!dynamic)
    return disc::ReshapeOp::create(b, loc, type, plan.source);
  SmallVector<Value> sizes;
  for (int64_t sourceDim : plan.dimOf)
    sizes.push_back(
        sourceDim < 0
            ? arith::ConstantIndexOp::create(b, loc, 1).getResult()
            : tensor::DimOp::create(b, loc, plan.source, sourceDim)
                  .getResult());
  Value shapeValue = tensor::FromElementsOp::create(
      b, loc,
      RankedTensorType::get({(int64_t)sizes.size()}, b.getIndexType()),
      sizes);
  return disc::DynamicReshapeOp::create(b, loc, type, plan.source,
                                        shapeValue);
}

/// `acc OP other` (or `other OP acc` for commutative ops).
bool EpilogueBuilder::matchBinary(Operation *user, Value acc,
                                  std::string &why) {
  std::optional<PostOpKind> kind =
      llvm::TypeSwitch<Operation *, std::optional<PostOpKind>>(user)
          .Case([](disc::AddOp) { return PostOpKind::Add; })
          .Case([](disc::SubtractOp) { return PostOpKind::Subtract; })
          .Case([](disc::MulOp) { return PostOpKind::Multiply; })
          .Case([](disc::DivOp) { return PostOpKind::Divide; })
          .Case([](disc::MaxOp) { return PostOpKind::Maximum; })
          .Case([](disc::MinOp) { return PostOpKind::Minimum; })
          .Default([](Operation *) { return std::nullopt; });
  if (!kind)
    return false;
  if (*kind == PostOpKind::Maximum || *kind == PostOpKind::Minimum) {
    why = kNanDroppingReason;
    return false;
  }
  bool commutative = *kind == PostOpKind::Add || *kind == PostOpKind::Multiply;
  Value lhs = user->getOperand(0), rhs = user->getOperand(1);
  if (lhs == rhs) {
    why = "both operands are the result";
    return false;
  }
  if (rhs == acc && !commutative) {
    why = "the result is the right operand of a non-commutative op";
    return false;
  }
  Value other = lhs == acc ? rhs : lhs;
  MLIRContext *ctx = user->getContext();
  if ((int64_t)operandPlans.size() == kMaxEpilogueOperands) {
    why = "the runtime takes at most " +
          std::to_string(kMaxEpilogueOperands) + " epilogue operands";
    return false;
  }
  // `other` is read by the new library op, which takes the place of the
  // last absorbed op: it must be defined before that.
  std::optional<OperandPlan> plan = planOperand(other, why);
  if (!plan || !layoutSupported(*plan, why))
    return false;
  if (cublaslt && !isPackedColumnBias(*plan, why))
    return false; // (collect passes only adds in this mode)
  operandPlans.push_back(*plan);
  stepAttrs.push_back(PostOpAttr::get(ctx, *kind));
  absorbed.push_back(user);
  return true;
}

/// acc * logistic(acc): returns the multiply.
Operation *EpilogueBuilder::matchSwish(Value acc) {
  SmallVector<Operation *> users(acc.getUsers());
  if (users.size() != 2)
    return nullptr;
  for (int i = 0; i < 2; ++i) {
    auto logistic = dyn_cast<disc::LogisticOp>(users[i]);
    auto mul = dyn_cast<disc::MulOp>(users[1 - i]);
    if (!logistic || !mul || !logistic->hasOneUse() ||
        *logistic->getUsers().begin() != mul.getOperation())
      continue;
    absorbed.push_back(logistic);
    absorbed.push_back(mul);
    return mul;
  }
  return nullptr;
}

/// (acc * 0.5) * (erf(acc * M_SQRT1_2) + 1), PyTorch's exact GELU, in any
/// operand order: returns the final multiply.
Operation *EpilogueBuilder::matchGeluErf(Value acc) {
  SmallVector<Operation *> users(acc.getUsers());
  if (users.size() != 2)
    return nullptr;
  auto scaledBy = [&](Operation *op, double factor) -> bool {
    auto mul = dyn_cast<disc::MulOp>(op);
    if (!mul || !mul->hasOneUse())
      return false;
    Value other = mul.getLhs() == acc ? mul.getRhs() : mul.getLhs();
    std::optional<double> c = splatConstant(other);
    return c && std::abs(*c - factor) < 1e-6;
  };
  auto single = [](Operation *op) -> Operation * {
    return op->hasOneUse() ? *op->getUsers().begin() : nullptr;
  };
  for (int i = 0; i < 2; ++i) {
    Operation *half = users[i], *inner = users[1 - i];
    if (!scaledBy(half, 0.5) || !scaledBy(inner, M_SQRT1_2))
      continue;
    auto erf = dyn_cast_if_present<disc::ErfOp>(single(inner));
    if (!erf)
      continue;
    auto plusOne = dyn_cast_if_present<disc::AddOp>(single(erf));
    if (!plusOne)
      continue;
    Value other = plusOne.getLhs() == erf.getResult() ? plusOne.getRhs()
                                                      : plusOne.getLhs();
    std::optional<double> one = splatConstant(other);
    if (!one || *one != 1.0)
      continue;
    auto product = dyn_cast_if_present<disc::MulOp>(single(plusOne));
    if (!product || single(half) != product.getOperation())
      continue;
    absorbed.append({half, inner, erf, plusOne, product});
    return product;
  }
  return nullptr;
}

std::string EpilogueBuilder::collect() {
  MLIRContext *ctx = library->getContext();
  Value acc = result;
  while (true) {
    std::string why;
    if (cublaslt && !stepAttrs.empty())
      return "cuBLASLt's epilogue ends with the bias add";
    if (cublaslt && !acc.hasOneUse())
      return acc.use_empty() ? "the value has no users"
                             : "the value has several users";
    if (!acc.hasOneUse()) {
      if (acc.use_empty())
        return "the value has no users";
      if (Operation *mul = matchSwish(acc)) {
        stepAttrs.push_back(PostOpAttr::get(ctx, PostOpKind::Swish, 1.0));
        acc = mul->getResult(0);
        continue;
      }
      if (Operation *mul = matchGeluErf(acc)) {
        stepAttrs.push_back(PostOpAttr::get(ctx, PostOpKind::GeluErf));
        acc = mul->getResult(0);
        continue;
      }
      return "the value has several users";
    }
    Operation *user = *acc.getUsers().begin();
    if (user->getBlock() != library->getBlock())
      return "the user is in another block";
    if (user->getNumResults() != 1 || user->getResult(0).getType() !=
                                          result.getType())
      return "the user is " + user->getName().getStringRef().str() +
             ", not an elementwise op of the result's type";
    if (cublaslt && !isa<disc::AddOp>(user))
      return "the user is " + user->getName().getStringRef().str() +
             "; cuBLASLt's epilogue takes a bias add";
    if (isa<disc::LogisticOp, disc::TanhOp>(user)) {
      stepAttrs.push_back(PostOpAttr::get(
          ctx, isa<disc::LogisticOp>(user) ? PostOpKind::Logistic
                                           : PostOpKind::Tanh));
      absorbed.push_back(user);
      acc = user->getResult(0);
      continue;
    }
    if (isa<disc::ClampOp>(user))
      return "at disc.clamp: " + std::string(kNanDroppingReason);
    if (matchBinary(user, acc, why)) {
      acc = user->getResult(0);
      continue;
    }
    if (why.empty())
      return "the user is " + user->getName().getStringRef().str() +
             ", not an epilogue op";
    return "at " + user->getName().getStringRef().str() + ": " + why;
  }
}

bool EpilogueBuilder::rewrite() {
  if (absorbed.empty())
    return false;
  Operation *last = absorbed.back();
  OpBuilder b(last);
  SmallVector<Value> operands;
  for (const OperandPlan &plan : operandPlans)
    operands.push_back(materialize(b, plan));
  ArrayAttr epilogue = b.getArrayAttr(stepAttrs);
  Operation *fused;
  if (auto dot = dyn_cast<disc::DotGeneralOp>(library)) {
    fused = disc::DotGeneralOp::create(
        b, dot.getLoc(), dot.getType(), dot.getLhs(), dot.getRhs(), operands,
        dot.getLhsBatchingDimensions(), dot.getRhsBatchingDimensions(),
        dot.getLhsContractingDimensions(), dot.getRhsContractingDimensions(),
        epilogue);
  } else {
    auto conv = cast<disc::ConvolutionOp>(library);
    fused = disc::ConvolutionOp::create(
        b, conv.getLoc(), conv.getType(), conv.getLhs(), conv.getRhs(),
        operands, conv.getDynamicPaddingLow(), conv.getDynamicPaddingHigh(),
        conv.getWindowStrides(), conv.getPaddingLow(),
        conv.getPaddingHigh(), conv.getRhsDilation(),
        conv.getFeatureGroupCount(), epilogue, conv.getLhsDilationAttr());
  }
  if (Attribute dims = library->getAttr(disc::DiscDialect::kDimsAttrName))
    fused->setAttr(disc::DiscDialect::kDimsAttrName, dims);
  last->getResult(0).replaceAllUsesWith(fused->getResult(0));
  for (Operation *op : llvm::reverse(absorbed))
    op->erase();
  library->erase();
  return true;
}

struct FuseLibraryEpiloguesPass
    : public disc::impl::DiscFuseLibraryEpiloguesBase<
          FuseLibraryEpiloguesPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<Operation *> libraryOps;
    getOperation().walk([&](Operation *op) {
      if (isa<disc::DotGeneralOp, disc::ConvolutionOp>(op))
        libraryOps.push_back(op);
    });
    if (libraryOps.empty())
      return;
    // The analysis is rebuilt after each rewrite: it keys on values, and a
    // new op may reuse an erased one's storage.
    std::optional<disc::ShapeConstraints> shapes;
    for (Operation *op : libraryOps) {
      if (!shapes)
        shapes.emplace(getOperation());
      auto type = cast<RankedTensorType>(op->getResult(0).getType());
      ArrayAttr existing =
          isa<disc::DotGeneralOp>(op)
              ? cast<disc::DotGeneralOp>(op).getEpilogue()
              : cast<disc::ConvolutionOp>(op).getEpilogue();
      if (!existing.empty())
        continue;
      std::string label = isa<disc::ConvolutionOp>(op) ? "convolution"
                                                       : "dot_general";
      if (cublaslt && isa<disc::ConvolutionOp>(op)) {
        if (log)
          llvm::errs() << "[disc] fusion: convolution epilogue: none (the "
                          "cuda target's cuDNN calls take none)\n";
        continue;
      }
      // oneDNN's post-ops are used in f32 only: in bf16/f16 the library
      // may compute in f32 and convert, and the epilogue would round
      // differently from the elementwise kernels. cuBLASLt adds a bias in
      // f32 before it rounds the product once (half a rounding closer to
      // the exact value than the kernels' add): f16 and bf16 too.
      Type element = type.getElementType();
      if (!element.isF32() &&
          !(cublaslt && (element.isF16() || element.isBF16()))) {
        if (log)
          llvm::errs() << "[disc] fusion: " << label
                       << " epilogue: none (element type " << element
                       << (cublaslt ? ", only f32, f16 and bf16)\n"
                                    : ", only f32)\n");
        continue;
      }
      EpilogueBuilder builder(op, *shapes, cublaslt);
      std::string stop = builder.collect();
      // cuBLASLt adds the bias where it writes the product: always worth it.
      if (!all && !cublaslt) {
        // What pays with oneDNN 2.6 on x86 (docs/architecture.md, "Library
        // epilogues"): a convolution with a bias and/or activation and at
        // most two binary steps; more binary post-ops slow its kernels
        // down more than the loop kernel they save costs.
        std::string refused;
        if (isa<disc::DotGeneralOp>(op))
          refused = "matmul epilogues run as an extra pass inside oneDNN";
        else if (builder.numBinarySteps() > kMaxProfitableConvBinarySteps)
          refused = std::to_string(builder.numBinarySteps()) +
                    " binary steps slow the convolution down";
        if (!refused.empty() && !builder.steps().empty()) {
          if (log)
            llvm::errs() << "[disc] fusion: " << label
                         << " epilogue: none (not profitable: " << refused
                         << ")\n";
          continue;
        }
      }
      if (log) {
        llvm::errs() << "[disc] fusion: " << label << " epilogue: ";
        if (builder.steps().empty())
          llvm::errs() << "none";
        llvm::interleaveComma(builder.steps(), llvm::errs(),
                              [](Attribute step) {
                                llvm::errs() << disc::stringifyPostOpKind(
                                    cast<PostOpAttr>(step).getKind());
                              });
        llvm::errs() << " (stops: " << stop << ")\n";
      }
      if (builder.rewrite())
        shapes.reset();
    }
  }
};

} // namespace
