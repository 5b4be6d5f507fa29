//===- TestUtils.h - helpers for the runtime unit tests ---------*- C++ -*-===//
//
// Test kernels are C++ functions following the packed ABI of Runtime.h:
// args[0] points to the ExecutionContext pointer, then one pointer per
// descriptor word of each input, then a pointer to the result storage.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_UNITTESTS_RUNTIME_TESTUTILS_H
#define DISC_UNITTESTS_RUNTIME_TESTUTILS_H

#include "disc/Runtime/RalApi.h"
#include "disc/Runtime/Runtime.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <random>
#include <vector>

namespace disc {
namespace ral {

/// Prints DType test parameters by name.
inline void PrintTo(DType dtype, std::ostream *os) { *os << dtypeName(dtype); }

namespace test {

/// The ExecutionContext pointer of a packed call.
inline void *ctxOf(void **args) { return *static_cast<void **>(args[0]); }
/// The int64 word args[i] points to.
inline int64_t wordOf(void **args, int i) {
  return *static_cast<int64_t *>(args[i]);
}
/// The pointer word args[i] points to.
inline void *ptrOf(void **args, int i) {
  return *static_cast<void **>(args[i]);
}
inline int64_t asWord(const void *ptr) {
  return static_cast<int64_t>(reinterpret_cast<uintptr_t>(ptr));
}

/// Writes a result descriptor {allocated, aligned, offset, sizes, strides}.
/// Returns the number of words written.
/// A strided view of a flat buffer (offset and strides in elements).
struct View {
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;

  /// Elements the buffer needs to hold the view.
  int64_t extent() const {
    int64_t last = offset;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] == 0)
        return offset;
      last += (sizes[d] - 1) * strides[d];
    }
    return last + 1;
  }
  int64_t at(const std::vector<int64_t> &index) const {
    int64_t position = offset;
    for (size_t d = 0; d < sizes.size(); ++d)
      position += index[d] * strides[d];
    return position;
  }
};

inline View contiguousView(std::vector<int64_t> sizes) {
  View view;
  view.sizes = sizes;
  view.strides.assign(sizes.size(), 1);
  for (int d = static_cast<int>(sizes.size()) - 2; d >= 0; --d)
    view.strides[d] = view.strides[d + 1] * sizes[d + 1];
  return view;
}

/// Writes a ranked memref descriptor {allocated, aligned, offset, sizes,
/// strides} for `view` of `base` into `words`.
inline void fillDescriptor(int64_t *words, void *base, const View &view) {
  const size_t rank = view.sizes.size();
  words[0] = asWord(base);
  words[1] = asWord(base);
  words[2] = view.offset;
  for (size_t d = 0; d < rank; ++d) {
    words[3 + d] = view.sizes[d];
    words[3 + rank + d] = view.strides[d];
  }
}

/// Allocates (disc_ral_alloc) a contiguous buffer of `sizes` with elements
/// of `elemSize` bytes and writes its descriptor into `words`.
inline void allocContiguous(void *ctx, int64_t *words,
                            const std::vector<int64_t> &sizes,
                            size_t elemSize) {
  int64_t count = 1;
  for (int64_t size : sizes)
    count *= size;
  fillDescriptor(words, disc_ral_alloc(ctx, count * elemSize),
                 contiguousView(sizes));
}

/// Advances a multi-index over `sizes` (last dim fastest); false after the
/// last one.
inline bool nextIndex(std::vector<int64_t> &index,
                      const std::vector<int64_t> &sizes) {
  for (int d = static_cast<int>(index.size()) - 1; d >= 0; --d) {
    if (++index[d] < sizes[d])
      return true;
    index[d] = 0;
  }
  return false;
}

inline int64_t writeResult(int64_t *words, const void *allocated,
                           const void *aligned, int64_t offset,
                           std::initializer_list<int64_t> sizes,
                           std::initializer_list<int64_t> strides) {
  int64_t n = 0;
  words[n++] = asWord(allocated);
  words[n++] = asWord(aligned);
  words[n++] = offset;
  for (int64_t s : sizes)
    words[n++] = s;
  for (int64_t s : strides)
    words[n++] = s;
  return n;
}

inline uint16_t floatToBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1); // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}
inline float bf16ToFloat(uint16_t value) {
  uint32_t bits = static_cast<uint32_t>(value) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline float f16ToFloat(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exponent = (h >> 10) & 0x1f,
                 mantissa = h & 0x3ff;
  float value;
  if (exponent == 0)
    value = std::ldexp(static_cast<float>(mantissa), -24);
  else if (exponent == 31)
    value = mantissa ? NAN : INFINITY;
  else
    value = std::ldexp(static_cast<float>(mantissa | 0x400),
                       static_cast<int>(exponent) - 25);
  return sign ? -value : value;
}
/// Exact for the values the tests use (normal range, rounded to nearest).
inline uint16_t floatToF16(float f) {
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  f = std::fabs(f);
  if (f == 0)
    return sign;
  int exponent;
  std::frexp(f, &exponent); // f = m * 2^exponent, m in [0.5, 1)
  int biased = exponent - 1 + 15;
  if (biased <= 0) { // subnormal
    long m = std::lround(std::ldexp(f, 24));
    return static_cast<uint16_t>(sign | m);
  }
  long m = std::lround(std::ldexp(f, 11 - exponent)); // 11 bits incl. lead
  if (m == 2048) {
    m = 1024;
    ++biased;
  }
  if (biased >= 31)
    return sign | 0x7c00;
  return static_cast<uint16_t>(sign | (biased << 10) | (m & 0x3ff));
}

/// A buffer of random values in [-1, 1] of the given dtype (F32, BF16 or
/// F16), and the same values as floats.
struct RandomBuffer {
  DType dtype;
  std::vector<char> bytes;
  std::vector<float> values;

  RandomBuffer(DType dtype, int64_t count, std::mt19937 &rng)
      : dtype(dtype), bytes(count * dtypeSize(dtype)), values(count) {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (int64_t i = 0; i < count; ++i) {
      float v = dist(rng);
      if (dtype == DType::BF16) {
        uint16_t h = floatToBf16(v);
        std::memcpy(bytes.data() + 2 * i, &h, 2);
        v = bf16ToFloat(h);
      } else if (dtype == DType::F16) {
        uint16_t h = floatToF16(v);
        std::memcpy(bytes.data() + 2 * i, &h, 2);
        v = f16ToFloat(h);
      } else {
        std::memcpy(bytes.data() + 4 * i, &v, 4);
      }
      values[i] = v;
    }
  }
  void *data() { return bytes.data(); }
};

/// Reads element `index` of a buffer of `dtype` as a float.
inline float loadAsFloat(const void *data, DType dtype, int64_t index) {
  const char *bytes = static_cast<const char *>(data);
  if (dtype == DType::F32) {
    float f;
    std::memcpy(&f, bytes + 4 * index, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, bytes + 2 * index, 2);
  return dtype == DType::BF16 ? bf16ToFloat(h) : f16ToFloat(h);
}

/// Relative tolerance (to the sum of |products|) for results of `dtype`.
inline double toleranceFor(DType dtype) {
  switch (dtype) {
  case DType::BF16: // exact bf16 inputs, f32 accumulation, bf16 result
    return 5e-3;
  case DType::F16:
    return 1e-3;
  default:
    return 1e-4;
  }
}

} // namespace test
} // namespace ral
} // namespace disc

#endif // DISC_UNITTESTS_RUNTIME_TESTUTILS_H
