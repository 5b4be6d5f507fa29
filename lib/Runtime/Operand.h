//===- Operand.h - library calls' memref operands (private) -----*- C++ -*-===//
//
// What every library call (oneDNN matmul/convolution, attention) does first:
// read a memref descriptor the compiled code passed, checking rank, sizes
// and data pointer, and fail with a message naming the operand otherwise.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_LIB_RUNTIME_OPERAND_H
#define DISC_LIB_RUNTIME_OPERAND_H

#include "disc/Runtime/RalApi.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

namespace disc {
namespace ral {

/// A validation error of an operation (bad shapes, bad parameters).
struct OpError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// "[2, 3, 4]".
std::string shapeString(const std::vector<int64_t> &shape);

/// A shape or its strides: room for kInline values in place, the heap
/// beyond. Library calls read three or four operands per call, and their
/// sizes and strides as vectors were two heap allocations each (host time
/// on every call: docs/cuda.md, "Library calls' host work per call").
/// Converts to and from std::vector<int64_t> (for oneDNN's dims and the
/// messages).
class Dims {
public:
  static constexpr size_t kInline = 8;

  Dims() = default;
  Dims(const Dims &) = default;
  Dims &operator=(const Dims &) = default;
  /// A moved-from Dims is empty (as a moved-from vector is in practice).
  Dims(Dims &&other) noexcept { *this = std::move(other); }
  Dims &operator=(Dims &&other) noexcept {
    if (this != &other) {
      count = other.count;
      std::copy(other.inlineValues, other.inlineValues + kInline,
                inlineValues);
      heap = std::move(other.heap);
      other.count = 0;
      other.heap.clear();
    }
    return *this;
  }
  Dims(std::initializer_list<int64_t> values) {
    assign(values.begin(), values.end());
  }
  Dims(const std::vector<int64_t> &values) { // NOLINT: implicit on purpose
    assign(values.data(), values.data() + values.size());
  }
  operator std::vector<int64_t>() const { return {begin(), end()}; }

  /// [first, last) may be this Dims' own prefix, not another part of it.
  void assign(const int64_t *first, const int64_t *last) {
    const size_t n = static_cast<size_t>(last - first);
    if (first == data() && n <= count) { // its own prefix: already there
      resize(n);
      return;
    }
    resize(n);
    std::copy(first, last, data());
  }
  /// Keeps the first min(size(), n) values, as std::vector::resize does.
  void resize(size_t n, int64_t value = 0) {
    if (n > kInline) {
      if (count <= kInline)
        heap.assign(inlineValues, inlineValues + count);
      heap.resize(n, value); // no reallocation when the size stays
    } else {
      if (count > kInline)
        std::copy(heap.begin(), heap.begin() + n, inlineValues);
      heap.clear();
      for (size_t i = count; i < n; ++i)
        inlineValues[i] = value;
    }
    count = n;
  }
  size_t size() const { return count; }
  bool empty() const { return count == 0; }
  int64_t *data() { return count > kInline ? heap.data() : inlineValues; }
  const int64_t *data() const {
    return count > kInline ? heap.data() : inlineValues;
  }
  int64_t *begin() { return data(); }
  int64_t *end() { return data() + count; }
  const int64_t *begin() const { return data(); }
  const int64_t *end() const { return data() + count; }
  int64_t &operator[](size_t i) { return data()[i]; }
  int64_t operator[](size_t i) const { return data()[i]; }

  friend bool operator==(const Dims &a, const Dims &b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator!=(const Dims &a, const Dims &b) { return !(a == b); }

private:
  size_t count = 0;
  int64_t inlineValues[kInline] = {};
  std::vector<int64_t> heap; // the values when there are over kInline
};

/// One operand: the address of its first element, sizes and element strides.
struct Operand {
  void *data = nullptr;
  Dims sizes, strides;
  /// Owns the contiguous copy when the original strides were unusable.
  std::vector<char> copy;
};

/// Reads `memref` (named `role` in errors) of rank `expectedRank` with
/// elements of `elemSize` bytes; throws OpError for a null descriptor, a
/// different rank, a negative size or a null data pointer.
Operand readOperand(const char *role, const UnrankedMemRef *memref,
                    int64_t expectedRank, size_t elemSize);

/// Replaces `operand`'s data by a contiguous copy held in `operand.copy`
/// (strides become row-major): for layouts a library cannot read.
void makeContiguous(Operand &operand, size_t elemSize);

/// A convolution's parameters as its library calls take them (RalApi.h,
/// DISC_RAL_CONV_PARAMETERS; unused spatial slots are ignored).
struct ConvParams {
  int64_t strides[3];
  int64_t padLo[3];
  int64_t padHi[3];
  int64_t dilations[3];    // 1 = no dilation
  int64_t lhsDilations[3]; // input dilation; 1 = none
  int64_t groups;
};

/// The ConvParams of the arguments DISC_RAL_CONV_PARAMETERS names.
#define DISC_RAL_CONV_PARAMS_OF_ARGUMENTS                                      \
  disc::ral::ConvParams {                                                      \
    {stride0, stride1, stride2}, {padLo0, padLo1, padLo2},                     \
        {padHi0, padHi1, padHi2}, {dilation0, dilation1, dilation2},           \
        {lhsDilation0, lhsDilation1, lhsDilation2}, groups                     \
  }

/// The rank of a convolution's input (3 to 5: 1 to 3 spatial dims); throws
/// OpError otherwise or for a null descriptor.
int64_t convolutionRank(const UnrankedMemRef *inputRef);

/// The convolution output size along a spatial dim (0 when the window does
/// not fit): `in` after the input dilation and the padding, less the
/// dilated window, over the stride.
int64_t convOutputSize(int64_t in, int64_t window, int64_t padLo, int64_t padHi,
                       int64_t stride, int64_t dilation, int64_t lhsDilation);

/// The channel and group checks of a convolution and its kernel gradient:
/// `input` [N, C, ...], `kernel` [O, C / groups, ...] and `output`
/// [N, O, ...]; `kernelName` and `outputName` name the last two in the
/// messages, each of which ends with `context()` (the shapes and parameters,
/// built only when a check fails).
void checkConvChannels(int64_t groups, const Operand &input,
                       const Operand &kernel, const Operand &output,
                       const char *kernelName,
                       const char *outputName,
                       const std::function<std::string()> &context);

/// A dot_general's operands as its library calls take them: A [batch, M, K]
/// and B [batch, K, N] after the transpose flags (last two dims swapped,
/// sizes and strides alike), C [batch, M, N]. Throws OpError naming the
/// operands when the sizes disagree.
struct MatmulOperands {
  Operand a, b, c;
  int64_t batch = 0, m = 0, k = 0, n = 0;
};
MatmulOperands readMatmulOperands(const UnrankedMemRef *aRef,
                                  const UnrankedMemRef *bRef,
                                  const UnrankedMemRef *cRef, bool transA,
                                  bool transB, size_t elemSize);

} // namespace ral
} // namespace disc

#endif // DISC_LIB_RUNTIME_OPERAND_H
