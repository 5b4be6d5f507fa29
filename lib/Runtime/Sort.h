//===- Sort.h - the runtime's sort along one dimension (private) -*- C++ -*-===//
#ifndef DISC_LIB_RUNTIME_SORT_H
#define DISC_LIB_RUNTIME_SORT_H

#include "ExecutionContext.h"

#include "disc/Runtime/RalApi.h"

namespace disc {
namespace ral {

/// Stable sort of every line of `input` along `dim` into `values` (same
/// shape and dtype, contiguous) and `indices` (i64, contiguous): the
/// disc_ral_sort_* entry points of RalApi.h. NaN is greater than every
/// number (PyTorch's order). Never throws: on failure it writes a message
/// naming `opName` into `ectx.errorMessage` and returns false.
bool runSort(ExecutionContext &ectx, DType dtype, const char *opName,
             const UnrankedMemRef *input, const UnrankedMemRef *values,
             const UnrankedMemRef *indices, int64_t dim,
             bool descending) noexcept;

} // namespace ral
} // namespace disc

#endif // DISC_LIB_RUNTIME_SORT_H
