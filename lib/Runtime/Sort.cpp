//===- Sort.cpp - stable sort along one dimension -------------------------===//
#include "Sort.h"

#include "Operand.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

namespace disc {
namespace ral {
namespace {

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  int32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000 | (mantissa << 13); // inf / NaN
  } else if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else { // subnormal: normalise
      exponent = 1;
      while (!(mantissa & 0x400)) {
        mantissa <<= 1;
        --exponent;
      }
      mantissa &= 0x3ff;
      bits = sign | uint32_t(exponent + 112) << 23 | (mantissa << 13);
    }
  } else {
    bits = sign | uint32_t(exponent + 112) << 23 | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

float bf16ToFloat(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// The sort key of element `i` of a line: the value as a double (every
/// DISC dtype's values are exact in a double except i64 beyond 2^53, which
/// is compared as an integer instead).
template <typename T> struct Reader {
  static T read(const char *p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
};

template <typename Key>
void sortLines(const Operand &in, const MemRefView &values,
               const MemRefView &indices, int64_t dim, bool descending,
               size_t elemSize, Key key) {
  int64_t rank = static_cast<int64_t>(in.sizes.size());
  int64_t length = in.sizes[dim];
  int64_t lines = 1;
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim)
      lines *= in.sizes[d];
  if (lines == 0 || length == 0)
    return;
  // Outputs are contiguous (fresh allocations): line stride along dim.
  std::vector<int64_t> outStrides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    outStrides[d] = outStrides[d + 1] * in.sizes[d + 1];
  std::vector<int64_t> order(length), position(rank, 0);
  using K = decltype(key(nullptr));
  std::vector<K> keys(length);
  char *valuesBase = static_cast<char *>(values.aligned) +
                     values.offset * static_cast<int64_t>(elemSize);
  int64_t *indicesBase = static_cast<int64_t *>(indices.aligned) +
                         indices.offset;
  const char *inBase = static_cast<const char *>(in.data);
  for (int64_t line = 0; line < lines; ++line) {
    int64_t inOffset = 0, outOffset = 0;
    for (int64_t d = 0; d < rank; ++d) {
      inOffset += position[d] * in.strides[d];
      outOffset += position[d] * outStrides[d];
    }
    for (int64_t i = 0; i < length; ++i)
      keys[i] = key(inBase + (inOffset + i * in.strides[dim]) *
                                 static_cast<int64_t>(elemSize));
    std::iota(order.begin(), order.end(), 0);
    // NaN sorts above every number: last ascending, first descending.
    auto less = [&](int64_t a, int64_t b) {
      K x = keys[a], y = keys[b];
      bool xNan = x != x, yNan = y != y;
      if (xNan || yNan)
        return descending ? (xNan && !yNan) : (!xNan && yNan);
      return descending ? x > y : x < y;
    };
    std::stable_sort(order.begin(), order.end(), less);
    for (int64_t i = 0; i < length; ++i) {
      int64_t out = outOffset + i * outStrides[dim];
      std::memcpy(valuesBase + out * static_cast<int64_t>(elemSize),
                  inBase + (inOffset + order[i] * in.strides[dim]) *
                               static_cast<int64_t>(elemSize),
                  elemSize);
      indicesBase[out] = order[i];
    }
    // Next line: odometer over the dims other than `dim`.
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (d == dim)
        continue;
      if (++position[d] < in.sizes[d])
        break;
      position[d] = 0;
    }
  }
}

void sort(DType dtype, const UnrankedMemRef *input,
          const UnrankedMemRef *values, const UnrankedMemRef *indices,
          int64_t dim, bool descending) {
  if (!input || !values || !indices)
    throw OpError("null memref");
  int64_t rank = input->rank;
  size_t elemSize = dtypeSize(dtype);
  Operand in = readOperand("input", input, rank, elemSize);
  Operand out = readOperand("values", values, rank, elemSize);
  Operand idx = readOperand("indices", indices, rank, sizeof(int64_t));
  if (dim < 0 || dim >= rank)
    throw OpError("dimension " + std::to_string(dim) +
                  " is out of range for rank " + std::to_string(rank));
  if (out.sizes != in.sizes || idx.sizes != in.sizes)
    throw OpError("values " + shapeString(out.sizes) + " and indices " +
                  shapeString(idx.sizes) + " must have the input's shape " +
                  shapeString(in.sizes));
  MemRefView valuesView = viewOf(values), indicesView = viewOf(indices);
  auto run = [&](auto key) {
    sortLines(in, valuesView, indicesView, dim, descending, elemSize, key);
  };
  switch (dtype) {
  case DType::F32:
    return run([](const char *p) { return Reader<float>::read(p); });
  case DType::F64:
    return run([](const char *p) { return Reader<double>::read(p); });
  case DType::F16:
    return run(
        [](const char *p) { return halfToFloat(Reader<uint16_t>::read(p)); });
  case DType::BF16:
    return run(
        [](const char *p) { return bf16ToFloat(Reader<uint16_t>::read(p)); });
  case DType::I1:
  case DType::U8:
    return run([](const char *p) { return Reader<uint8_t>::read(p); });
  case DType::I8:
    return run([](const char *p) { return Reader<int8_t>::read(p); });
  case DType::I16:
    return run([](const char *p) { return Reader<int16_t>::read(p); });
  case DType::I32:
    return run([](const char *p) { return Reader<int32_t>::read(p); });
  case DType::I64:
    return run([](const char *p) { return Reader<int64_t>::read(p); });
  }
  throw OpError("unsupported dtype");
}

} // namespace

bool runSort(ExecutionContext &ectx, DType dtype, const char *opName,
             const UnrankedMemRef *input, const UnrankedMemRef *values,
             const UnrankedMemRef *indices, int64_t dim,
             bool descending) noexcept {
  return guardedCall(ectx, opName, [&]() {
    sort(dtype, input, values, indices, dim, descending);
  });
}

} // namespace ral
} // namespace disc
