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
  // The shapes as given, for the messages (built only when a check fails).
  const int64_t aShape[3] = {a.sizes[0], a.sizes[1], a.sizes[2]};
  const int64_t bShape[3] = {b.sizes[0], b.sizes[1], b.sizes[2]};
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
    return "A is " + shapeString({aShape, aShape + 3}) +
           " (transA=" + std::to_string(transA) + "), B is " +
           shapeString({bShape, bShape + 3}) +
           " (transB=" + std::to_string(transB) + "), C is " +
           shapeString(c.sizes);
  };
  if (b.sizes[1] != ops.k)
    throw OpError("contraction sizes differ (" + std::to_string(ops.k) +
                  " vs " + std::to_string(b.sizes[1]) + "): " + describe());
  if (b.sizes[0] != ops.batch)
    throw OpError("batch sizes differ: " + describe());
  if (c.sizes[0] != ops.batch || c.sizes[1] != ops.m || c.sizes[2] != ops.n)
    throw OpError("C must be " + shapeString({ops.batch, ops.m, ops.n}) +
                  ": " + describe());
  return ops;
}

void makeContiguous(Operand &operand, size_t elemSize) {
  std::vector<int64_t> contiguous = contiguousStrides(operand.sizes);
  operand.copy.resize(numElements(operand.sizes) * elemSize);
  stridedCopy(operand.copy.data(), contiguous.data(), operand.data,
              operand.strides.data(), operand.sizes.data(),
              static_cast<int64_t>(operand.sizes.size()), elemSize);
  operand.data = operand.copy.data();
  operand.strides = std::move(contiguous);
}

int64_t convolutionRank(const UnrankedMemRef *inputRef) {
  if (!inputRef)
    throw OpError("input is a null memref");
  const int64_t rank = inputRef->rank;
  if (rank < 3 || rank > 5)
    throw OpError("input has rank " + std::to_string(rank) +
                  ", expected 3 to 5 (1 to 3 spatial dims)");
  return rank;
}

int64_t convOutputSize(int64_t in, int64_t window, int64_t padLo, int64_t padHi,
                       int64_t stride, int64_t dilation, int64_t lhsDilation) {
  const int64_t span = window == 0 ? 0 : (window - 1) * dilation + 1;
  const int64_t dilatedIn = in == 0 ? 0 : (in - 1) * lhsDilation + 1;
  const int64_t padded = dilatedIn + padLo + padHi;
  return padded < span ? 0 : (padded - span) / stride + 1;
}

void checkConvChannels(int64_t groups, const Operand &input,
                       const Operand &kernel, const Operand &output,
                       const char *kernelName,
                       const char *outputName,
                       const std::function<std::string()> &context) {
  if (groups < 1)
    throw OpError("groups must be >= 1: " + context());
  if (kernel.sizes[1] * groups != input.sizes[1])
    throw OpError(std::string("input channels must equal ") + kernelName +
                  " dim 1 times groups: " + context());
  if (kernel.sizes[0] % groups != 0)
    throw OpError("output channels must be a multiple of groups: " + context());
  if (output.sizes[0] != input.sizes[0] || output.sizes[1] != kernel.sizes[0])
    throw OpError(std::string(outputName) +
                  " must have the input's batch size and the kernel's "
                  "output channels: " +
                  context());
}

} // namespace ral
} // namespace disc
