//===- CheckInputsTest.cpp - signature checks and their messages ----------===//

#include "disc/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <string>

using namespace disc::ral;

namespace {

/// %arg0: f32 [?, 4] and %arg1: f32 [?, ?] where arg0 dim 0 and arg1 dim 0
/// must be equal (class 0) and arg1 dim 1 is in a class fixed to 7.
Signature makeSignature() {
  Signature signature;
  ArgSpec arg0;
  arg0.name = "%arg0";
  arg0.dtype = DType::F32;
  arg0.dims = {-1, 4};
  arg0.dimClass = {0, -1};
  ArgSpec arg1;
  arg1.name = "%arg1";
  arg1.dtype = DType::F32;
  arg1.dims = {-1, -1};
  arg1.dimClass = {0, 1};
  signature.args = {arg0, arg1};
  signature.classes = {{-1, "disc.add at model.mlir:3"},
                       {7, "disc.matmul at model.mlir:5"}};
  signature.results = {{DType::F32, 2}};
  return signature;
}

float buffer[64];

TensorView view(DType dtype, std::vector<int64_t> shape) {
  TensorView v;
  v.data = buffer;
  v.dtype = dtype;
  v.shape = std::move(shape);
  return v;
}

std::string errorOf(const Signature &signature,
                    const std::vector<TensorView> &inputs) {
  try {
    checkInputs(signature, inputs);
  } catch (const InvocationError &e) {
    return e.what();
  }
  return "<no error>";
}

#define EXPECT_HAS(haystack, needle)                                           \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)             \
      << "message: " << (haystack)

TEST(CheckInputsTest, AcceptsMatchingInputs) {
  Signature signature = makeSignature();
  EXPECT_NO_THROW(checkInputs(
      signature, {view(DType::F32, {3, 4}), view(DType::F32, {3, 7})}));
}

TEST(CheckInputsTest, InputCount) {
  Signature signature = makeSignature();
  EXPECT_EQ(errorOf(signature, {view(DType::F32, {3, 4})}),
            "expected 2 inputs, got 1");
}

TEST(CheckInputsTest, DType) {
  Signature signature = makeSignature();
  EXPECT_EQ(
      errorOf(signature, {view(DType::F32, {3, 4}), view(DType::I32, {3, 7})}),
      "argument 1 (%arg1) has dtype i32, expected f32");
}

TEST(CheckInputsTest, Rank) {
  Signature signature = makeSignature();
  std::string message = errorOf(
      signature, {view(DType::F32, {3, 4, 1}), view(DType::F32, {3, 7})});
  EXPECT_HAS(message, "argument 0 (%arg0) has rank 3, expected 2");
}

TEST(CheckInputsTest, StaticDim) {
  Signature signature = makeSignature();
  EXPECT_EQ(
      errorOf(signature, {view(DType::F32, {3, 5}), view(DType::F32, {3, 7})}),
      "argument 0 (%arg0) dim 1 is 5, expected 4");
}

TEST(CheckInputsTest, DimClassNamesBothDimsAndTheReason) {
  Signature signature = makeSignature();
  EXPECT_EQ(
      errorOf(signature, {view(DType::F32, {3, 4}), view(DType::F32, {5, 7})}),
      "argument 1 (%arg1) dim 0 is 5, but must equal argument 0 (%arg0) dim 0 "
      "which is 3 (required by disc.add at model.mlir:3)");
}

TEST(CheckInputsTest, DimClassWithStaticSize) {
  Signature signature = makeSignature();
  std::string message =
      errorOf(signature, {view(DType::F32, {3, 4}), view(DType::F32, {3, 6})});
  EXPECT_HAS(message, "argument 1 (%arg1) dim 1 is 6, expected 7");
  EXPECT_HAS(message, "disc.matmul at model.mlir:5");
}

TEST(CheckInputsTest, DimClassWithinOneArgument) {
  Signature signature;
  ArgSpec arg;
  arg.name = "%x";
  arg.dims = {-1, -1};
  arg.dimClass = {0, 0};
  signature.args = {arg};
  signature.classes = {{-1, "a square matrix"}};
  EXPECT_NO_THROW(checkInputs(signature, {view(DType::F32, {5, 5})}));
  EXPECT_EQ(errorOf(signature, {view(DType::F32, {5, 6})}),
            "argument 0 (%x) dim 1 is 6, but must equal argument 0 (%x) dim 0 "
            "which is 5 (required by a square matrix)");
}

TEST(CheckInputsTest, UnnamedArgumentsAndEmptyTensors) {
  Signature signature;
  ArgSpec arg;
  arg.dims = {-1};
  signature.args = {arg};
  EXPECT_EQ(errorOf(signature, {view(DType::F16, {2})}),
            "argument 0 has dtype f16, expected f32");
  TensorView empty = view(DType::F32, {0});
  empty.data = nullptr; // fine: no elements
  EXPECT_NO_THROW(checkInputs(signature, {empty}));
  TensorView missing = view(DType::F32, {2});
  missing.data = nullptr;
  EXPECT_THROW(checkInputs(signature, {missing}), InvocationError);
}

TEST(CheckInputsTest, InvalidSignatureIsNotAnInvocationError) {
  Signature signature;
  ArgSpec arg;
  arg.dims = {-1};
  arg.dimClass = {3}; // no such class
  signature.args = {arg};
  try {
    checkInputs(signature, {view(DType::F32, {2})});
    FAIL() << "expected an error";
  } catch (const InvocationError &) {
    FAIL() << "a bad signature is not the caller's fault";
  } catch (const RuntimeError &e) {
    EXPECT_HAS(e.what(), "invalid signature");
  }
}

} // namespace
