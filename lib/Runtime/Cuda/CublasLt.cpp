//===- CublasLt.cpp - dot_general on the GPU through cuBLASLt -------------===//
//
// _mlir_ciface_disc_ral_cuda_matmul_<f32|f16|bf16>(ctx, A, B, C, transA,
// transB): C[b] = op(A[b]) x op(B[b]) on the call's stream, operands as the
// CPU's matmul takes them (3-d [batch, rows, cols] descriptors with any
// strides; disc-lower-library-calls normalises them).
// _mlir_ciface_disc_ral_cuda_matmul_bias_<f32|f16|bf16>(..., bias): the same
// plus a [1, 1, N] bias of C's type added to every row, by cuBLASLt's BIAS
// epilogue (in f32, before the product is rounded to C's type). cuBLASLt is
// loaded with dlopen ($DISC_CUBLASLT_LIBRARY, else libcublasLt.so.13 / .12,
// which a PyTorch CUDA process has loaded already): the CPU build never
// needs it.
//
// cuBLASLt is column-major. A row-major [M, N] result is the column-major
// [N, M] matrix C^T = B^T A^T, so B is passed as the first operand: a
// row-major operand whose last dim is contiguous is a column-major matrix of
// the transposed shape with op N, one whose second-to-last dim is contiguous
// a column-major matrix of its own shape with op T.
//
//===----------------------------------------------------------------------===//
#include "CudaDriver.h"
#include "CudaRal.h"

#include "../ExecutionContext.h"
#include "../Operand.h"
#include "disc/Runtime/RalApi.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <dlfcn.h>
#include <memory>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace disc {
namespace ral {
namespace cublaslt {

// The few cuBLASLt types and constants used (cublasLt.h, CUDA 12/13).
using Status = int;
using Handle = struct Opaque *;
using MatmulDesc = struct OpaqueDesc *;
using Layout = struct OpaqueLayout *;
using Preference = struct OpaquePreference *;
struct Algo {
  uint64_t data[8];
};
struct HeuristicResult {
  Algo algo;
  size_t workspaceSize;
  Status state;
  float wavesCount;
  int reserved[4];
};
constexpr int kR32F = 0, kR16F = 2, kR16BF = 14;      // cudaDataType
constexpr int kCompute32F = 68, kCompute32FFastTf32 = 77; // cublasComputeType_t
constexpr int kDescTransA = 3, kDescTransB = 4;       // matmul desc attrs
constexpr int kDescEpilogue = 7, kDescBiasPointer = 8;
constexpr uint32_t kEpilogueBias = 4; // CUBLASLT_EPILOGUE_BIAS
constexpr int kOpN = 0, kOpT = 1;                     // cublasOperation_t
constexpr int kLayoutBatchCount = 5, kLayoutBatchOffset = 6;
constexpr int kPrefMaxWorkspace = 1;
// CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_{A,B,C,D}_BYTES: the heuristic assumes
// 256-byte aligned pointers unless told less.
constexpr int kPrefMinAlignmentA = 5, kPrefMinAlignmentB = 6,
              kPrefMinAlignmentC = 7, kPrefMinAlignmentD = 8;
constexpr uint32_t kMaxAlignment = 256;
constexpr size_t kWorkspaceBytes = 32u << 20;

struct Library {
  Status (*create)(Handle *);
  Status (*descCreate)(MatmulDesc *, int computeType, int scaleType);
  Status (*descDestroy)(MatmulDesc);
  Status (*descSetAttribute)(MatmulDesc, int, const void *, size_t);
  Status (*layoutCreate)(Layout *, int type, uint64_t rows, uint64_t cols,
                         int64_t ld);
  Status (*layoutDestroy)(Layout);
  Status (*layoutSetAttribute)(Layout, int, const void *, size_t);
  Status (*preferenceCreate)(Preference *);
  Status (*preferenceDestroy)(Preference);
  Status (*preferenceSetAttribute)(Preference, int, const void *, size_t);
  Status (*algoGetHeuristic)(Handle, MatmulDesc, Layout, Layout, Layout,
                             Layout, Preference, int, HeuristicResult *,
                             int *);
  Status (*matmul)(Handle, MatmulDesc, const void *alpha, const void *a,
                   Layout, const void *b, Layout, const void *beta,
                   const void *c, Layout, void *d, Layout, const Algo *,
                   void *workspace, size_t workspaceBytes, void *stream);
};

void resolve(void *handle, Library &lib, std::string &error) {
  auto get = [&](const char *name, auto &fn) {
    cuda::resolveSymbol(handle, "cuBLASLt", name, fn, error);
  };
  get("cublasLtCreate", lib.create);
  get("cublasLtMatmulDescCreate", lib.descCreate);
  get("cublasLtMatmulDescDestroy", lib.descDestroy);
  get("cublasLtMatmulDescSetAttribute", lib.descSetAttribute);
  get("cublasLtMatrixLayoutCreate", lib.layoutCreate);
  get("cublasLtMatrixLayoutDestroy", lib.layoutDestroy);
  get("cublasLtMatrixLayoutSetAttribute", lib.layoutSetAttribute);
  get("cublasLtMatmulPreferenceCreate", lib.preferenceCreate);
  get("cublasLtMatmulPreferenceDestroy", lib.preferenceDestroy);
  get("cublasLtMatmulPreferenceSetAttribute", lib.preferenceSetAttribute);
  get("cublasLtMatmulAlgoGetHeuristic", lib.algoGetHeuristic);
  get("cublasLtMatmul", lib.matmul);
}

const Library &library() {
  return cuda::loadLibraryOnce<Library>(
      "DISC_CUBLASLT_LIBRARY", {"libcublasLt.so.13", "libcublasLt.so.12"},
      "dot_general on cuda needs cuBLASLt",
      "PyTorch's CUDA build ships it in the nvidia-cublas wheel; set "
      "DISC_CUBLASLT_LIBRARY to its path",
      resolve);
}

void check(Status status, const char *what) {
  if (status != 0)
    throw RuntimeError(std::string(what) + " failed with cuBLAS status " +
                       std::to_string(status));
}

/// One handle per CUDA context (cuBLASLt handles are not tied to a stream).
Handle handleFor(cuda::CUcontext context) {
  return cuda::handlePerContext<Handle>(context, [](Handle *handle) {
    check(library().create(handle), "cublasLtCreate");
  });
}

/// Releases cuBLASLt descriptors on every path.
struct Descriptors {
  const Library &lib;
  MatmulDesc desc = nullptr;
  Layout a = nullptr, b = nullptr, c = nullptr;
  Preference preference = nullptr;
  explicit Descriptors(const Library &lib) : lib(lib) {}
  ~Descriptors() {
    if (preference)
      lib.preferenceDestroy(preference);
    for (Layout l : {a, b, c})
      if (l)
        lib.layoutDestroy(l);
    if (desc)
      lib.descDestroy(desc);
  }
};

/// The column-major view of a row-major [rows, cols] operand with element
/// strides (rowStride, colStride): op and layout dims.
struct ColumnMajor {
  int op = kOpN;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
};

ColumnMajor columnMajor(const char *role, int64_t rows, int64_t cols,
                        int64_t rowStride, int64_t colStride) {
  ColumnMajor view;
  // A dim of size 1 may have any stride.
  if (cols == 1)
    colStride = 1;
  if (colStride == 1 && (rows == 1 || rowStride >= cols)) {
    // Row-major with contiguous rows: column-major [cols, rows], op N.
    view.op = kOpN;
    view.rows = cols, view.cols = rows;
    view.ld = std::max<int64_t>({rowStride, cols, 1});
    if (rows == 1)
      view.ld = std::max<int64_t>(cols, 1);
    return view;
  }
  if (rows == 1)
    rowStride = 1;
  if (rowStride == 1 && (cols == 1 || colStride >= rows)) {
    // Contiguous columns: column-major [rows, cols] as it is, op T.
    view.op = kOpT;
    view.rows = rows, view.cols = cols;
    view.ld = std::max<int64_t>({colStride, rows, 1});
    if (cols == 1)
      view.ld = std::max<int64_t>(rows, 1);
    return view;
  }
  throw OpError(std::string(role) + " has strides [" +
                std::to_string(rowStride) + ", " + std::to_string(colStride) +
                "]: neither dim is contiguous");
}

/// The largest power of two, at most kMaxAlignment, that divides `p`'s
/// address: what an algorithm chosen for this pointer may assume.
uint32_t alignmentOf(const void *p) {
  uintptr_t address = reinterpret_cast<uintptr_t>(p);
  uint32_t alignment = kMaxAlignment;
  while (alignment > 1 && address % alignment != 0)
    alignment /= 2;
  return alignment;
}

} // namespace cublaslt

namespace {

int cudaTypeOf(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return cublaslt::kR32F;
  case DType::F16:
    return cublaslt::kR16F;
  case DType::BF16:
    return cublaslt::kR16BF;
  default:
    throw OpError(std::string("no cuBLASLt type for ") + dtypeName(dtype));
  }
}

/// What a matmul problem needs from cuBLASLt, made once per (handle,
/// problem) and kept for the process: the matmul descriptor and the three
/// layouts, set, and the heuristic's answer. The heuristic query costs more
/// than a small GEMM (it took a 2048x3072x768 bf16 product from 19 to 88 us
/// on an H100); building and destroying the descriptors on every call cost
/// host time too. Descriptors are only read once set, so calls on several
/// threads share them.
/// With a bias, the descriptor also holds the bias pointer, which changes
/// every call: `biasLock` is held from setting it to the call's enqueue
/// (cuBLASLt reads the descriptor then).
struct PreparedMatmul {
  std::unique_ptr<cublaslt::Descriptors> descriptors;
  cublaslt::HeuristicResult heuristic{};
  std::unique_ptr<std::mutex> biasLock;
};

/// The bias of a `_bias_` call: [1, 1, n], packed (cuBLASLt reads it as a
/// vector of n contiguous elements).
Operand readBias(const UnrankedMemRef *biasRef, int64_t n, size_t elemSize) {
  Operand bias = readOperand("bias", biasRef, 3, elemSize);
  if (bias.sizes[0] != 1 || bias.sizes[1] != 1 || bias.sizes[2] != n)
    throw OpError("the bias is " + shapeString(bias.sizes) +
                  "; cuBLASLt's bias epilogue takes [1, 1, " +
                  std::to_string(n) + "]");
  if (n > 1 && bias.strides[2] != 1)
    throw OpError("the bias has element stride " +
                  std::to_string(bias.strides[2]) +
                  "; cuBLASLt's bias epilogue reads a packed vector");
  return bias;
}

void cudaMatmul(ExecutionContext &ectx, DType dtype,
                const UnrankedMemRef *aRef, const UnrankedMemRef *bRef,
                const UnrankedMemRef *cRef, bool transA, bool transB,
                const UnrankedMemRef *biasRef) {
  using namespace cublaslt;
  const size_t elemSize = dtypeSize(dtype);
  MatmulOperands ops =
      readMatmulOperands(aRef, bRef, cRef, transA, transB, elemSize);
  Operand &a = ops.a, &b = ops.b, &c = ops.c;
  const int64_t batch = ops.batch, m = ops.m, k = ops.k, n = ops.n;
  Operand bias;
  if (biasRef)
    bias = readBias(biasRef, n, elemSize);
  if (batch == 0 || m == 0 || n == 0)
    return;
  void *stream = ectx.cudaStream;
  if (k == 0) { // an empty contraction: zeros (async memset through a copy
                // is not available; fail clearly instead of guessing)
    throw OpError("a contraction over an empty dim is not supported on "
                  "cuda yet");
  }
  // D^T = B^T A^T in column-major: the first operand is B.
  ColumnMajor first = columnMajor("B", k, n, b.strides[1], b.strides[2]);
  ColumnMajor second = columnMajor("A", m, k, a.strides[1], a.strides[2]);
  ColumnMajor result = columnMajor("C", m, n, c.strides[1], c.strides[2]);
  if (result.op != kOpN)
    throw OpError("C must have contiguous rows");

  const Library &lib = library();
  Handle handle = handleFor(cuda::currentContext());
  const int type = cudaTypeOf(dtype);
  // f32 products on tensor cores with TF32 inputs when the caller allows
  // it (PyTorch's torch.backends.cuda.matmul.allow_tf32), else full f32.
  const int computeType = dtype == DType::F32 && ectx.float32Math.tf32Matmul
                              ? kCompute32FFastTf32
                              : kCompute32F;
  // The pointers' alignments: an algorithm the heuristic picks for aligned
  // operands may not run on a view that starts mid-block (x[:, 1:]).
  const uint32_t alignFirst = alignmentOf(b.data),
                 alignSecond = alignmentOf(a.data),
                 alignResult = alignmentOf(c.data);
  // 0: no bias (cuBLASLt's heuristic reads the bias pointer's alignment).
  const uint32_t alignBias = biasRef ? alignmentOf(bias.data) : 0;
  // The problem: types, ops, extents, leading dims, batching, alignments;
  // all the descriptors and the heuristic see.
  // (Extents are below 2^63: readMatmulOperands took them from int64_t.)
  auto extent = [](uint64_t v) { return static_cast<int64_t>(v); };
  // A fixed array: no heap per call (the cache's key).
  const std::array<int64_t, 21> problem = {
      type,          computeType,        first.op,
      second.op,     extent(first.rows), extent(first.cols),
      first.ld,      extent(second.rows), extent(second.cols),
      second.ld,     extent(result.rows), extent(result.cols),
      result.ld,     batch,              b.strides[0],
      a.strides[0],  c.strides[0],       alignFirst,
      alignSecond,   alignResult,        alignBias};
  const PreparedMatmul &prepared =
      cuda::preparedPerProblem<PreparedMatmul>(handle, problem, [&] {
        HeuristicResult heuristic{};
        auto d = std::make_unique<Descriptors>(lib);
        check(lib.descCreate(&d->desc, computeType, kR32F),
              "cublasLtMatmulDescCreate");
        check(lib.descSetAttribute(d->desc, kDescTransA, &first.op,
                                   sizeof(int)),
              "cublasLtMatmulDescSetAttribute(TRANSA)");
        check(lib.descSetAttribute(d->desc, kDescTransB, &second.op,
                                   sizeof(int)),
              "cublasLtMatmulDescSetAttribute(TRANSB)");
        if (biasRef) {
          // One bias for every batch (the default batch stride, 0).
          check(lib.descSetAttribute(d->desc, kDescEpilogue, &kEpilogueBias,
                                     sizeof(kEpilogueBias)),
                "cublasLtMatmulDescSetAttribute(EPILOGUE)");
          check(lib.descSetAttribute(d->desc, kDescBiasPointer, &bias.data,
                                     sizeof(bias.data)),
                "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
        }
        check(lib.layoutCreate(&d->a, type, first.rows, first.cols, first.ld),
              "cublasLtMatrixLayoutCreate(B)");
        check(lib.layoutCreate(&d->b, type, second.rows, second.cols,
                               second.ld),
              "cublasLtMatrixLayoutCreate(A)");
        check(lib.layoutCreate(&d->c, type, result.rows, result.cols,
                               result.ld),
              "cublasLtMatrixLayoutCreate(C)");
        if (batch > 1) {
          const int32_t count = (int32_t)batch;
          const int64_t offsets[3] = {b.strides[0], a.strides[0],
                                      c.strides[0]};
          Layout layouts[3] = {d->a, d->b, d->c};
          for (int i = 0; i < 3; ++i) {
            check(lib.layoutSetAttribute(layouts[i], kLayoutBatchCount, &count,
                                         sizeof(count)),
                  "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)");
            check(lib.layoutSetAttribute(layouts[i], kLayoutBatchOffset,
                                         &offsets[i], sizeof(int64_t)),
                  "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)");
          }
        }
        // The preference only feeds the query.
        check(lib.preferenceCreate(&d->preference),
              "cublasLtMatmulPreferenceCreate");
        const uint64_t workspaceBytes = kWorkspaceBytes;
        check(lib.preferenceSetAttribute(d->preference, kPrefMaxWorkspace,
                                         &workspaceBytes,
                                         sizeof(workspaceBytes)),
              "cublasLtMatmulPreferenceSetAttribute");
        const std::pair<int, uint32_t> alignments[] = {
            {kPrefMinAlignmentA, alignFirst},
            {kPrefMinAlignmentB, alignSecond},
            {kPrefMinAlignmentC, alignResult},
            {kPrefMinAlignmentD, alignResult}};
        for (const auto &[attribute, bytes] : alignments)
          check(lib.preferenceSetAttribute(d->preference, attribute, &bytes,
                                           sizeof(bytes)),
                "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT)");
        int found = 0;
        check(lib.algoGetHeuristic(handle, d->desc, d->a, d->b, d->c, d->c,
                                   d->preference, 1, &heuristic, &found),
              "cublasLtMatmulAlgoGetHeuristic");
        if (found == 0)
          throw OpError("cuBLASLt has no algorithm for A " +
                        shapeString(a.sizes) + ", B " + shapeString(b.sizes));
        return PreparedMatmul{std::move(d), heuristic,
                              std::make_unique<std::mutex>()};
      });
  const Descriptors &d = *prepared.descriptors;
  HeuristicResult heuristic = prepared.heuristic;
  void *workspace = nullptr;
  if (heuristic.workspaceSize > 0) {
    workspace = allocateDeviceForCall(&ectx, (int64_t)heuristic.workspaceSize);
    if (!workspace)
      throw RuntimeError(ectx.errorMessage);
  }
  const float one = 1.0f, zero = 0.0f;
  Status status;
  {
    std::unique_lock<std::mutex> biasLock;
    if (biasRef) {
      biasLock = std::unique_lock<std::mutex>(*prepared.biasLock);
      status = lib.descSetAttribute(d.desc, kDescBiasPointer, &bias.data,
                                    sizeof(bias.data));
      if (status != 0) {
        releaseDeviceForCall(ectx, workspace);
        check(status, "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
      }
    }
    status = lib.matmul(handle, d.desc, &one, b.data, d.a, a.data, d.b, &zero,
                        c.data, d.c, c.data, d.c, &heuristic.algo, workspace,
                        heuristic.workspaceSize, stream);
  }
  releaseDeviceForCall(ectx, workspace); // stream-ordered after the matmul
  check(status, "cublasLtMatmul");
}

bool runCudaMatmul(ExecutionContext &ectx, DType dtype, const char *opName,
                   const UnrankedMemRef *a, const UnrankedMemRef *b,
                   const UnrankedMemRef *c, int64_t transA, int64_t transB,
                   const UnrankedMemRef *bias = nullptr) noexcept {
  return guardedCall(ectx, opName, [&] {
    cudaMatmul(ectx, dtype, a, b, c, transA != 0, transB != 0, bias);
  });
}

} // namespace
} // namespace ral
} // namespace disc

using disc::ral::asExecutionContext;
using disc::ral::ExecutionContext;
using disc::ral::ralFailNoReturn;

#define DISC_RAL_DEFINE_CUDA_MATMUL(SUFFIX, DTYPE)                             \
  extern "C" void _mlir_ciface_disc_ral_cuda_matmul_##SUFFIX(                  \
      void *ctx, disc::ral::UnrankedMemRef *a, disc::ral::UnrankedMemRef *b,   \
      disc::ral::UnrankedMemRef *c, int64_t transA, int64_t transB) {          \
    ExecutionContext *ectx = asExecutionContext(ctx);                          \
    if (!disc::ral::runCudaMatmul(*ectx, disc::ral::DType::DTYPE,              \
                                  "disc_ral_cuda_matmul_" #SUFFIX, a, b, c,    \
                                  transA, transB))                             \
      ralFailNoReturn(ectx);                                                   \
  }
DISC_RAL_DEFINE_CUDA_MATMUL(f32, F32)
DISC_RAL_DEFINE_CUDA_MATMUL(f16, F16)
DISC_RAL_DEFINE_CUDA_MATMUL(bf16, BF16)

#define DISC_RAL_DEFINE_CUDA_MATMUL_BIAS(SUFFIX, DTYPE)                        \
  extern "C" void _mlir_ciface_disc_ral_cuda_matmul_bias_##SUFFIX(             \
      void *ctx, disc::ral::UnrankedMemRef *a, disc::ral::UnrankedMemRef *b,   \
      disc::ral::UnrankedMemRef *c, int64_t transA, int64_t transB,            \
      disc::ral::UnrankedMemRef *bias) {                                       \
    ExecutionContext *ectx = asExecutionContext(ctx);                          \
    if (!disc::ral::runCudaMatmul(*ectx, disc::ral::DType::DTYPE,              \
                                  "disc_ral_cuda_matmul_bias_" #SUFFIX, a, b,  \
                                  c, transA, transB, bias))                    \
      ralFailNoReturn(ectx);                                                   \
  }
DISC_RAL_DEFINE_CUDA_MATMUL_BIAS(f32, F32)
DISC_RAL_DEFINE_CUDA_MATMUL_BIAS(f16, F16)
DISC_RAL_DEFINE_CUDA_MATMUL_BIAS(bf16, BF16)
