//===- Operand.cpp - library calls' memref operands -----------------------===//
#include "Operand.h"

#include "StridedCopy.h"

#include <utility>

namespace disc {
namespace ral {

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Operand readOperand(const char *role, const UnrankedMemRef *memref,
                    int64_t expectedRank, size_t elemSize) {
  if (!memref || !memref->descriptor)
    throw OpError(std::string(role) + " is a null memref");
  if (memref->rank != expectedRank)
    throw OpError(std::string(role) + " has rank " +
                  std::to_string(memref->rank) + ", expected " +
                  std::to_string(expectedRank));
  MemRefView view = viewOf(memref);
  Operand operand;
  operand.sizes.assign(view.sizes, view.sizes + view.rank);
  operand.strides.assign(view.strides, view.strides + view.rank);
  for (int64_t size : operand.sizes)
    if (size < 0)
      throw OpError(std::string(role) + " has a negative size " +
                    shapeString(operand.sizes));
  operand.data = reinterpret_cast<void *>(
      reinterpret_cast<uintptr_t>(view.aligned) +
      static_cast<uintptr_t>(view.offset * static_cast<int64_t>(elemSize)));
  if (numElements(operand.sizes) != 0 && !view.aligned)
    throw OpError(std::string(role) + " has a null data pointer");
  return operand;
}

MatmulOperands readMatmulOperands(const UnrankedMemRef *aRef,
                                  const UnrankedMemRef *bRef,
                                  const UnrankedMemRef *cRef, bool transA,
                                  bool transB, size_t elemSize) {
  MatmulOperands ops;
  Operand &a = ops.a, &b = ops.b, &c = ops.c;
  a = readOperand("A", aRef, 3, elemSize);
  b = readOperand("B", bRef, 3, elemSize);
  c = readOperand("C", cRef, 3, elemSize);
  const std::vector<int64_t> aShape = a.sizes, bShape = b.sizes;
  if (transA) {
    std::swap(a.sizes[1], a.sizes[2]);
    std::swap(a.strides[1], a.strides[2]);
  }
  if (transB) {
    std::swap(b.sizes[1], b.sizes[2]);
    std::swap(b.strides[1], b.strides[2]);
  }
  ops.batch = a.sizes[0], ops.m = a.sizes[1], ops.k = a.sizes[2];
  ops.n = b.sizes[2];
  auto describe = [&]() {
    return "A is " + shapeString(aShape) +
           " (transA=" + std::to_string(transA) + "), B is " +
           shapeString(bShape) + " (transB=" + std::to_string(transB) +
           "), C is " + shapeString(c.sizes);
  };
  if (b.sizes[1] != ops.k)
    throw OpError("contraction sizes differ (" + std::to_string(ops.k) +
                  " vs " + std::to_string(b.sizes[1]) + "): " + describe());
  if (b.sizes[0] != ops.batch)
    throw OpError("batch sizes differ: " + describe());
  if (c.sizes != std::vector<int64_t>{ops.batch, ops.m, ops.n})
    throw OpError("C must be " + shapeString({ops.batch, ops.m, ops.n}) +
                  ": " + describe());
  return ops;
}

} // namespace ral
} // namespace disc
