//===- ShapeConstraints.h - which dynamic dims must be equal ----*- C++ -*-===//
//
// A first form of DISC's symbolic shape analysis: a union-find over
// (value, dim) pairs of a function, joined by op semantics (elementwise
// operands, transpose permutations, dot batching/contracting dims, concat
// non-axis dims, reduce kept dims, ...) and by the front end's symbolic dims
// (`disc.dims` on ops and arguments: equal expressions are equal sizes).
// Each class knows its static size if any member has one, and why it was
// joined. The compiler exports the classes of the function arguments so the
// runtime can reject contradicting inputs before any kernel runs.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_ANALYSIS_SHAPECONSTRAINTS_H
#define DISC_ANALYSIS_SHAPECONSTRAINTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include <optional>
#include <string>

namespace disc {

class ShapeConstraints {
public:
  explicit ShapeConstraints(mlir::func::FuncOp func);

  /// The front end's names of `value`'s dims (its `disc.dims`, from its
  /// function argument's attributes or its single-result defining op): per
  /// dim a symbolic expression ("s3", "12*s0") or a static size. Null when
  /// the value carries none.
  static mlir::ArrayAttr dimNamesOf(mlir::Value value);

  /// The class id of dim `dim` of `value` (stable for one analysis).
  int64_t classOf(mlir::Value value, int64_t dim);
  bool areEqual(mlir::Value a, int64_t dimA, mlir::Value b, int64_t dimB) {
    return classOf(a, dimA) == classOf(b, dimB);
  }
  /// The static size of the class, or ShapedType::kDynamic.
  int64_t staticSizeOf(int64_t classId);
  /// Why the class's dims must be equal: "disc.add at file:line:col" (the
  /// op that first joined it) or "symbolic dim s0".
  std::string reasonOf(int64_t classId);

  /// A dim as a product: a static coefficient times symbolic factors
  /// (sorted). Static dims have no factors; a dynamic dim whose front-end
  /// expression is a product ("12*s0*s1") has one factor per symbol, each
  /// named by the class of the dims that carry that symbol alone; any
  /// other dynamic dim is one opaque factor (its class).
  struct DimProduct {
    int64_t coefficient = 1;
    llvm::SmallVector<std::string> factors;
    bool operator==(const DimProduct &other) const {
      return coefficient == other.coefficient && factors == other.factors;
    }
    void multiply(const DimProduct &other);
    bool isOne() const { return coefficient == 1 && factors.empty(); }
  };
  DimProduct productOf(mlir::Value value, int64_t dim);

  /// How a reshape from `from` to `to` groups dims, when the products above
  /// prove it: each dim of the lower-rank side is the product of a run of
  /// consecutive dims of the other side (unit dims join a neighbouring
  /// run). Indices of the higher-rank side, one group per dim of the lower
  /// one, as tensor.expand_shape/collapse_shape take them. std::nullopt
  /// when the shapes do not prove such a grouping (or the ranks are equal
  /// and the shapes differ).
  std::optional<llvm::SmallVector<llvm::SmallVector<int64_t, 2>>>
  reshapeGroups(mlir::Value from, mlir::Value to);

  /// The components of gather/scatter coordinates built the front end's
  /// way: a concatenate, along the last dim `indexVectorDim`, of values
  /// each reshaped to [batch..., 1]. One batch-shaped value per element of
  /// the index vector, when the shapes prove that every reshape only
  /// appends the unit dim; std::nullopt otherwise.
  std::optional<llvm::SmallVector<mlir::Value>>
  coordinateComponents(mlir::Value indices, int64_t indexVectorDim);

  /// Whether dim `dimA` of `a` and `dimB` of `b` have the same size: equal
  /// static sizes or one class.
  bool sameSize(mlir::Value a, int64_t dimA, mlir::Value b, int64_t dimB);

private:
  using Key = std::pair<mlir::Value, int64_t>;
  int64_t idOf(mlir::Value value, int64_t dim);
  int64_t find(int64_t id);
  void join(mlir::Value a, int64_t dimA, mlir::Value b, int64_t dimB,
            mlir::Operation *reason);
  /// Joins dims that carry the same `disc.dims` expression.
  void joinSymbolic(mlir::Value value, mlir::ArrayAttr dims);
  void joinAllDims(mlir::Value a, mlir::Value b, mlir::Operation *reason);
  void visit(mlir::Operation *op);

  llvm::DenseMap<Key, int64_t> ids;
  llvm::SmallVector<int64_t> parent;
  llvm::SmallVector<int64_t> staticSize;
  llvm::SmallVector<mlir::Operation *> reason;
  llvm::SmallVector<std::string> symbol; // a class's symbolic name, if any
  llvm::StringMap<Key> firstWithSymbol;
  /// The front end's expression of each dynamic dim that had one.
  llvm::DenseMap<Key, std::string> expression;
};

} // namespace disc

#endif // DISC_ANALYSIS_SHAPECONSTRAINTS_H
