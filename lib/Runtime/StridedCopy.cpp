//===- StridedCopy.cpp - generic strided copies ---------------------------===//

#include "StridedCopy.h"

#include <cstring>

namespace disc {
namespace ral {

int64_t numElements(const int64_t *sizes, int64_t rank) {
  int64_t n = 1;
  for (int64_t d = 0; d < rank; ++d)
    n *= sizes[d];
  return n;
}

void writeContiguousStrides(const int64_t *sizes, int64_t rank,
                            int64_t *strides) {
  int64_t running = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    strides[d] = running;
    running *= sizes[d];
  }
}

std::vector<int64_t> contiguousStrides(const int64_t *sizes, int64_t rank) {
  std::vector<int64_t> strides(rank);
  writeContiguousStrides(sizes, rank, strides.data());
  return strides;
}

bool isRowMajorContiguous(const int64_t *sizes, const int64_t *strides,
                          int64_t rank) {
  if (numElements(sizes, rank) == 0)
    return true;
  int64_t expected = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (sizes[d] != 1 && strides[d] != expected)
      return false;
    expected *= sizes[d];
  }
  return true;
}

namespace {
template <size_t N>
void copyRow(char *dst, int64_t dstStride, const char *src, int64_t srcStride,
             int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    std::memcpy(dst + i * dstStride * static_cast<int64_t>(N),
                src + i * srcStride * static_cast<int64_t>(N), N);
}

void copyRowAnySize(char *dst, int64_t dstStride, const char *src,
                    int64_t srcStride, int64_t count, size_t elemSize) {
  if (dstStride == 1 && srcStride == 1) {
    std::memcpy(dst, src, static_cast<size_t>(count) * elemSize);
    return;
  }
  switch (elemSize) {
  case 1:
    return copyRow<1>(dst, dstStride, src, srcStride, count);
  case 2:
    return copyRow<2>(dst, dstStride, src, srcStride, count);
  case 4:
    return copyRow<4>(dst, dstStride, src, srcStride, count);
  case 8:
    return copyRow<8>(dst, dstStride, src, srcStride, count);
  default:
    for (int64_t i = 0; i < count; ++i)
      std::memcpy(dst + i * dstStride * static_cast<int64_t>(elemSize),
                  src + i * srcStride * static_cast<int64_t>(elemSize),
                  elemSize);
  }
}
} // namespace

void stridedCopy(void *dst, const int64_t *dstStrides, const void *src,
                 const int64_t *srcStrides, const int64_t *sizes, int64_t rank,
                 size_t elemSize) {
  if (numElements(sizes, rank) == 0)
    return;
  char *d = static_cast<char *>(dst);
  const char *s = static_cast<const char *>(src);
  if (rank == 0) {
    std::memcpy(d, s, elemSize);
    return;
  }
  const int64_t esize = static_cast<int64_t>(elemSize);
  const int64_t inner = rank - 1;
  // Odometer over the outer dims; the innermost dim is copied as a row.
  std::vector<int64_t> index(rank, 0);
  int64_t dstOffset = 0, srcOffset = 0; // in elements
  while (true) {
    copyRowAnySize(d + dstOffset * esize, dstStrides[inner],
                   s + srcOffset * esize, srcStrides[inner], sizes[inner],
                   elemSize);
    int64_t dim = inner - 1;
    for (; dim >= 0; --dim) {
      ++index[dim];
      dstOffset += dstStrides[dim];
      srcOffset += srcStrides[dim];
      if (index[dim] < sizes[dim])
        break;
      dstOffset -= dstStrides[dim] * sizes[dim];
      srcOffset -= srcStrides[dim] * sizes[dim];
      index[dim] = 0;
    }
    if (dim < 0)
      return;
  }
}

} // namespace ral
} // namespace disc
