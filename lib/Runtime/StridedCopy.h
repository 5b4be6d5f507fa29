//===- StridedCopy.h - generic strided copies (private) ---------*- C++ -*-===//
#ifndef DISC_LIB_RUNTIME_STRIDEDCOPY_H
#define DISC_LIB_RUNTIME_STRIDEDCOPY_H

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace disc {
namespace ral {

/// Number of elements of a shape (1 for rank 0).
int64_t numElements(const int64_t *sizes, int64_t rank);
/// The same for any container with data() and size() (std::vector, Dims).
template <typename Sizes>
inline int64_t numElements(const Sizes &sizes) {
  return numElements(sizes.data(), static_cast<int64_t>(sizes.size()));
}

/// Row-major contiguous strides for `sizes`.
std::vector<int64_t> contiguousStrides(const int64_t *sizes, int64_t rank);
/// The same, written to strides[0, rank).
void writeContiguousStrides(const int64_t *sizes, int64_t rank,
                            int64_t *strides);
template <typename Sizes>
inline std::vector<int64_t> contiguousStrides(const Sizes &s) {
  return contiguousStrides(s.data(), static_cast<int64_t>(s.size()));
}
inline std::vector<int64_t>
contiguousStrides(std::initializer_list<int64_t> s) {
  return contiguousStrides(s.begin(), static_cast<int64_t>(s.size()));
}

/// Whether `strides` describe row-major contiguous memory for `sizes`.
/// Strides of size-1 dims, and all strides of a zero-element tensor, are
/// ignored (they never affect an address).
bool isRowMajorContiguous(const int64_t *sizes, const int64_t *strides,
                          int64_t rank);

/// Copies the `sizes`-shaped tensor at `src` (element strides `srcStrides`)
/// to `dst` (element strides `dstStrides`). Strides may be zero or negative
/// (in elements). A zero source stride everywhere broadcasts one element.
void stridedCopy(void *dst, const int64_t *dstStrides, const void *src,
                 const int64_t *srcStrides, const int64_t *sizes, int64_t rank,
                 size_t elemSize);

} // namespace ral
} // namespace disc

#endif // DISC_LIB_RUNTIME_STRIDEDCOPY_H
