//===- RalApi.h - C ABI between compiled code and the runtime ---*- C++ -*-===//
//
// Compiled code calls only these functions, always with the ExecutionContext
// pointer it received as its first argument. Library entry points use MLIR's
// C interface for unranked memrefs (`_mlir_ciface_` prefix; a pointer to
// {int64 rank, descriptor*} where the descriptor is {allocated, aligned,
// int64 offset, int64 sizes[rank], int64 strides[rank]}). No function here
// returns an error: failures go through disc_ral_fail, which does not return.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_RALAPI_H
#define DISC_RUNTIME_RALAPI_H

#include <cstdint>

namespace disc {
namespace ral {
struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};
/// A view of a ranked descriptor: {allocated, aligned, offset, sizes, strides}.
struct MemRefView {
  void *aligned;
  int64_t offset;
  const int64_t *sizes;
  const int64_t *strides;
  int64_t rank;
};
inline MemRefView viewOf(const UnrankedMemRef *m) {
  auto *words = static_cast<int64_t *>(m->descriptor);
  MemRefView v;
  v.aligned = reinterpret_cast<void *>(words[1]);
  v.offset = words[2];
  v.sizes = words + 3;
  v.strides = words + 3 + m->rank;
  v.rank = m->rank;
  return v;
}

/// One step of a library call's epilogue, applied to the result in order
/// (the values of the compiler's disc::PostOpKind). Binary steps combine
/// the result with the next epilogue operand: acc = acc OP operand.
enum class PostOpKind : int64_t {
  Add = 0,
  Subtract = 1,
  Multiply = 2,
  Divide = 3,
  Maximum = 4,
  Minimum = 5,
  Relu = 16,     // max(acc, 0)
  Clamp = 17,    // min(max(acc, alpha), beta)
  Logistic = 18, // 1 / (1 + exp(-acc))
  Tanh = 19,
  Swish = 20,   // acc * logistic(alpha * acc)
  GeluErf = 21, // 0.5 * acc * (1 + erf(acc / sqrt(2)))
};
/// The epilogue entry points take this many operand slots.
constexpr int kMaxEpilogueOperands = 6;
} // namespace ral
} // namespace disc

extern "C" {
/// Allocates `bytes` (64-byte aligned) for the current call.
void *disc_ral_alloc(void *ctx, int64_t bytes);
/// Returns a buffer of the current call early.
void disc_ral_free(void *ctx, void *ptr);
/// Reports an error and unwinds to the call boundary: never returns.
[[noreturn]] void disc_ral_fail(void *ctx, const char *message);
/// Runs units [0, units) of a compiled loop: `fn(args, lo, hi)` once per
/// thread on that thread's share, or `fn(args, 0, units)` on the calling
/// thread when units * work is too small to pay for a parallel launch.
/// `fn` must not fail.
void disc_ral_parallel_for(void (*fn)(void *, int64_t, int64_t), void *args,
                           int64_t units, int64_t work);

/// The calling thread's scratch buffer number `slot`, at least `bytes`
/// long and 64-byte aligned: the same memory for every request of this
/// thread for this slot (grown as needed), never freed by the caller. For a
/// loop body's dynamic-size temporary (disc.thread_scratch); any thread may
/// call it, and it does not fail (out of memory aborts with a message).
void *disc_ral_thread_scratch(int64_t slot, int64_t bytes);

/// Counts the variant a GPU row kernel runs in this call (0: one row per
/// thread, 1: one row per block; disc-map-loops-to-gpu). Any other id is
/// ignored.
void disc_ral_note_variant(int64_t variant);

/// Profiling hooks (DISC_PROFILE=1, disc-profile-calls): wall time from
/// begin to end is added to the entry `name` (a constant string).
void disc_ral_profile_begin(void *ctx, const char *name);
void disc_ral_profile_end(void *ctx, const char *name);

/// Batched matmul C[b] = op(A[b]) x op(B[b]) on rank-3 memrefs.
/// A is [B, M, K] ([B, K, M] when transA), B is [B, K, N] ([B, N, K] when
/// transB), C is [B, M, N] contiguous. A and B may have any strides.
#define DISC_RAL_DECLARE_MATMUL(SUFFIX)                                        \
  void _mlir_ciface_disc_ral_matmul_##SUFFIX(                                  \
      void *ctx, disc::ral::UnrankedMemRef *a, disc::ral::UnrankedMemRef *b,   \
      disc::ral::UnrankedMemRef *c, int64_t transA, int64_t transB);
DISC_RAL_DECLARE_MATMUL(f32)
DISC_RAL_DECLARE_MATMUL(f16)
DISC_RAL_DECLARE_MATMUL(bf16)

/// N-d convolution (1 to 3 spatial dims): input [N, C, S...], kernel
/// [O, C/groups, K...], output [N, O, S'...] contiguous. Per spatial dim s
/// (unused slots are ignored): stride, low/high padding, dilation (1 = none),
/// input dilation (1 = none; otherwise a transposed convolution: strides 1,
/// padding at most dilation * (K - 1), run as a deconvolution).
#define DISC_RAL_CONV_PARAMETERS                                               \
  void *ctx, disc::ral::UnrankedMemRef *input,                                 \
      disc::ral::UnrankedMemRef *kernel, disc::ral::UnrankedMemRef *output,    \
      int64_t stride0, int64_t stride1, int64_t stride2, int64_t padLo0,       \
      int64_t padLo1, int64_t padLo2, int64_t padHi0, int64_t padHi1,          \
      int64_t padHi2, int64_t dilation0, int64_t dilation1,                    \
      int64_t dilation2, int64_t lhsDilation0, int64_t lhsDilation1,           \
      int64_t lhsDilation2, int64_t groups
#define DISC_RAL_DECLARE_CONV(SUFFIX)                                          \
  void _mlir_ciface_disc_ral_conv_##SUFFIX(DISC_RAL_CONV_PARAMETERS);
DISC_RAL_DECLARE_CONV(f32)
DISC_RAL_DECLARE_CONV(f16)
DISC_RAL_DECLARE_CONV(bf16)

/// The kernel gradient of the convolution above (no input dilation:
/// lhsDilation* must be 1): input [N, C, S...] and outputGradient
/// [N, O, S'...] (any strides) give kernelGradient [O, C/groups, K...]
/// (contiguous), the sum over the batch and output positions. The
/// parameters are the forward convolution's.
#define DISC_RAL_CONV_BACKWARD_WEIGHTS_PARAMETERS                              \
  void *ctx, disc::ral::UnrankedMemRef *input,                                 \
      disc::ral::UnrankedMemRef *outputGradient,                               \
      disc::ral::UnrankedMemRef *kernelGradient, int64_t stride0,              \
      int64_t stride1, int64_t stride2, int64_t padLo0, int64_t padLo1,        \
      int64_t padLo2, int64_t padHi0, int64_t padHi1, int64_t padHi2,          \
      int64_t dilation0, int64_t dilation1, int64_t dilation2,                 \
      int64_t lhsDilation0, int64_t lhsDilation1, int64_t lhsDilation2,        \
      int64_t groups
#define DISC_RAL_DECLARE_CONV_BACKWARD_WEIGHTS(SUFFIX)                         \
  void _mlir_ciface_disc_ral_conv_backward_weights_##SUFFIX(                   \
      DISC_RAL_CONV_BACKWARD_WEIGHTS_PARAMETERS);
DISC_RAL_DECLARE_CONV_BACKWARD_WEIGHTS(f32)
DISC_RAL_DECLARE_CONV_BACKWARD_WEIGHTS(f16)
DISC_RAL_DECLARE_CONV_BACKWARD_WEIGHTS(bf16)

/// Scaled dot-product attention on f32: out[b, h] = softmax(scale * q[b, h]
/// x k[b, h]^T + mask[b, h] [, causal]) x v[b, h], the softmax over keys.
/// q [B, H, L, E], k [B, H, S, E], v [B, H, S, Ev] (any strides), out
/// [B, H, L, Ev] contiguous; mask (read only when hasMask) of rank 4 with
/// each dim 1 or the scores' [B, H, L, S]. causal keeps keys j <= i for
/// query row i.
void _mlir_ciface_disc_ral_attention_f32(
    void *ctx, disc::ral::UnrankedMemRef *q, disc::ral::UnrankedMemRef *k,
    disc::ral::UnrankedMemRef *v, disc::ral::UnrankedMemRef *mask,
    disc::ral::UnrankedMemRef *out, int64_t hasMask, int64_t causal,
    double scale);

/// Stable sort of every line of `input` along `dim` (ascending, or
/// descending when `descending` is 1) into `values` (input's shape and
/// dtype, contiguous) and `indices` (i64, contiguous): where in its line
/// each value came from. NaN is greater than every number (PyTorch's
/// order). One entry point per element type.
#define DISC_RAL_FOR_EACH_SORT_TYPE(X)                                         \
  X(f32, F32) X(f64, F64) X(f16, F16) X(bf16, BF16) X(i1, I1) X(i8, I8)       \
      X(i16, I16) X(i32, I32) X(i64, I64)
#define DISC_RAL_DECLARE_SORT(SUFFIX, DTYPE)                                   \
  void _mlir_ciface_disc_ral_sort_##SUFFIX(                                    \
      void *ctx, disc::ral::UnrankedMemRef *input,                             \
      disc::ral::UnrankedMemRef *values, disc::ral::UnrankedMemRef *indices,   \
      int64_t dim, int64_t descending);
DISC_RAL_FOR_EACH_SORT_TYPE(DISC_RAL_DECLARE_SORT)
#undef DISC_RAL_DECLARE_SORT

/// The f32 matmul and convolution with an epilogue: `steps` is a rank-1 f64
/// memref of (kind, alpha, beta) triples (PostOpKind); binary steps read
/// e0, e1, ... in order, each of the result's rank with dims 1 (broadcast)
/// or the result's. Unused operand slots may be any memref.
void _mlir_ciface_disc_ral_matmul_post_f32(
    void *ctx, disc::ral::UnrankedMemRef *a, disc::ral::UnrankedMemRef *b,
    disc::ral::UnrankedMemRef *c, int64_t transA, int64_t transB,
    disc::ral::UnrankedMemRef *steps, disc::ral::UnrankedMemRef *e0,
    disc::ral::UnrankedMemRef *e1, disc::ral::UnrankedMemRef *e2,
    disc::ral::UnrankedMemRef *e3, disc::ral::UnrankedMemRef *e4,
    disc::ral::UnrankedMemRef *e5);
void _mlir_ciface_disc_ral_conv_post_f32(
    void *ctx, disc::ral::UnrankedMemRef *input,
    disc::ral::UnrankedMemRef *kernel, disc::ral::UnrankedMemRef *output,
    int64_t stride0, int64_t stride1, int64_t stride2, int64_t padLo0,
    int64_t padLo1, int64_t padLo2, int64_t padHi0, int64_t padHi1,
    int64_t padHi2, int64_t dilation0, int64_t dilation1, int64_t dilation2,
    int64_t lhsDilation0, int64_t lhsDilation1, int64_t lhsDilation2,
    int64_t groups, disc::ral::UnrankedMemRef *steps,
    disc::ral::UnrankedMemRef *e0, disc::ral::UnrankedMemRef *e1,
    disc::ral::UnrankedMemRef *e2, disc::ral::UnrankedMemRef *e3,
    disc::ral::UnrankedMemRef *e4, disc::ral::UnrankedMemRef *e5);
}

extern "C" {
/// Launches kernel `kernelName` of `image` (the format of
/// disc-ral-lower-gpu-launch) on the call's stream: grid and block sizes,
/// dynamic shared memory bytes, `args[i]` pointing to the i-th kernel
/// argument. A zero grid dim launches nothing.
void disc_ral_cuda_launch(void *ctx, const void *image, int64_t imageBytes,
                          const char *kernelName, int64_t gridX, int64_t gridY,
                          int64_t gridZ, int64_t blockX, int64_t blockY,
                          int64_t blockZ, int32_t sharedBytes, void **args,
                          int64_t numArgs);
/// dot_general on the GPU (cuBLASLt), operands as the CPU matmul's.
void _mlir_ciface_disc_ral_cuda_matmul_f32(void *ctx,
                                           disc::ral::UnrankedMemRef *a,
                                           disc::ral::UnrankedMemRef *b,
                                           disc::ral::UnrankedMemRef *c,
                                           int64_t transA, int64_t transB);
void _mlir_ciface_disc_ral_cuda_matmul_f16(void *ctx,
                                           disc::ral::UnrankedMemRef *a,
                                           disc::ral::UnrankedMemRef *b,
                                           disc::ral::UnrankedMemRef *c,
                                           int64_t transA, int64_t transB);
void _mlir_ciface_disc_ral_cuda_matmul_bf16(void *ctx,
                                            disc::ral::UnrankedMemRef *a,
                                            disc::ral::UnrankedMemRef *b,
                                            disc::ral::UnrankedMemRef *c,
                                            int64_t transA, int64_t transB);
/// The same with `bias` ([1, 1, N], packed, C's type) added to every row of
/// C: cuBLASLt's bias epilogue (disc-cuda-library-calls forms it from a
/// `_post_` call whose epilogue is one bias add).
#define DISC_RAL_DECLARE_CUDA_MATMUL_BIAS(SUFFIX)                              \
  void _mlir_ciface_disc_ral_cuda_matmul_bias_##SUFFIX(                        \
      void *ctx, disc::ral::UnrankedMemRef *a, disc::ral::UnrankedMemRef *b,   \
      disc::ral::UnrankedMemRef *c, int64_t transA, int64_t transB,            \
      disc::ral::UnrankedMemRef *bias);
DISC_RAL_DECLARE_CUDA_MATMUL_BIAS(f32)
DISC_RAL_DECLARE_CUDA_MATMUL_BIAS(f16)
DISC_RAL_DECLARE_CUDA_MATMUL_BIAS(bf16)
#undef DISC_RAL_DECLARE_CUDA_MATMUL_BIAS
/// Device memory for the call, stream-ordered on its stream.
/// convolution on the GPU (cuDNN), operands and parameters as the CPU
/// convolution's (no input dilation; equal low and high padding).
#define DISC_RAL_DECLARE_CUDA_CONV(SUFFIX)                                     \
  void _mlir_ciface_disc_ral_cuda_conv_##SUFFIX(DISC_RAL_CONV_PARAMETERS);
DISC_RAL_DECLARE_CUDA_CONV(f32)
DISC_RAL_DECLARE_CUDA_CONV(f16)
DISC_RAL_DECLARE_CUDA_CONV(bf16)
/// The kernel gradient on the GPU (cuDNN's backward filter), operands and
/// parameters as the CPU call's (equal low and high padding).
#define DISC_RAL_DECLARE_CUDA_CONV_BACKWARD_WEIGHTS(SUFFIX)                    \
  void _mlir_ciface_disc_ral_cuda_conv_backward_weights_##SUFFIX(              \
      DISC_RAL_CONV_BACKWARD_WEIGHTS_PARAMETERS);
DISC_RAL_DECLARE_CUDA_CONV_BACKWARD_WEIGHTS(f32)
DISC_RAL_DECLARE_CUDA_CONV_BACKWARD_WEIGHTS(f16)
DISC_RAL_DECLARE_CUDA_CONV_BACKWARD_WEIGHTS(bf16)
void *disc_ral_cuda_alloc(void *ctx, int64_t bytes);
void disc_ral_cuda_free(void *ctx, void *ptr);
}

namespace disc {
namespace ral {
/// (name, address) of every function above. Compiled shared objects
/// resolve these names through the dynamic loader (libdisc_runtime.so
/// exports them); the table only serves the runtime's own tests now.
struct RalSymbol {
  const char *name;
  void *address;
};
const RalSymbol *ralSymbols(int64_t *count);
} // namespace ral
} // namespace disc

#endif // DISC_RUNTIME_RALAPI_H
