//===- DiscBase.td - the disc dialect and its attributes ---*- tablegen -*-===//
#ifndef DISC_DIALECT_DISC_BASE_TD
#define DISC_DIALECT_DISC_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Disc_Dialect : Dialect {
  let name = "disc";
  let cppNamespace = "::disc";
  let summary = "Tensor-level, dynamic-shape-first ops with StableHLO semantics.";
  let description = [{
    The `disc` dialect follows the StableHLO specification wherever an op exists
    there. Where StableHLO needs a static attribute for a shape, DISC takes an
    SSA shape operand instead (`dynamic_broadcast_in_dim`, `dynamic_reshape`,
    `real_dynamic_slice`, `dynamic_pad`, `dynamic_iota`, `dynamic_gather`).
    Reductions and scatter carry a `kind` instead of a region.

    Symbolic shapes: an op's result or an entry argument may carry
    `disc.dims`, an array with one string per dim: the dim's size as an
    expression over the graph's input symbols (`"s0"`, `"s0*s1"`, `"768"`).
    Dims with equal expressions are equal; the shape analysis uses this.

    In-place results: an entry argument may carry `disc.result_into = r`
    (an integer): the function's result `r` is written into that
    argument's memory (an optimizer step's parameter update). The result
    and the argument have the same type; each result is tied to at most one
    argument. Compiled code computes the result in the argument's buffer
    when nothing reads the argument's old value afterwards, and copies it
    there at the end otherwise (`disc-tie-results-to-arguments`).
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  // `disc.dims` (symbolic dim expressions) on ops and entry arguments;
  // `disc.result_into` on entry arguments.
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let extraClassDeclaration = [{
    /// `disc.dims = ["s0", "768", "s0*s1"]`: one expression per dim of an
    /// op's result (or a function argument), as the front end knows them.
    /// Equal strings denote equal sizes.
    static constexpr ::llvm::StringLiteral kDimsAttrName = "disc.dims";
    /// `disc.result_into = 2`: on an entry argument, result 2 of the
    /// function is written into this argument's memory.
    static constexpr ::llvm::StringLiteral kResultIntoAttrName =
        "disc.result_into";
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

class Disc_Op<string mnemonic, list<Trait> traits = []>
    : Op<Disc_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Disc_ComparisonDirection : I32EnumAttr<"ComparisonDirection",
    "comparison direction", [
      I32EnumAttrCase<"EQ", 0>, I32EnumAttrCase<"NE", 1>,
      I32EnumAttrCase<"GE", 2>, I32EnumAttrCase<"GT", 3>,
      I32EnumAttrCase<"LE", 4>, I32EnumAttrCase<"LT", 5>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::disc";
}
def Disc_ComparisonDirectionAttr
    : EnumAttr<Disc_Dialect, Disc_ComparisonDirection, "comparison_direction"> {
  let assemblyFormat = "$value";
}

def Disc_ReduceKind : I32EnumAttr<"ReduceKind", "reduction kind", [
      I32EnumAttrCase<"Sum", 0, "sum">, I32EnumAttrCase<"Prod", 1, "prod">,
      I32EnumAttrCase<"Max", 2, "max">, I32EnumAttrCase<"Min", 3, "min">,
      I32EnumAttrCase<"And", 4, "and">, I32EnumAttrCase<"Or", 5, "or">]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::disc";
}
def Disc_ReduceKindAttr : EnumAttr<Disc_Dialect, Disc_ReduceKind, "reduce_kind"> {
  let assemblyFormat = "$value";
}

def Disc_ScatterKind : I32EnumAttr<"ScatterKind", "scatter update kind", [
      I32EnumAttrCase<"Replace", 0, "replace">, I32EnumAttrCase<"Add", 1, "add">,
      I32EnumAttrCase<"Mul", 2, "mul">, I32EnumAttrCase<"Max", 3, "max">,
      I32EnumAttrCase<"Min", 4, "min">]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::disc";
}
def Disc_ScatterKindAttr
    : EnumAttr<Disc_Dialect, Disc_ScatterKind, "scatter_kind"> {
  let assemblyFormat = "$value";
}

def Disc_PostOpKind : I32EnumAttr<"PostOpKind", "library-call epilogue step", [
      // Binary: acc = acc OP operand (the next epilogue operand).
      I32EnumAttrCase<"Add", 0, "add">, I32EnumAttrCase<"Subtract", 1, "subtract">,
      I32EnumAttrCase<"Multiply", 2, "multiply">,
      I32EnumAttrCase<"Divide", 3, "divide">,
      I32EnumAttrCase<"Maximum", 4, "maximum">,
      I32EnumAttrCase<"Minimum", 5, "minimum">,
      // Unary: acc = f(acc), with `alpha`/`beta` as parameters.
      I32EnumAttrCase<"Relu", 16, "relu">,
      I32EnumAttrCase<"Clamp", 17, "clamp">,
      I32EnumAttrCase<"Logistic", 18, "logistic">,
      I32EnumAttrCase<"Tanh", 19, "tanh">,
      I32EnumAttrCase<"Swish", 20, "swish">,
      I32EnumAttrCase<"GeluErf", 21, "gelu_erf">]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::disc";
}
def Disc_PostOpKindAttr
    : EnumAttr<Disc_Dialect, Disc_PostOpKind, "post_op_kind"> {
  let assemblyFormat = "$value";
}

/// One step of a library call's epilogue (see dot_general/convolution).
def Disc_PostOpAttr : AttrDef<Disc_Dialect, "PostOp"> {
  let mnemonic = "post_op";
  let summary = "one elementwise step applied to a library call's result";
  let description = [{
    `#disc.post_op<relu>`, `#disc.post_op<clamp, 0.0, 6.0>`,
    `#disc.post_op<add>`. Binary kinds (add ... minimum) combine the result
    with the next epilogue operand: `acc = acc OP operand`. Unary kinds apply
    a function: relu `max(acc, 0)`, clamp `min(max(acc, alpha), beta)`,
    logistic, tanh, swish `acc * logistic(acc)`, gelu_erf
    `0.5 * acc * (1 + erf(acc / sqrt(2)))`.

    NaN: maximum, minimum, relu and clamp run as oneDNN's max/min/relu/clip,
    which return a number (the bound or the other operand) for a NaN, unlike
    `disc.maximum`/`disc.minimum`/`disc.clamp`; disc-fuse-library-epilogues
    therefore never forms them.
  }];
  let parameters = (ins EnumParameter<Disc_PostOpKind>:$kind,
                        APFloatParameter<"first parameter">:$alpha,
                        APFloatParameter<"second parameter">:$beta);
  // `<kind>` when both parameters are 0, else `<kind, alpha, beta>`.
  let hasCustomAssemblyFormat = 1;
  let builders = [
    AttrBuilder<(ins "PostOpKind":$kind, CArg<"double", "0.0">:$alpha,
                     CArg<"double", "0.0">:$beta), [{
      return $_get($_ctxt, kind, ::llvm::APFloat(alpha), ::llvm::APFloat(beta));
    }]>
  ];
  let extraClassDeclaration = [{
    /// Whether this step reads an epilogue operand.
    bool isBinary() const {
      return static_cast<int>(getKind()) < static_cast<int>(PostOpKind::Relu);
    }
  }];
}
def Disc_EpilogueAttr : TypedArrayAttrBase<Disc_PostOpAttr,
                                           "library-call epilogue">;

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def Disc_Float : AnyTypeOf<[F16, BF16, F32, F64]>;
def Disc_Int : AnyTypeOf<[I8, I16, I32, I64]>;
def Disc_Pred : TypeAlias<I1>;
def Disc_Element : AnyTypeOf<[Disc_Float, Disc_Int, Disc_Pred]>;
def Disc_IntOrPred : AnyTypeOf<[Disc_Int, Disc_Pred]>;

def Disc_Tensor : RankedTensorOf<[Disc_Element]>;
def Disc_FloatTensor : RankedTensorOf<[Disc_Float]>;
def Disc_IntOrPredTensor : RankedTensorOf<[Disc_IntOrPred]>;
def Disc_IntTensor : RankedTensorOf<[Disc_Int]>;
def Disc_NumericTensor : RankedTensorOf<[Disc_Float, Disc_Int]>;
def Disc_PredTensor : RankedTensorOf<[I1]>;
def Disc_IndexTensor : RankedTensorOf<[I32, I64]>;
// A 1-d tensor of sizes: `tensor<Nxindex>` (or i32/i64) used as shape operand.
def Disc_ShapeTensor : 1DTensorOf<[Index, I32, I64]>;

#endif // DISC_DIALECT_DISC_BASE_TD
