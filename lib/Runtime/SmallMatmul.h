//===- SmallMatmul.h - f32 matmuls too small for a primitive -*- C++ -*-===//
//
// A oneDNN matmul primitive call has a fixed cost of 4-15 us on the CPU: the
// primitive cache lookup (a key string of sizes and strides), memory
// objects, a stream, and an OpenMP parallel region whose worker threads have
// often gone to sleep since the last parallel work. The products of small
// models' training steps (a [9, 16] x [16, 32] layer, its weight gradient)
// take well under a microsecond of arithmetic, so the primitive call is
// nearly all overhead: such products go to oneDNN's dnnl_sgemm on the
// calling thread instead.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_LIB_RUNTIME_SMALLMATMUL_H
#define DISC_LIB_RUNTIME_SMALLMATMUL_H

#include "Operand.h"

#include <cstdint>

namespace disc {
namespace ral {

/// Whether a product of `batch` [m, k] x [k, n] matrices is small enough
/// that smallMatmulF32 computes it faster than a oneDNN matmul primitive:
/// at most smallMatmulLimit() multiply-adds in all.
bool isSmallMatmul(int64_t batch, int64_t m, int64_t k, int64_t n);

/// The multiply-add count up to which isSmallMatmul holds: 524288 (measured
/// in docs/debugging.md), or DISC_SMALL_MATMUL_MACS when set (0 sends every
/// product to oneDNN), read at the first call.
int64_t smallMatmulLimit();

/// Sets the limit for the whole process (tests run both paths); a negative
/// value restores the default (or DISC_SMALL_MATMUL_MACS).
void setSmallMatmulLimit(int64_t macs);

/// C = A x B for each of `batch` f32 matrices: `a` [batch, m, k], `b`
/// [batch, k, n] and `c` [batch, m, n] with any element strides (transposed,
/// broadcast, padded), one dnnl_sgemm per matrix on the calling thread;
/// `a` or `b` is replaced by a contiguous copy where dnnl_sgemm cannot read
/// its strides. Throws OpError when oneDNN reports a failure.
void smallMatmulF32(Operand &a, Operand &b, const Operand &c, int64_t batch,
                    int64_t m, int64_t k, int64_t n);

} // namespace ral
} // namespace disc

#endif // DISC_LIB_RUNTIME_SMALLMATMUL_H
