//===- Operand.cpp - library calls' memref operands -----------------------===//
#include "Operand.h"

#include "StridedCopy.h"

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

} // namespace ral
} // namespace disc
