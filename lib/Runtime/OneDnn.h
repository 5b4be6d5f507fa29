//===- OneDnn.h - oneDNN-backed library calls (private) ---------*- C++ -*-===//
//
// The implementations behind the library entry points of RalApi.h. They
// never throw: on failure they write a message that names the operation into
// `ectx.errorMessage` and return false; the extern "C" wrapper then fails the
// call (see ExecutionContext.h).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_LIB_RUNTIME_ONEDNN_H
#define DISC_LIB_RUNTIME_ONEDNN_H

#include "ExecutionContext.h"
#include "Operand.h"

#include "disc/Runtime/RalApi.h"

namespace disc {
namespace ral {

/// A call's epilogue as passed by compiled code (RalApi.h): the (kind,
/// alpha, beta) triples and the operand slots.
struct EpilogueArgs {
  const UnrankedMemRef *steps;
  const UnrankedMemRef *operands[kMaxEpilogueOperands];
};

bool runMatmul(ExecutionContext &ectx, DType dtype, const char *opName,
               const UnrankedMemRef *a, const UnrankedMemRef *b,
               const UnrankedMemRef *c, int64_t transA, int64_t transB,
               const EpilogueArgs *epilogue = nullptr) noexcept;

bool runConv(ExecutionContext &ectx, DType dtype, const char *opName,
             const UnrankedMemRef *input, const UnrankedMemRef *kernel,
             const UnrankedMemRef *output, const ConvParams &params,
             const EpilogueArgs *epilogue = nullptr) noexcept;

/// The kernel gradient of a convolution (oneDNN's backward-weights
/// primitive): `input` and `outputGradient` as the forward convolution's
/// input and output gradient, `kernelGradient` written.
bool runConvBackwardWeights(ExecutionContext &ectx, DType dtype,
                            const char *opName, const UnrankedMemRef *input,
                            const UnrankedMemRef *outputGradient,
                            const UnrankedMemRef *kernelGradient,
                            const ConvParams &params) noexcept;

} // namespace ral
} // namespace disc

#endif // DISC_LIB_RUNTIME_ONEDNN_H
