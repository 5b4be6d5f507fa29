//===- ConvTest.cpp - disc_ral_conv_* against a reference -----------------===//
//
// Like MatmulTest.cpp: a packed kernel views two flat input buffers as the
// convolution's input and kernel (any strides and offsets), allocates the
// output and calls the conv entry point.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "disc/Runtime/RalApi.h"
#include "disc/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <thread>

using namespace disc::ral;
using namespace disc::ral::test;

namespace {

using ConvFn = void (*)(void *, UnrankedMemRef *, UnrankedMemRef *,
                        UnrankedMemRef *, int64_t, int64_t, int64_t, int64_t,
                        int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                        int64_t, int64_t, int64_t, int64_t, int64_t, int64_t);

/// A view with the dims stored in the order `storageOrder` (outermost
/// first), e.g. {0, 2, 3, 1} for NHWC storage of an NCHW tensor.
View permutedView(std::vector<int64_t> sizes, std::vector<int> storageOrder) {
  View view;
  view.sizes = sizes;
  view.strides.assign(sizes.size(), 0);
  int64_t running = 1;
  for (int i = static_cast<int>(storageOrder.size()) - 1; i >= 0; --i) {
    view.strides[storageOrder[i]] = running;
    running *= sizes[storageOrder[i]];
  }
  return view;
}

struct ConvCase {
  DType dtype = DType::F32;
  View input, kernel;
  int64_t strides[3] = {1, 1, 1};
  int64_t padLo[3] = {0, 0, 0};
  int64_t padHi[3] = {0, 0, 0};
  int64_t dilations[3] = {1, 1, 1};
  int64_t lhsDilations[3] = {1, 1, 1}; // input dilation (transposed conv)
  int64_t groups = 1;
  std::vector<int64_t> outSizes;

  int64_t rank() const { return static_cast<int64_t>(input.sizes.size()); }
  /// Sets outSizes from the other fields.
  void inferOutput() {
    outSizes = {input.sizes[0], kernel.sizes[0]};
    for (int64_t s = 0; s + 2 < rank(); ++s) {
      int64_t span = (kernel.sizes[2 + s] - 1) * dilations[s] + 1;
      int64_t in = input.sizes[2 + s];
      int64_t dilated = in == 0 ? 0 : (in - 1) * lhsDilations[s] + 1;
      int64_t padded = dilated + padLo[s] + padHi[s];
      outSizes.push_back(padded < span ? 0 : (padded - span) / strides[s] + 1);
    }
  }
};

/// A case with contiguous input and kernel of these sizes: unit strides,
/// no padding or dilation, one group (outSizes left to inferOutput).
ConvCase contiguousCase(DType dtype, std::vector<int64_t> inputSizes,
                        std::vector<int64_t> kernelSizes) {
  ConvCase cc;
  cc.dtype = dtype;
  cc.input = contiguousView(std::move(inputSizes));
  cc.kernel = contiguousView(std::move(kernelSizes));
  return cc;
}

thread_local const ConvCase *gCase = nullptr;

ConvFn convFor(DType dtype) {
  switch (dtype) {
  case DType::BF16:
    return _mlir_ciface_disc_ral_conv_bf16;
  case DType::F16:
    return _mlir_ciface_disc_ral_conv_f16;
  default:
    return _mlir_ciface_disc_ral_conv_f32;
  }
}

/// Inputs: two rank-1 buffers (args[1..5], args[6..10]); result: args[11].
void convKernel(void **args) {
  void *ctx = ctxOf(args);
  const ConvCase &cc = *gCase;
  const int64_t rank = cc.rank();
  int64_t inWords[13], kWords[13], outWords[13];
  fillDescriptor(inWords, ptrOf(args, 2), cc.input);
  fillDescriptor(kWords, ptrOf(args, 7), cc.kernel);
  allocContiguous(ctx, outWords, cc.outSizes, dtypeSize(cc.dtype));
  UnrankedMemRef in = {rank, inWords}, k = {rank, kWords}, o = {rank, outWords};
  convFor(cc.dtype)(ctx, &in, &k, &o, cc.strides[0], cc.strides[1],
                    cc.strides[2], cc.padLo[0], cc.padLo[1], cc.padLo[2],
                    cc.padHi[0], cc.padHi[1], cc.padHi[2], cc.dilations[0],
                    cc.dilations[1], cc.dilations[2], cc.lhsDilations[0],
                    cc.lhsDilations[1], cc.lhsDilations[2], cc.groups);
  int64_t *result = static_cast<int64_t *>(args[11]);
  for (int64_t i = 0; i < 3 + 2 * rank; ++i)
    result[i] = outWords[i];
}

Signature convSignature(DType dtype, int64_t rank) {
  Signature signature;
  ArgSpec a, b;
  a.name = "%input";
  b.name = "%kernel";
  a.dtype = b.dtype = dtype;
  a.dims = b.dims = {-1};
  signature.args = {a, b};
  signature.results = {{dtype, rank}};
  return signature;
}

void checkConv(Context &context, const ConvCase &cc, uint32_t seed = 7) {
  std::mt19937 rng(seed);
  RandomBuffer inData(cc.dtype, cc.input.extent(), rng);
  RandomBuffer kData(cc.dtype, cc.kernel.extent(), rng);
  TensorView inView{inData.data(), cc.dtype, {cc.input.extent()}};
  TensorView kView{kData.data(), cc.dtype, {cc.kernel.extent()}};
  gCase = &cc;
  std::vector<OutputTensor> outputs = invoke(
      context, convKernel, convSignature(cc.dtype, cc.rank()), {inView, kView});
  ASSERT_EQ(outputs.size(), 1u);
  const OutputTensor &out = outputs[0];
  ASSERT_EQ(out.shape, cc.outSizes);
  for (int64_t size : cc.outSizes)
    if (size == 0)
      return;

  const int64_t numSpatial = cc.rank() - 2;
  const int64_t cPerGroup = cc.kernel.sizes[1];
  const int64_t oPerGroup = cc.kernel.sizes[0] / cc.groups;
  const std::vector<int64_t> window(cc.kernel.sizes.begin() + 2,
                                    cc.kernel.sizes.end());
  const double tolerance = toleranceFor(cc.dtype);
  std::vector<int64_t> o(cc.rank(), 0);
  int64_t flat = 0;
  int reported = 0;
  do {
    const int64_t n = o[0], oc = o[1], group = oc / oPerGroup;
    double expected = 0, magnitude = 0;
    for (int64_t c = 0; c < cPerGroup && !window.empty(); ++c) {
      std::vector<int64_t> w(numSpatial, 0);
      do {
        std::vector<int64_t> inIndex = {n, group * cPerGroup + c};
        bool inside = true;
        for (int64_t s = 0; s < numSpatial; ++s) {
          // A position in the dilated input: only multiples of the input
          // dilation hold input elements (the rest are zeros).
          int64_t pos =
              o[2 + s] * cc.strides[s] - cc.padLo[s] + w[s] * cc.dilations[s];
          inside &= pos >= 0 && pos % cc.lhsDilations[s] == 0 &&
                    pos / cc.lhsDilations[s] < cc.input.sizes[2 + s];
          inIndex.push_back(pos / cc.lhsDilations[s]);
        }
        if (!inside)
          continue;
        std::vector<int64_t> kIndex = {oc, c};
        kIndex.insert(kIndex.end(), w.begin(), w.end());
        double product =
            static_cast<double>(inData.values[cc.input.at(inIndex)]) *
            kData.values[cc.kernel.at(kIndex)];
        expected += product;
        magnitude += std::fabs(product);
      } while (nextIndex(w, window));
    }
    const double got = loadAsFloat(out.data, cc.dtype, flat);
    if (std::fabs(got - expected) > tolerance * magnitude + 1e-6 &&
        reported++ < 5)
      ADD_FAILURE() << "output[" << flat << "] = " << got << ", expected "
                    << expected;
    ++flat;
  } while (nextIndex(o, cc.outSizes));
}

class ConvTest : public ::testing::TestWithParam<DType> {
protected:
  std::shared_ptr<Context> context = Context::create();
};

TEST_P(ConvTest, Basic2d) {
  ConvCase cc = contiguousCase(GetParam(), {2, 3, 8, 8}, {4, 3, 3, 3});
  cc.padLo[0] = cc.padLo[1] = cc.padHi[0] = cc.padHi[1] = 1;
  cc.inferOutput();
  EXPECT_EQ(cc.outSizes, (std::vector<int64_t>{2, 4, 8, 8}));
  checkConv(*context, cc);
}

TEST_P(ConvTest, GroupedStridedPaddedDilated2d) {
  ConvCase cc;
  cc.dtype = GetParam();
  // Input [2, 6, 11, 9] stored NHWC inside a larger buffer (offset 5).
  cc.input = permutedView({2, 6, 11, 9}, {0, 2, 3, 1});
  cc.input.offset = 5;
  // Kernel [9, 2, 3, 2] (3 groups of 3 output channels), stored as
  // [O, kh, kw, C/G] ("ohwi").
  cc.kernel = permutedView({9, 2, 3, 2}, {0, 2, 3, 1});
  cc.groups = 3;
  cc.strides[0] = 2;
  cc.strides[1] = 1;
  cc.padLo[0] = 1;
  cc.padLo[1] = 0;
  cc.padHi[0] = 2;
  cc.padHi[1] = 1;
  cc.dilations[0] = 2;
  cc.dilations[1] = 3;
  cc.inferOutput();
  EXPECT_EQ(cc.outSizes, (std::vector<int64_t>{2, 9, 5, 7}));
  checkConv(*context, cc);
}

/// A [1, 2, 5, 6] input that is every other row and column of a larger
/// image (its pixels are not one strided run).
View everyOtherRowAndColumn() {
  View view;
  view.sizes = {1, 2, 5, 6};
  view.strides = {2 * 10 * 13, 10 * 13, 2 * 13, 2};
  view.offset = 3;
  return view;
}

TEST_P(ConvTest, StridedInputWithGaps) {
  ConvCase cc;
  cc.dtype = GetParam();
  cc.input = everyOtherRowAndColumn();
  cc.kernel = contiguousView({3, 2, 2, 2});
  cc.inferOutput();
  checkConv(*context, cc);
}

TEST_P(ConvTest, Depthwise) {
  ConvCase cc = contiguousCase(GetParam(), {1, 4, 7, 7}, {8, 1, 3, 3});
  cc.groups = 4;
  cc.padLo[0] = cc.padLo[1] = cc.padHi[0] = cc.padHi[1] = 1;
  cc.inferOutput();
  checkConv(*context, cc);
}

// Pointwise convolutions (1x1 kernel, unit strides, no padding, one group)
// run as a matmul [1, O, C] x [N, C, H*W] on the NCHW buffers themselves.
TEST_P(ConvTest, PointwiseAsMatmul) {
  // Batch 3: the kernel broadcasts.
  ConvCase cc = contiguousCase(GetParam(), {3, 5, 4, 6}, {7, 5, 1, 1});
  cc.inferOutput();
  checkConv(*context, cc);
  // The kernel stored transposed ([C, O] memory) and an input at an offset.
  cc.kernel = permutedView({7, 5, 1, 1}, {1, 0, 2, 3});
  cc.input.offset = 11;
  checkConv(*context, cc, 8);
}

TEST_P(ConvTest, PointwiseOneAndThreeSpatialDims) {
  ConvCase one = contiguousCase(GetParam(), {2, 6, 17}, {3, 6, 1});
  one.inferOutput();
  checkConv(*context, one);
  ConvCase three = contiguousCase(GetParam(), {2, 3, 2, 3, 4}, {4, 3, 1, 1, 1});
  three.inferOutput();
  checkConv(*context, three);
}

TEST_P(ConvTest, PointwiseNotAMatmul) {
  // Must NOT take the matmul path (each still correct, as a convolution):
  // pixels that are not one strided run (every other row and column),
  // a channels-last input, a stride of 2.
  ConvCase gaps;
  gaps.dtype = GetParam();
  gaps.input = everyOtherRowAndColumn();
  gaps.kernel = contiguousView({3, 2, 1, 1});
  gaps.inferOutput();
  checkConv(*context, gaps);
  ConvCase nhwc;
  nhwc.dtype = GetParam();
  nhwc.input = permutedView({2, 6, 5, 4}, {0, 2, 3, 1});
  nhwc.kernel = contiguousView({3, 6, 1, 1});
  nhwc.inferOutput();
  checkConv(*context, nhwc);
  ConvCase strided = contiguousCase(GetParam(), {1, 4, 7, 7}, {5, 4, 1, 1});
  strided.strides[0] = strided.strides[1] = 2;
  strided.inferOutput();
  checkConv(*context, strided);
}

TEST_P(ConvTest, TransposedAsInputDilation) {
  // A transposed convolution (stride 8, kernel 16, as convtasnet's
  // decoder): the input dilated by 8 and padded by 15 on both sides; the
  // runtime runs a deconvolution with the kernel flipped.
  ConvCase cc = contiguousCase(GetParam(), {2, 4, 9}, {3, 4, 16});
  cc.lhsDilations[0] = 8;
  cc.padLo[0] = cc.padHi[0] = 15;
  cc.inferOutput();
  EXPECT_EQ(cc.outSizes, (std::vector<int64_t>{2, 3, 80}));
  checkConv(*context, cc);
}

TEST_P(ConvTest, TransposedGroupedDilatedUnevenPadding2d) {
  // ConvTranspose2d(stride (2, 3), padding (1, 0), output_padding (1, 2),
  // dilation (2, 1), groups 2) in its convolution form: low = dilation *
  // (k - 1) - padding, high = low + output_padding; a strided input view.
  ConvCase cc;
  cc.dtype = GetParam();
  cc.input = permutedView({1, 4, 5, 6}, {0, 2, 3, 1});
  cc.kernel = contiguousView({6, 2, 3, 3});
  cc.groups = 2;
  cc.lhsDilations[0] = 2;
  cc.lhsDilations[1] = 3;
  cc.dilations[0] = 2;
  cc.padLo[0] = 3;
  cc.padHi[0] = 4;
  cc.padLo[1] = 2;
  cc.padHi[1] = 2;
  cc.inferOutput();
  EXPECT_EQ(cc.outSizes, (std::vector<int64_t>{1, 6, 12, 18}));
  checkConv(*context, cc);
}

TEST_P(ConvTest, OneDimensional) {
  ConvCase cc = contiguousCase(GetParam(), {3, 4, 20}, {5, 4, 4});
  cc.strides[0] = 3;
  cc.padLo[0] = 2;
  cc.padHi[0] = 1;
  cc.dilations[0] = 2;
  cc.inferOutput();
  EXPECT_EQ(cc.outSizes, (std::vector<int64_t>{3, 5, 6}));
  checkConv(*context, cc);
}

TEST_P(ConvTest, ThreeDimensional) {
  ConvCase cc = contiguousCase(GetParam(), {2, 4, 5, 6, 4}, {6, 2, 2, 3, 2});
  cc.groups = 2;
  cc.strides[1] = 2;
  cc.padLo[2] = 1;
  cc.padHi[2] = 1;
  cc.inferOutput();
  checkConv(*context, cc);
}

TEST_P(ConvTest, ZeroSizes) {
  ConvCase empty = contiguousCase(GetParam(), {0, 3, 5, 5}, {2, 3, 3, 3});
  empty.inferOutput();
  checkConv(*context, empty);
  // No input channels: the output is all zeros.
  ConvCase noChannels = empty;
  noChannels.input = contiguousView({1, 0, 5, 5});
  noChannels.kernel = contiguousView({2, 0, 3, 3});
  noChannels.inferOutput();
  checkConv(*context, noChannels);
  // Empty output image.
  ConvCase tiny = empty;
  tiny.input = contiguousView({1, 3, 2, 2});
  tiny.inferOutput();
  EXPECT_EQ(tiny.outSizes[2], 0);
  checkConv(*context, tiny);
}

INSTANTIATE_TEST_SUITE_P(DTypes, ConvTest,
                         ::testing::Values(DType::F32, DType::BF16, DType::F16),
                         [](const ::testing::TestParamInfo<DType> &info) {
                           return std::string(dtypeName(info.param));
                         });

TEST(ConvThreadTest, ConcurrentCallsShareCachedPrimitives) {
  auto context = Context::create();
  ConvCase cases[2];
  cases[0].input = contiguousView({2, 16, 14, 14});
  cases[0].kernel = contiguousView({32, 16, 3, 3});
  cases[0].padLo[0] = cases[0].padLo[1] = 1;
  cases[0].padHi[0] = cases[0].padHi[1] = 1;
  cases[1] = cases[0];
  cases[1].dtype = DType::BF16;
  cases[1].kernel = contiguousView({32, 4, 3, 3});
  cases[1].groups = 4;
  for (ConvCase &cc : cases) {
    cc.inferOutput();
    checkConv(*context, cc); // created on this thread
  }
  auto work = [&](uint32_t seed) {
    for (int i = 0; i < 10; ++i)
      checkConv(*context, cases[i % 2], seed + i);
  };
  std::thread t1(work, 10), t2(work, 20);
  t1.join();
  t2.join();
  EXPECT_EQ(context->allocator().stats().bytesInUse, 0u);
}

std::string convError(const ConvCase &cc) {
  auto context = Context::create();
  std::vector<float> in(cc.input.extent() + 1), k(cc.kernel.extent() + 1);
  TensorView inView{in.data(), DType::F32, {cc.input.extent()}};
  TensorView kView{k.data(), DType::F32, {cc.kernel.extent()}};
  gCase = &cc;
  std::string message = "<no error>";
  try {
    invoke(*context, convKernel, convSignature(DType::F32, cc.rank()),
           {inView, kView});
  } catch (const InvocationError &e) {
    message = e.what();
  }
  EXPECT_EQ(context->allocator().stats().bytesInUse, 0u);
  return message;
}

TEST(ConvErrorTest, ChannelMismatch) {
  ConvCase cc = contiguousCase(DType::F32, {1, 4, 5, 5}, {2, 3, 3, 3});
  cc.inferOutput();
  std::string message = convError(cc);
  EXPECT_NE(message.find("disc_ral_conv_f32: input channels must equal"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("kernel is [2, 3, 3, 3]"), std::string::npos)
      << message;
}

TEST(ConvErrorTest, WrongOutputSizeAndGroups) {
  ConvCase cc = contiguousCase(DType::F32, {1, 4, 5, 5}, {2, 4, 3, 3});
  cc.inferOutput();
  cc.outSizes[3] = 4;
  std::string message = convError(cc);
  EXPECT_NE(message.find("output spatial dim 1 is 4, expected 3"),
            std::string::npos)
      << message;
  ConvCase groups = contiguousCase(DType::F32, {1, 4, 5, 5}, {3, 2, 3, 3});
  groups.groups = 2; // 3 output channels do not split into 2 groups
  groups.inferOutput();
  EXPECT_NE(convError(groups).find("multiple of groups"), std::string::npos);
}

TEST(ConvErrorTest, NegativePadding) {
  // A dynamic padding (a transposed convolution's d * (k - 1) - p with a
  // kernel input) reaches the library as a value; a negative one is an
  // error naming the call, for a direct and a transposed convolution.
  ConvCase direct = contiguousCase(DType::F32, {1, 4, 5, 5}, {2, 4, 3, 3});
  direct.padLo[1] = -1;
  direct.inferOutput();
  std::string message = convError(direct);
  EXPECT_NE(message.find("disc_ral_conv_f32: padding must be >= 0"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("padLo [0, -1]"), std::string::npos) << message;
  ConvCase transposed = contiguousCase(DType::F32, {1, 4, 6}, {2, 4, 4});
  transposed.lhsDilations[0] = 2;
  transposed.padLo[0] = 1;
  transposed.padHi[0] = -2;
  transposed.inferOutput();
  EXPECT_NE(convError(transposed).find("padding must be >= 0"),
            std::string::npos);
}

} // namespace
