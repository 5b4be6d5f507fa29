//===- Attention.h - the runtime's attention kernel (private) ---*- C++ -*-===//
#ifndef DISC_LIB_RUNTIME_ATTENTION_H
#define DISC_LIB_RUNTIME_ATTENTION_H

#include "ExecutionContext.h"

#include "disc/Runtime/RalApi.h"

namespace disc {
namespace ral {

/// softmax(scale * q k^T + mask [, causal]) v on f32 [B, H, seq, dim]
/// memrefs (RalApi.h: disc_ral_attention_f32). Never throws: on failure it
/// writes a message naming `opName` into `ectx.errorMessage` and returns
/// false.
bool runAttention(ExecutionContext &ectx, const char *opName,
                  const UnrankedMemRef *q, const UnrankedMemRef *k,
                  const UnrankedMemRef *v, const UnrankedMemRef *mask,
                  const UnrankedMemRef *out, bool hasMask, bool causal,
                  double scale) noexcept;

} // namespace ral
} // namespace disc

#endif // DISC_LIB_RUNTIME_ATTENTION_H
