//===- SmallMatmul.cpp - f32 matmuls too small for a primitive call -------===//
//
// oneDNN's BLAS-like dnnl_sgemm takes row-major matrices with a leading
// dimension and a transpose flag each: no primitive to look up, no memory
// objects, no stream. It runs on the calling thread (an OpenMP thread count
// of 1 for the call), so no parallel region wakes the worker threads. A
// matrix whose strides are not a leading dimension and a unit stride (both
// strides non-unit) goes through a contiguous copy; C likewise.
//
//===----------------------------------------------------------------------===//

#include "SmallMatmul.h"

#include "StridedCopy.h"
#include "disc/Runtime/Runtime.h"

#include <dnnl.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace disc {
namespace ral {

namespace {

std::atomic<int64_t> smallMatmuls{0};

/// A [rows, cols] matrix with these element strides as dnnl_sgemm takes it:
/// 'N' and the row stride, or 'T' (stored column-major) and the column
/// stride. False when neither stride is a unit one (or the other is too
/// small to be a leading dimension). Strides of size-1 dims do not matter.
bool gemmLayout(int64_t rows, int64_t cols, int64_t rowStride,
                int64_t colStride, char &trans, int64_t &leading) {
  if (cols == 1)
    colStride = 1;
  if (rows == 1)
    rowStride = std::max<int64_t>(cols, 1);
  if (colStride == 1 && rowStride >= std::max<int64_t>(cols, 1)) {
    trans = 'N';
    leading = rowStride;
    return true;
  }
  if (rowStride == 1 && colStride >= std::max<int64_t>(rows, 1)) {
    trans = 'T';
    leading = colStride;
    return true;
  }
  return false;
}

/// Makes `operand` ([batch, rows, cols]) readable by dnnl_sgemm (a
/// contiguous copy when its strides are not) and sets its flag and leading
/// dimension.
void prepareGemmOperand(Operand &operand, int64_t rows, int64_t cols,
                        char &trans, int64_t &leading) {
  if (gemmLayout(rows, cols, operand.strides[1], operand.strides[2], trans,
                 leading))
    return;
  makeContiguous(operand, sizeof(float));
  trans = 'N';
  leading = std::max<int64_t>(cols, 1);
}

constexpr int64_t kDefaultLimit = 524288;

/// DISC_SMALL_MATMUL_MACS, or the default; a value that is not a
/// non-negative integer is reported on stderr (once) and ignored.
int64_t limitFromEnvironment() {
  const char *env = std::getenv("DISC_SMALL_MATMUL_MACS");
  if (!env || !*env)
    return kDefaultLimit;
  char *end = nullptr;
  const long long value = std::strtoll(env, &end, 10);
  if (*end == '\0' && value >= 0)
    return static_cast<int64_t>(value);
  std::fprintf(stderr,
               "[disc] DISC_SMALL_MATMUL_MACS=%s is not a non-negative "
               "integer; using %lld\n",
               env, static_cast<long long>(kDefaultLimit));
  return kDefaultLimit;
}

std::atomic<int64_t> &limitSetting() {
  static std::atomic<int64_t> limit{limitFromEnvironment()};
  return limit;
}

} // namespace

int64_t smallMatmulLimit() {
  return limitSetting().load(std::memory_order_relaxed);
}

void setSmallMatmulLimit(int64_t macs) {
  limitSetting().store(macs < 0 ? limitFromEnvironment() : macs);
}

int64_t smallMatmulCalls() { return smallMatmuls.load(); }

bool isSmallMatmul(int64_t batch, int64_t m, int64_t k, int64_t n) {
  const int64_t limit = smallMatmulLimit();
  // Checked factor by factor, so that the product cannot overflow.
  int64_t product = 1;
  for (const int64_t factor : {batch, m, k, n}) {
    if (factor != 0 && product > limit / factor)
      return false;
    product *= factor;
  }
  return true;
}

void smallMatmulF32(Operand &a, Operand &b, const Operand &c, int64_t batch,
                    int64_t m, int64_t k, int64_t n) {
  smallMatmuls.fetch_add(1, std::memory_order_relaxed);
  thread_local std::vector<float> cStorage;
  char transA = 'N', transB = 'N', transC = 'N';
  int64_t lda = 0, ldb = 0, ldc = 0;
  prepareGemmOperand(a, m, k, transA, lda);
  prepareGemmOperand(b, k, n, transB, ldb);
  // C is written row-major: in place when its rows are, else into a
  // contiguous temporary copied out after.
  const bool cInPlace =
      gemmLayout(m, n, c.strides[1], c.strides[2], transC, ldc) &&
      transC == 'N';
  if (!cInPlace) {
    cStorage.resize(static_cast<size_t>(batch * m * n));
    ldc = n;
  }
  const ThreadsForCall onCallingThread(1);
  for (int64_t i = 0; i < batch; ++i) {
    float *cMatrix = cInPlace ? static_cast<float *>(c.data) + i * c.strides[0]
                              : cStorage.data() + i * m * n;
    const dnnl_status_t status = dnnl_sgemm(
        transA, transB, m, n, k, 1.0f,
        static_cast<const float *>(a.data) + i * a.strides[0], lda,
        static_cast<const float *>(b.data) + i * b.strides[0], ldb, 0.0f,
        cMatrix, ldc);
    if (status != dnnl_success)
      throw OpError("dnnl_sgemm failed (status " + std::to_string(status) +
                    ") for [" + std::to_string(m) + ", " + std::to_string(k) +
                    "] x [" + std::to_string(k) + ", " + std::to_string(n) +
                    "]");
  }
  if (!cInPlace) {
    stridedCopy(c.data, c.strides.data(), cStorage.data(),
                contiguousStrides(c.sizes).data(), c.sizes.data(), 3,
                sizeof(float));
  }
}

} // namespace ral
} // namespace disc
