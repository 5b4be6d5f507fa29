//===- DType.cpp - element types ------------------------------------------===//

#include "disc/Runtime/Runtime.h"

namespace disc {
namespace ral {

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F16:
  case DType::BF16:
  case DType::I16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::I1: // stored as one byte per element (MLIR's i1 memrefs)
  case DType::I8:
  case DType::U8:
    return 1;
  }
  throw RuntimeError("invalid DType " +
                     std::to_string(static_cast<int>(dtype)));
}

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::I1:
    return "i1";
  case DType::I8:
    return "i8";
  case DType::I16:
    return "i16";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  case DType::U8:
    return "ui8";
  }
  return "<invalid dtype>";
}

namespace {
struct DLPackType {
  DType dtype;
  uint8_t code, bits;
};
constexpr DLPackType kDLPackTypes[] = {
    {DType::F16, 2, 16}, {DType::BF16, 4, 16}, {DType::F32, 2, 32},
    {DType::F64, 2, 64}, {DType::I1, 6, 8},    {DType::I8, 0, 8},
    {DType::I16, 0, 16}, {DType::I32, 0, 32},  {DType::I64, 0, 64},
    {DType::U8, 1, 8},
};
} // namespace

bool dtypeFromDLPack(uint8_t code, uint8_t bits, uint16_t lanes, DType &out) {
  if (lanes != 1)
    return false;
  for (const DLPackType &t : kDLPackTypes)
    if (t.code == code && t.bits == bits) {
      out = t.dtype;
      return true;
    }
  return false;
}

void dtypeToDLPack(DType dtype, uint8_t &code, uint8_t &bits) {
  for (const DLPackType &t : kDLPackTypes)
    if (t.dtype == dtype) {
      code = t.code;
      bits = t.bits;
      return;
    }
  code = 2;
  bits = 32;
}

} // namespace ral
} // namespace disc
