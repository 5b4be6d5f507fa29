//===- ConvBackwardWeightsTest.cpp - disc_ral_conv_backward_weights_* -----===//
//
// Like ConvTest.cpp: a packed kernel views two flat buffers as the forward
// convolution's input and its output's gradient (any strides and offsets),
// allocates the kernel gradient and calls the entry point; the result is
// checked against a direct sum in double.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "disc/Runtime/RalApi.h"
#include "disc/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

using namespace disc::ral;
using namespace disc::ral::test;

namespace {

using BackwardWeightsFn = void (*)(void *, UnrankedMemRef *, UnrankedMemRef *,
                                   UnrankedMemRef *, int64_t, int64_t, int64_t,
                                   int64_t, int64_t, int64_t, int64_t, int64_t,
                                   int64_t, int64_t, int64_t, int64_t, int64_t,
                                   int64_t, int64_t, int64_t);

struct BackwardWeightsCase {
  DType dtype = DType::F32;
  View input, gradient;
  std::vector<int64_t> kernelSizes;
  int64_t strides[3] = {1, 1, 1};
  int64_t padLo[3] = {0, 0, 0};
  int64_t padHi[3] = {0, 0, 0};
  int64_t dilations[3] = {1, 1, 1};
  int64_t groups = 1;

  int64_t rank() const { return static_cast<int64_t>(input.sizes.size()); }
  /// The forward convolution's output sizes, [N, O, spatial...].
  std::vector<int64_t> outputSizes() const {
    std::vector<int64_t> sizes = {input.sizes[0], kernelSizes[0]};
    for (int64_t s = 0; s + 2 < rank(); ++s) {
      int64_t span = (kernelSizes[2 + s] - 1) * dilations[s] + 1;
      int64_t padded = input.sizes[2 + s] + padLo[s] + padHi[s];
      sizes.push_back(padded < span ? 0 : (padded - span) / strides[s] + 1);
    }
    return sizes;
  }
};

/// A contiguous case: input of `inputSizes`, kernel of `kernelSizes`, the
/// gradient contiguous of the output's sizes (after the caller sets the
/// parameters, through `finish`).
BackwardWeightsCase contiguousCase(DType dtype, std::vector<int64_t> inputSizes,
                                   std::vector<int64_t> kernelSizes) {
  BackwardWeightsCase bc;
  bc.dtype = dtype;
  bc.input = contiguousView(std::move(inputSizes));
  bc.kernelSizes = std::move(kernelSizes);
  return bc;
}

void finish(BackwardWeightsCase &bc) {
  bc.gradient = contiguousView(bc.outputSizes());
}

thread_local const BackwardWeightsCase *gCase = nullptr;

BackwardWeightsFn entryFor(DType dtype) {
  switch (dtype) {
  case DType::BF16:
    return _mlir_ciface_disc_ral_conv_backward_weights_bf16;
  case DType::F16:
    return _mlir_ciface_disc_ral_conv_backward_weights_f16;
  default:
    return _mlir_ciface_disc_ral_conv_backward_weights_f32;
  }
}

/// Inputs: two rank-1 buffers (args[1..5], args[6..10]); result: args[11].
void backwardWeightsKernel(void **args) {
  void *ctx = ctxOf(args);
  const BackwardWeightsCase &bc = *gCase;
  const int64_t rank = bc.rank();
  int64_t inWords[13], gradWords[13], outWords[13];
  fillDescriptor(inWords, ptrOf(args, 2), bc.input);
  fillDescriptor(gradWords, ptrOf(args, 7), bc.gradient);
  allocContiguous(ctx, outWords, bc.kernelSizes, dtypeSize(bc.dtype));
  UnrankedMemRef in = {rank, inWords}, grad = {rank, gradWords},
                 o = {rank, outWords};
  entryFor(bc.dtype)(ctx, &in, &grad, &o, bc.strides[0], bc.strides[1],
                     bc.strides[2], bc.padLo[0], bc.padLo[1], bc.padLo[2],
                     bc.padHi[0], bc.padHi[1], bc.padHi[2], bc.dilations[0],
                     bc.dilations[1], bc.dilations[2], 1, 1, 1, bc.groups);
  int64_t *result = static_cast<int64_t *>(args[11]);
  for (int64_t i = 0; i < 3 + 2 * rank; ++i)
    result[i] = outWords[i];
}

Signature backwardWeightsSignature(DType dtype, int64_t rank) {
  Signature signature;
  ArgSpec a, b;
  a.name = "%input";
  b.name = "%output_gradient";
  a.dtype = b.dtype = dtype;
  a.dims = b.dims = {-1};
  signature.args = {a, b};
  signature.results = {{dtype, rank}};
  return signature;
}

void checkBackwardWeights(Context &context, const BackwardWeightsCase &bc,
                          uint32_t seed = 7) {
  std::mt19937 rng(seed);
  RandomBuffer inData(bc.dtype, bc.input.extent(), rng);
  RandomBuffer gradData(bc.dtype, bc.gradient.extent(), rng);
  TensorView inView{inData.data(), bc.dtype, {bc.input.extent()}};
  TensorView gradView{gradData.data(), bc.dtype, {bc.gradient.extent()}};
  gCase = &bc;
  std::vector<OutputTensor> outputs =
      invoke(context, backwardWeightsKernel,
             backwardWeightsSignature(bc.dtype, bc.rank()), {inView, gradView});
  ASSERT_EQ(outputs.size(), 1u);
  const OutputTensor &out = outputs[0];
  ASSERT_EQ(out.shape, bc.kernelSizes);
  for (int64_t size : bc.kernelSizes)
    if (size == 0)
      return;
  const int64_t numSpatial = bc.rank() - 2;
  const int64_t cPerGroup = bc.kernelSizes[1];
  const int64_t oPerGroup = bc.kernelSizes[0] / bc.groups;
  const std::vector<int64_t> outSpace(bc.gradient.sizes.begin() + 2,
                                      bc.gradient.sizes.end());
  const double tolerance = toleranceFor(bc.dtype);
  std::vector<int64_t> w(bc.rank(), 0);
  int64_t flat = 0;
  int reported = 0;
  do {
    const int64_t oc = w[0], c = w[1], group = oc / oPerGroup;
    double expected = 0, magnitude = 0;
    for (int64_t n = 0; n < bc.input.sizes[0]; ++n) {
      std::vector<int64_t> p(numSpatial, 0);
      if (outSpace.empty() ||
          std::find(outSpace.begin(), outSpace.end(), 0) != outSpace.end())
        break;
      do {
        std::vector<int64_t> inIndex = {n, group * cPerGroup + c};
        bool inside = true;
        for (int64_t s = 0; s < numSpatial; ++s) {
          int64_t pos =
              p[s] * bc.strides[s] - bc.padLo[s] + w[2 + s] * bc.dilations[s];
          inside &= pos >= 0 && pos < bc.input.sizes[2 + s];
          inIndex.push_back(pos);
        }
        if (!inside)
          continue;
        std::vector<int64_t> gradIndex = {n, oc};
        gradIndex.insert(gradIndex.end(), p.begin(), p.end());
        double product =
            static_cast<double>(inData.values[bc.input.at(inIndex)]) *
            gradData.values[bc.gradient.at(gradIndex)];
        expected += product;
        magnitude += std::fabs(product);
      } while (nextIndex(p, outSpace));
    }
    const double got = loadAsFloat(out.data, bc.dtype, flat);
    if (std::fabs(got - expected) > tolerance * magnitude + 1e-6 &&
        reported++ < 5)
      ADD_FAILURE() << "kernel gradient[" << flat << "] = " << got
                    << ", expected " << expected;
    ++flat;
  } while (nextIndex(w, bc.kernelSizes));
}

class ConvBackwardWeightsTest : public ::testing::TestWithParam<DType> {
protected:
  std::shared_ptr<Context> context = Context::create();
};

TEST_P(ConvBackwardWeightsTest, PaddedStrided2d) {
  // A ResNet stage's 3x3 stride-2 convolution: the last input row and
  // column are read by no window (an odd size, stride 2).
  BackwardWeightsCase bc =
      contiguousCase(GetParam(), {3, 16, 11, 9}, {32, 16, 3, 3});
  bc.strides[0] = bc.strides[1] = 2;
  bc.padLo[0] = bc.padLo[1] = bc.padHi[0] = bc.padHi[1] = 1;
  finish(bc);
  EXPECT_EQ(bc.gradient.sizes, (std::vector<int64_t>{3, 32, 6, 5}));
  checkBackwardWeights(*context, bc);
}

TEST_P(ConvBackwardWeightsTest, FirstLayerOfThreeChannels) {
  BackwardWeightsCase bc = contiguousCase(GetParam(), {2, 3, 13, 10}, {8, 3, 3, 3});
  bc.padLo[0] = bc.padLo[1] = bc.padHi[0] = bc.padHi[1] = 1;
  finish(bc);
  checkBackwardWeights(*context, bc);
}

TEST_P(ConvBackwardWeightsTest, GroupedDilatedUnevenPaddingStridedViews) {
  BackwardWeightsCase bc;
  bc.dtype = GetParam();
  // Input stored NHWC inside a larger buffer; the gradient NHWC too.
  bc.input = {{2, 6, 11, 9}, {}, 5};
  bc.input.strides = {11 * 9 * 6, 1, 9 * 6, 6};
  bc.kernelSizes = {9, 2, 3, 2};
  bc.groups = 3;
  bc.strides[0] = 2;
  bc.padLo[0] = 1;
  bc.padHi[0] = 2;
  bc.padHi[1] = 1;
  bc.dilations[0] = 2;
  bc.dilations[1] = 3;
  std::vector<int64_t> out = bc.outputSizes();
  EXPECT_EQ(out, (std::vector<int64_t>{2, 9, 5, 7}));
  bc.gradient = {out, {5 * 7 * 9, 1, 7 * 9, 9}, 3};
  checkBackwardWeights(*context, bc);
}

TEST_P(ConvBackwardWeightsTest, Depthwise) {
  BackwardWeightsCase bc = contiguousCase(GetParam(), {2, 8, 9, 7}, {8, 1, 3, 3});
  bc.groups = 8;
  bc.padLo[0] = bc.padLo[1] = bc.padHi[0] = bc.padHi[1] = 1;
  finish(bc);
  checkBackwardWeights(*context, bc);
}

TEST_P(ConvBackwardWeightsTest, OneAndThreeSpatialDims) {
  BackwardWeightsCase one = contiguousCase(GetParam(), {3, 4, 20}, {5, 4, 4});
  one.strides[0] = 3;
  one.padLo[0] = 2;
  one.padHi[0] = 1;
  one.dilations[0] = 2;
  finish(one);
  checkBackwardWeights(*context, one);
  BackwardWeightsCase three =
      contiguousCase(GetParam(), {2, 4, 5, 6, 4}, {6, 2, 2, 3, 2});
  three.groups = 2;
  three.strides[1] = 2;
  three.padLo[2] = three.padHi[2] = 1;
  finish(three);
  checkBackwardWeights(*context, three);
}

TEST_P(ConvBackwardWeightsTest, EmptyBatchGivesZeros) {
  BackwardWeightsCase bc = contiguousCase(GetParam(), {0, 3, 5, 5}, {2, 3, 3, 3});
  finish(bc);
  checkBackwardWeights(*context, bc);
  EXPECT_EQ(context->allocator().stats().bytesInUse, 0u);
}

INSTANTIATE_TEST_SUITE_P(DTypes, ConvBackwardWeightsTest,
                         ::testing::Values(DType::F32, DType::BF16, DType::F16),
                         [](const ::testing::TestParamInfo<DType> &info) {
                           return std::string(dtypeName(info.param));
                         });

std::string backwardWeightsError(const BackwardWeightsCase &bc) {
  auto context = Context::create();
  std::vector<float> in(bc.input.extent() + 1), grad(bc.gradient.extent() + 1);
  TensorView inView{in.data(), DType::F32, {bc.input.extent()}};
  TensorView gradView{grad.data(), DType::F32, {bc.gradient.extent()}};
  gCase = &bc;
  std::string message = "<no error>";
  try {
    invoke(*context, backwardWeightsKernel,
           backwardWeightsSignature(DType::F32, bc.rank()), {inView, gradView});
  } catch (const InvocationError &e) {
    message = e.what();
  }
  EXPECT_EQ(context->allocator().stats().bytesInUse, 0u);
  return message;
}

TEST(ConvBackwardWeightsErrorTest, WrongGradientSizeNamesTheCall) {
  BackwardWeightsCase bc = contiguousCase(DType::F32, {1, 4, 5, 5}, {2, 4, 3, 3});
  finish(bc);
  bc.gradient = contiguousView({1, 2, 3, 4});
  std::string message = backwardWeightsError(bc);
  EXPECT_NE(message.find("disc_ral_conv_backward_weights_f32: output gradient "
                         "spatial dim 1 is 4, expected 3"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("kernel gradient is [2, 4, 3, 3]"), std::string::npos)
      << message;
}

TEST(ConvBackwardWeightsErrorTest, ChannelsAndGroups) {
  BackwardWeightsCase channels =
      contiguousCase(DType::F32, {1, 4, 5, 5}, {2, 3, 3, 3});
  finish(channels);
  EXPECT_NE(backwardWeightsError(channels).find(
                "input channels must equal kernel gradient dim 1 times groups"),
            std::string::npos);
  BackwardWeightsCase gradientFeatures =
      contiguousCase(DType::F32, {1, 4, 5, 5}, {2, 4, 3, 3});
  finish(gradientFeatures);
  gradientFeatures.gradient = contiguousView({1, 3, 3, 3});
  EXPECT_NE(backwardWeightsError(gradientFeatures)
                .find("the output gradient must have the input's batch size "
                      "and the kernel's output channels"),
            std::string::npos);
}

} // namespace
