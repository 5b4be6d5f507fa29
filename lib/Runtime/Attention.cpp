//===- Attention.cpp - blocked ("flash") attention on f32 -----------------===//
//
// out[b, h] = softmax(scale * q[b, h] x k[b, h]^T + mask [, causal]) x v[b, h]
// without materializing the [L, S] scores: each work item is one block of
// query rows of one (b, h); it walks the keys in blocks, computing a block of
// scores with oneDNN's sgemm, adding the mask, and folding the block into
// the running row maximum, row sum and output rows (the online softmax of
// FlashAttention). The scores block stays in cache; the output rows are
// accumulated in place in the result buffer.
//
// Work items run on the runtime's OpenMP threads (threadsForWork decides
// how many); the sgemm calls inside a parallel region run single-threaded.
// exp is a vectorizable polynomial (Cephes expf, about 2 ulp); the row
// kernels are compiled for AVX2+FMA as well as the baseline and picked by
// CPU feature on first use.
//
//===----------------------------------------------------------------------===//

#include "Attention.h"

#include "Operand.h"
#include "StridedCopy.h"

#include <dnnl.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#ifdef DISC_RAL_HAS_OPENMP
#include <omp.h>
#endif

namespace disc {
namespace ral {

namespace {

const float *floats(const Operand &operand) {
  return static_cast<const float *>(operand.data);
}

/// Makes the rows of `v` (dims 2 x 3) usable as an sgemm matrix: unit
/// element stride and a row stride of at least the row length; copies the
/// operand into a contiguous buffer otherwise. Returns the row stride.
int64_t prepareRows(Operand &v) {
  const int64_t rows = v.sizes[2], cols = v.sizes[3];
  const bool unitColumns = cols <= 1 || v.strides[3] == 1;
  const bool rowsApart = rows <= 1 || v.strides[2] >= std::max<int64_t>(cols, 1);
  bool positive = true;
  for (int d = 0; d < 2; ++d)
    positive &= v.sizes[d] <= 1 || v.strides[d] >= 0;
  if (unitColumns && rowsApart && positive)
    return rows <= 1 ? std::max<int64_t>(cols, 1)
                     : std::max<int64_t>(v.strides[2], 1);
  std::vector<int64_t> contiguous = contiguousStrides(v.sizes);
  v.copy.resize(static_cast<size_t>(numElements(v.sizes)) * sizeof(float));
  stridedCopy(v.copy.data(), contiguous.data(), v.data, v.strides.data(),
              v.sizes.data(), 4, sizeof(float));
  v.data = v.copy.data();
  v.strides = contiguous;
  return std::max<int64_t>(cols, 1);
}

/// exp(x) for x <= 88.7; 0 below -87.3 (where expf is denormal or 0).
/// Branch-free, so that the loops around it vectorize.
__attribute__((always_inline)) inline float expApprox(float x) {
  const float clamped = std::min(std::max(x, -87.33654f), 88.72283f);
  const float z = clamped * 1.44269504088896341f;
  // Round to nearest by the 1.5 * 2^23 trick (exact for |z| < 2^22).
  float n = z + 12582912.0f;
  n -= 12582912.0f;
  float r = clamped - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // 2^n from the exponent bits. A NaN x leaves n NaN, whose conversion to
  // int is undefined: 0 is used instead (p is NaN, so the result stays
  // NaN); the shift is done unsigned (n + 127 may be 0).
  const float nSafe = n == n ? n : 0.0f;
  const uint32_t bits = static_cast<uint32_t>(static_cast<int32_t>(nSafe) + 127)
                        << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return x < -87.33654f ? 0.0f : p * scale;
}

// The row kernels, compiled twice: for the baseline ISA and for AVX2+FMA
// (picked once, by CPU feature, in rowKernels()).
#define DISC_ROW_KERNELS(ATTRIBUTES, NAMESPACE)                                \
  namespace NAMESPACE {                                                        \
  /* Eight running maxima, so that the compiler emits packed max (a max   */ \
  /* reduction over one float is not vectorized without fast-math, even   */ \
  /* under omp simd). NaN scores are skipped here; exp then spreads them. */ \
  ATTRIBUTES float rowMax(const float *s, int64_t n) {                         \
    constexpr int lanes = 8;                                                   \
    const float negInf = -std::numeric_limits<float>::infinity();              \
    float m[lanes];                                                            \
    for (int l = 0; l < lanes; ++l)                                            \
      m[l] = negInf;                                                           \
    int64_t i = 0;                                                             \
    for (; i + lanes <= n; i += lanes)                                         \
      for (int l = 0; l < lanes; ++l)                                          \
        m[l] = s[i + l] > m[l] ? s[i + l] : m[l];                              \
    float result = negInf;                                                     \
    for (int l = 0; l < lanes; ++l)                                            \
      result = m[l] > result ? m[l] : result;                                  \
    for (; i < n; ++i)                                                         \
      result = s[i] > result ? s[i] : result;                                  \
    return result;                                                             \
  }                                                                            \
  /* s[i] = exp(s[i] - shift); returns the sum. */                             \
  ATTRIBUTES float expShiftSum(float *s, int64_t n, float shift) {             \
    float sum = 0.0f;                                                          \
    _Pragma("omp simd reduction(+ : sum)") for (int64_t i = 0; i < n; ++i) {   \
      const float e = expApprox(s[i] - shift);                                 \
      s[i] = e;                                                                \
      sum += e;                                                                \
    }                                                                          \
    return sum;                                                                \
  }                                                                            \
  ATTRIBUTES void scaleRow(float *row, int64_t n, float factor) {              \
    _Pragma("omp simd") for (int64_t i = 0; i < n; ++i) row[i] *= factor;      \
  }                                                                            \
  ATTRIBUTES void addRow(float *row, const float *other, int64_t stride,       \
                         int64_t n) {                                          \
    if (stride == 1) {                                                         \
      _Pragma("omp simd") for (int64_t i = 0; i < n; ++i) row[i] += other[i];  \
    } else {                                                                   \
      for (int64_t i = 0; i < n; ++i)                                          \
        row[i] += other[i * stride];                                           \
    }                                                                          \
  }                                                                            \
  }

DISC_ROW_KERNELS(, baseline)
#if defined(__GNUC__) && defined(__x86_64__)
#define DISC_HAS_AVX2_KERNELS 1
DISC_ROW_KERNELS(__attribute__((target("avx2,fma"))), avx2)
#endif
#undef DISC_ROW_KERNELS

struct RowKernels {
  float (*rowMax)(const float *, int64_t);
  float (*expShiftSum)(float *, int64_t, float);
  void (*scaleRow)(float *, int64_t, float);
  void (*addRow)(float *, const float *, int64_t, int64_t);
};

const RowKernels &rowKernels() {
  static const RowKernels kernels = [] {
#ifdef DISC_HAS_AVX2_KERNELS
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      return RowKernels{avx2::rowMax, avx2::expShiftSum, avx2::scaleRow,
                        avx2::addRow};
#endif
    return RowKernels{baseline::rowMax, baseline::expShiftSum,
                      baseline::scaleRow, baseline::addRow};
  }();
  return kernels;
}

struct Problem {
  Operand q, k, v, mask;
  float *out = nullptr;
  bool hasMask = false, causal = false;
  float scale = 1;
  int64_t ldq = 0, ldk = 0, ldv = 0;
  int64_t maskStrides[4] = {0, 0, 0, 0}; // 0 along broadcast dims
  int64_t batch = 0, heads = 0, queries = 0, keys = 0, headDim = 0,
          valueDim = 0;
  int64_t headGroup = 1; // query heads per key/value head
  int64_t queryBlock = 0, keyBlock = 0, queryBlocks = 0;
  // Causal only: per (b, key/value head), the last key row whose value row
  // holds a NaN or inf, or -1 (findNonFiniteValueRows).
  std::vector<int64_t> lastNonFiniteValueRow;
};

/// Causal attention does not read the keys past a query block's last row:
/// their weight is 0 in every row of the block. But 0 x v is NaN where v is
/// NaN or inf, and disc.attention is the definition's product of the
/// weights and v (docs/ops.md), as the cuda targets' decomposition computes
/// it. So each (b, key/value head) notes its last key row holding a
/// non-finite value; a block that skipped such a row marks the columns
/// concerned NaN (poisonSkippedColumns). Only the rows that some block
/// skips are scanned: those from the first block's end on.
void findNonFiniteValueRows(Problem &p, int threads) {
  const int64_t kvHeads = p.heads / p.headGroup;
  const int64_t firstSkipped = std::min(p.queryBlock, p.keys);
  p.lastNonFiniteValueRow.assign(p.batch * kvHeads, -1);
  auto scan = [&](int64_t entry) {
    const float *v = floats(p.v) + (entry / kvHeads) * p.v.strides[0] +
                     (entry % kvHeads) * p.v.strides[1];
    for (int64_t j = p.keys - 1; j >= firstSkipped; --j) {
      const float *row = v + j * p.v.strides[2];
      if (!std::all_of(row, row + p.valueDim,
                       [](float x) { return std::isfinite(x); })) {
        p.lastNonFiniteValueRow[entry] = j;
        return;
      }
    }
  };
  const int64_t entries = p.batch * kvHeads;
  (void)threads; // without OpenMP
#ifdef DISC_RAL_HAS_OPENMP
#pragma omp parallel for num_threads(threads) if (threads > 1)
#endif
  for (int64_t entry = 0; entry < entries; ++entry)
    scan(entry);
}

/// Marks NaN the columns of the block's output rows `o` where a value row
/// the block skipped (keys [keyEnd, keys), weight 0) is NaN or inf.
void poisonSkippedColumns(const Problem &p, const float *v, int64_t keyEnd,
                          int64_t rows, float *o) {
  std::vector<char> poisoned(p.valueDim, 0);
  for (int64_t j = keyEnd; j < p.keys; ++j) {
    const float *row = v + j * p.v.strides[2];
    for (int64_t d = 0; d < p.valueDim; ++d)
      poisoned[d] |= !std::isfinite(row[d]);
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t d = 0; d < p.valueDim; ++d)
    if (poisoned[d])
      for (int64_t r = 0; r < rows; ++r)
        o[r * p.valueDim + d] = nan;
}

/// One work item: query rows [i0, i0 + rows) of (b, h). `scores` has
/// queryBlock x keyBlock floats, `rowMaxima`/`rowSums` queryBlock each.
/// Returns false when sgemm fails.
bool attendBlock(const Problem &p, int64_t b, int64_t h, int64_t i0,
                 int64_t rows, float *scores, float *rowMaxima,
                 float *rowSums) {
  const float negInf = -std::numeric_limits<float>::infinity();
  const float *q = floats(p.q) + b * p.q.strides[0] + h * p.q.strides[1] +
                   i0 * p.q.strides[2];
  const int64_t kvHead = h / p.headGroup;
  const float *k = floats(p.k) + b * p.k.strides[0] + kvHead * p.k.strides[1];
  const float *v = floats(p.v) + b * p.v.strides[0] + kvHead * p.v.strides[1];
  float *o = p.out + ((b * p.heads + h) * p.queries + i0) * p.valueDim;
  std::fill(o, o + rows * p.valueDim, 0.0f);
  std::fill(rowMaxima, rowMaxima + rows, negInf);
  std::fill(rowSums, rowSums + rows, 0.0f);
  const int64_t ld = p.keyBlock;
  const RowKernels &kernels = rowKernels();
  // Causal: row i keeps keys j <= i, so no key past i0 + rows - 1 counts.
  const int64_t keyEnd = p.causal ? std::min(p.keys, i0 + rows) : p.keys;
  for (int64_t j0 = 0; j0 < keyEnd; j0 += p.keyBlock) {
    const int64_t n = std::min(p.keyBlock, keyEnd - j0);
    if (p.headDim == 0) {
      for (int64_t r = 0; r < rows; ++r)
        std::fill(scores + r * ld, scores + r * ld + n, 0.0f);
    } else if (dnnl_sgemm('N', 'T', rows, n, p.headDim, p.scale, q, p.ldq,
                          k + j0 * p.k.strides[2], p.ldk, 0.0f, scores,
                          ld) != dnnl_success) {
      return false;
    }
    for (int64_t r = 0; r < rows; ++r) {
      float *s = scores + r * ld;
      const int64_t i = i0 + r;
      if (p.hasMask) {
        const float *maskRow = floats(p.mask) + b * p.maskStrides[0] +
                               h * p.maskStrides[1] + i * p.maskStrides[2] +
                               j0 * p.maskStrides[3];
        kernels.addRow(s, maskRow, p.maskStrides[3], n);
      }
      if (p.causal)
        for (int64_t c = std::max<int64_t>(i + 1 - j0, 0); c < n; ++c)
          s[c] = negInf;
      const float previous = rowMaxima[r];
      const float current = std::max(previous, kernels.rowMax(s, n));
      if (current == negInf) {
        // Every score so far is -inf or NaN (rowMax skips NaN): nothing to
        // add yet, but a NaN score makes the row NaN (a NaN in the query
        // row makes every score NaN; fuzz/disc_fuzz.py --differential
        // found it 0 before).
        if (std::any_of(s, s + n, [](float x) { return x != x; }))
          rowSums[r] = std::numeric_limits<float>::quiet_NaN();
        std::fill(s, s + n, 0.0f);
        continue;
      }
      const float sum = kernels.expShiftSum(s, n, current);
      if (previous != negInf && previous != current) {
        // Rescale what the earlier key blocks added (nothing before the
        // first finite score).
        const float correction = expApprox(previous - current);
        rowSums[r] *= correction;
        kernels.scaleRow(o + r * p.valueDim, p.valueDim, correction);
      }
      rowSums[r] += sum;
      rowMaxima[r] = current;
    }
    if (p.valueDim > 0 &&
        dnnl_sgemm('N', 'N', rows, p.valueDim, n, 1.0f, scores, ld,
                   v + j0 * p.v.strides[2], p.ldv, 1.0f, o,
                   p.valueDim) != dnnl_success)
      return false;
  }
  // A row whose scores are all -inf (a mask hiding every key: left padding)
  // has sum 0 and stays 0, as PyTorch's CPU attention gives; with no keys
  // at all the output is 0 too, as a matmul with an empty contraction
  // gives. A NaN score makes the sum NaN and the row NaN.
  for (int64_t r = 0; r < rows; ++r)
    if (rowSums[r] != 0.0f)
      kernels.scaleRow(o + r * p.valueDim, p.valueDim, 1.0f / rowSums[r]);
  if (!p.lastNonFiniteValueRow.empty() && keyEnd < p.keys &&
      p.lastNonFiniteValueRow[b * (p.heads / p.headGroup) + kvHead] >= keyEnd)
    poisonSkippedColumns(p, v, keyEnd, rows, o);
  return true;
}

void attention(const UnrankedMemRef *qRef, const UnrankedMemRef *kRef,
               const UnrankedMemRef *vRef, const UnrankedMemRef *maskRef,
               const UnrankedMemRef *outRef, bool hasMask, bool causal,
               double scale) {
  Problem p;
  p.q = readOperand("query", qRef, 4, sizeof(float));
  p.k = readOperand("key", kRef, 4, sizeof(float));
  p.v = readOperand("value", vRef, 4, sizeof(float));
  Operand out = readOperand("result", outRef, 4, sizeof(float));
  const Dims &qs = p.q.sizes, &ks = p.k.sizes, &vs = p.v.sizes;
  auto describe = [&]() {
    return "query " + shapeString(qs) + ", key " + shapeString(ks) +
           ", value " + shapeString(vs);
  };
  if (ks[0] != qs[0] || vs[0] != qs[0])
    throw OpError("batch sizes differ: " + describe());
  // Grouped-query attention: each key/value head serves a group of
  // query heads (query head h reads key/value head h / group).
  if (vs[1] != ks[1] || (ks[1] == 0 ? qs[1] != 0 : qs[1] % ks[1] != 0))
    throw OpError("the query head count must be a multiple of the key and "
                  "value head count: " + describe());
  if (ks[3] != qs[3])
    throw OpError("query and key head dims differ: " + describe());
  if (vs[2] != ks[2])
    throw OpError("key and value sequence lengths differ: " + describe());
  const Dims expected = {qs[0], qs[1], qs[2], vs[3]};
  if (out.sizes != expected)
    throw OpError("result is " + shapeString(out.sizes) + ", expected " +
                  shapeString(expected) + ": " + describe());
  if (!isRowMajorContiguous(out.sizes.data(), out.strides.data(), 4))
    throw OpError("result must be contiguous");
  p.batch = qs[0];
  p.heads = qs[1];
  p.headGroup = ks[1] > 0 ? qs[1] / ks[1] : 1;
  p.queries = qs[2];
  p.headDim = qs[3];
  p.keys = ks[2];
  p.valueDim = vs[3];
  p.hasMask = hasMask;
  p.causal = causal;
  p.scale = static_cast<float>(scale);
  if (hasMask) {
    p.mask = readOperand("mask", maskRef, 4, sizeof(float));
    const std::vector<int64_t> scores = {p.batch, p.heads, p.queries, p.keys};
    for (int d = 0; d < 4; ++d) {
      if (p.mask.sizes[d] != 1 && p.mask.sizes[d] != scores[d])
        throw OpError("mask is " + shapeString(p.mask.sizes) +
                      "; each dim must be 1 or the scores' " +
                      shapeString(scores));
      p.maskStrides[d] = p.mask.sizes[d] == 1 ? 0 : p.mask.strides[d];
    }
  }
  if (numElements(out.sizes) == 0)
    return;
  p.out = static_cast<float *>(out.data);
  p.ldq = prepareRows(p.q);
  p.ldk = prepareRows(p.k);
  p.ldv = prepareRows(p.v);

  // Query blocks as PyTorch's CPU flash attention sizes them; keys in
  // blocks of 512 (a 64 x 512 scores block is 128 KiB: it stays in L2).
  p.queryBlock = p.queries >= 768 ? 128 : p.queries >= 192 ? 64 : 32;
  p.queryBlock = std::min<int64_t>(p.queryBlock, p.queries);
  p.keyBlock = std::max<int64_t>(std::min<int64_t>(512, p.keys), 1);
  p.queryBlocks = (p.queries + p.queryBlock - 1) / p.queryBlock;
  const int64_t units = p.batch * p.heads * p.queryBlocks;
  const int64_t workPerUnit =
      p.queryBlock * std::max<int64_t>(p.keys, 1) * (p.headDim + p.valueDim + 1);
  const int threads = threadsForWork(units, workPerUnit, currentThreadCount());
  if (p.causal && p.valueDim > 0)
    findNonFiniteValueRows(p, threads);
  std::atomic<bool> failed{false};
  auto runUnits = [&](int64_t first, int64_t step) {
    std::vector<float> scores(p.queryBlock * p.keyBlock),
        rowMaxima(p.queryBlock), rowSums(p.queryBlock);
    for (int64_t unit = first; unit < units && !failed.load(); unit += step) {
      const int64_t bh = unit / p.queryBlocks, block = unit % p.queryBlocks;
      const int64_t i0 = block * p.queryBlock;
      const int64_t rows = std::min(p.queryBlock, p.queries - i0);
      if (!attendBlock(p, bh / p.heads, bh % p.heads, i0, rows, scores.data(),
                       rowMaxima.data(), rowSums.data()))
        failed.store(true);
    }
  };
#ifdef DISC_RAL_HAS_OPENMP
  if (threads > 1) {
#pragma omp parallel num_threads(threads)
    runUnits(omp_get_thread_num(), omp_get_num_threads());
  } else {
    runUnits(0, 1);
  }
#else
  (void)threads;
  runUnits(0, 1);
#endif
  if (failed.load())
    throw OpError("oneDNN sgemm failed: " + describe());
}

} // namespace

bool runAttention(ExecutionContext &ectx, const char *opName,
                  const UnrankedMemRef *q, const UnrankedMemRef *k,
                  const UnrankedMemRef *v, const UnrankedMemRef *mask,
                  const UnrankedMemRef *out, bool hasMask, bool causal,
                  double scale) noexcept {
  return guardedCall(ectx, opName, [&]() {
    attention(q, k, v, mask, out, hasMask, causal, scale);
  });
}

} // namespace ral
} // namespace disc
