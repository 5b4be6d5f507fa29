//===- AttentionTest.cpp - disc_ral_attention_f32 against a reference -----===//
//
// A packed test kernel receives flat buffers for q, k, v and the mask,
// builds rank-4 memref descriptors viewing them (any sizes, strides and
// offset), allocates the result with disc_ral_alloc and calls the entry
// point, like compiled code. The reference is softmax(q k^T * scale + mask)
// v in double precision.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "disc/Runtime/RalApi.h"
#include "disc/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

using namespace disc::ral;
using namespace disc::ral::test;

namespace {

struct AttentionCase {
  View q, k, v, mask;
  bool hasMask = false, causal = false;
  double scale = 0.125;
  /// Mask values: random in [-1, 1], with these (flat) entries set to -inf.
  std::vector<int64_t> maskedEntries;
  /// Mask entries set to NaN.
  std::vector<int64_t> nanEntries;
};

thread_local const AttentionCase *gCase = nullptr;

/// Inputs: four rank-1 buffers (q, k, v, mask: 5 words each, the pointer
/// second); result: args[21].
void attentionKernel(void **args) {
  void *ctx = ctxOf(args);
  const AttentionCase &ac = *gCase;
  int64_t qWords[11], kWords[11], vWords[11], mWords[11], oWords[11];
  fillDescriptor(qWords, ptrOf(args, 2), ac.q);
  fillDescriptor(kWords, ptrOf(args, 7), ac.k);
  fillDescriptor(vWords, ptrOf(args, 12), ac.v);
  fillDescriptor(mWords, ptrOf(args, 17), ac.mask);
  const std::vector<int64_t> outSizes = {ac.q.sizes[0], ac.q.sizes[1],
                                         ac.q.sizes[2], ac.v.sizes[3]};
  View outView = contiguousView(outSizes);
  void *out = disc_ral_alloc(ctx, 4 * std::max<int64_t>(outView.extent(), 1));
  fillDescriptor(oWords, out, outView);
  UnrankedMemRef q = {4, qWords}, k = {4, kWords}, v = {4, vWords},
                 mask = {4, mWords}, o = {4, oWords};
  _mlir_ciface_disc_ral_attention_f32(ctx, &q, &k, &v, &mask, &o, ac.hasMask,
                                      ac.causal, ac.scale);
  int64_t *result = static_cast<int64_t *>(args[21]);
  for (int i = 0; i < 11; ++i)
    result[i] = oWords[i];
}

Signature attentionSignature() {
  Signature signature;
  for (const char *name : {"%q", "%k", "%v", "%mask"}) {
    ArgSpec arg;
    arg.name = name;
    arg.dtype = DType::F32;
    arg.dims = {-1};
    signature.args.push_back(arg);
  }
  signature.results = {{DType::F32, 4}};
  return signature;
}

/// Runs `ac` through invoke() on random data; returns the output and
/// compares it with the double-precision reference.
OutputTensor checkAttention(Context &context, const AttentionCase &ac,
                            uint32_t seed = 1) {
  std::mt19937 rng(seed);
  RandomBuffer q(DType::F32, std::max<int64_t>(ac.q.extent(), 1), rng);
  RandomBuffer k(DType::F32, std::max<int64_t>(ac.k.extent(), 1), rng);
  RandomBuffer v(DType::F32, std::max<int64_t>(ac.v.extent(), 1), rng);
  RandomBuffer m(DType::F32, std::max<int64_t>(ac.mask.extent(), 1), rng);
  for (int64_t e : ac.maskedEntries) {
    m.values[e] = -std::numeric_limits<float>::infinity();
    std::memcpy(m.bytes.data() + 4 * e, &m.values[e], 4);
  }
  for (int64_t e : ac.nanEntries) {
    m.values[e] = std::numeric_limits<float>::quiet_NaN();
    std::memcpy(m.bytes.data() + 4 * e, &m.values[e], 4);
  }
  std::vector<TensorView> inputs;
  for (RandomBuffer *b : {&q, &k, &v, &m})
    inputs.push_back(
        {b->data(), DType::F32, {static_cast<int64_t>(b->values.size())}});
  gCase = &ac;
  std::vector<OutputTensor> outputs =
      invoke(context, attentionKernel, attentionSignature(), inputs);
  EXPECT_EQ(outputs.size(), 1u);
  const OutputTensor &out = outputs[0];
  const int64_t B = ac.q.sizes[0], H = ac.q.sizes[1], L = ac.q.sizes[2],
                E = ac.q.sizes[3], S = ac.k.sizes[2], Ev = ac.v.sizes[3];
  EXPECT_EQ(out.shape, (std::vector<int64_t>{B, H, L, Ev}));
  int reported = 0;
  std::vector<double> p(S);
  // Grouped-query attention: query head h reads key/value head h / group.
  const int64_t group = ac.k.sizes[1] > 0 ? H / ac.k.sizes[1] : 1;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < L; ++i) {
        const int64_t kvh = h / group;
        double maxScore = -INFINITY;
        for (int64_t j = 0; j < S; ++j) {
          double s = 0;
          for (int64_t e = 0; e < E; ++e)
            s += double(q.values[ac.q.at({b, h, i, e})]) *
                 k.values[ac.k.at({b, kvh, j, e})];
          s *= ac.scale;
          if (ac.hasMask) {
            std::vector<int64_t> index = {b, h, i, j};
            for (int d = 0; d < 4; ++d)
              if (ac.mask.sizes[d] == 1)
                index[d] = 0;
            s += m.values[ac.mask.at(index)];
          }
          if (ac.causal && j > i)
            s = -INFINITY;
          p[j] = s;
          maxScore = std::max(maxScore, s);
        }
        double sum = 0;
        for (int64_t j = 0; j < S; ++j) {
          p[j] = std::exp(p[j] - maxScore);
          sum += p[j];
        }
        for (int64_t c = 0; c < Ev; ++c) {
          double expected = 0;
          for (int64_t j = 0; j < S; ++j)
            expected += p[j] / sum * v.values[ac.v.at({b, kvh, j, c})];
          if (S == 0 || maxScore == -INFINITY)
            expected = 0; // no key, or every key masked
          const double got =
              loadAsFloat(out.data, DType::F32, ((b * H + h) * L + i) * Ev + c);
          const bool bothNan = std::isnan(got) && std::isnan(expected);
          if (!bothNan && !(std::fabs(got - expected) <= 2e-5) &&
              reported++ < 5)
            ADD_FAILURE() << "out[" << b << "," << h << "," << i << "," << c
                          << "] = " << got << ", expected " << expected;
        }
      }
  return out;
}

AttentionCase denseCase(int64_t B, int64_t H, int64_t L, int64_t S, int64_t E,
                        int64_t Ev) {
  AttentionCase ac;
  ac.q = contiguousView({B, H, L, E});
  ac.k = contiguousView({B, H, S, E});
  ac.v = contiguousView({B, H, S, Ev});
  ac.mask = contiguousView({1, 1, 1, 1});
  ac.scale = 1.0 / std::sqrt(double(std::max<int64_t>(E, 1)));
  return ac;
}

class AttentionTest : public ::testing::Test {
protected:
  std::shared_ptr<Context> context = Context::create();
};

TEST_F(AttentionTest, SmallAndUnevenBlocks) {
  checkAttention(*context, denseCase(1, 1, 3, 5, 4, 4));
  checkAttention(*context, denseCase(2, 3, 7, 9, 16, 8));
  // More keys than one key block (512) and several query blocks, the last
  // ones partial.
  checkAttention(*context, denseCase(1, 2, 200, 1100, 8, 6));
}

TEST_F(AttentionTest, ManyQueryBlocksRunOnThreads) {
  // 2 x 4 x ceil(300 / 64) work items: enough work to split across the
  // threads when there are several.
  checkAttention(*context, denseCase(2, 4, 300, 300, 32, 32));
}

TEST_F(AttentionTest, BroadcastMask) {
  // A padding mask [B, 1, 1, S] with -inf entries, as BERT-style models
  // build it.
  AttentionCase ac = denseCase(2, 2, 6, 10, 8, 8);
  ac.hasMask = true;
  ac.mask = contiguousView({2, 1, 1, 10});
  ac.maskedEntries = {3, 4, 15};
  checkAttention(*context, ac);
  // A full [B, H, L, S] mask.
  AttentionCase full = denseCase(1, 2, 5, 7, 4, 4);
  full.hasMask = true;
  full.mask = contiguousView({1, 2, 5, 7});
  checkAttention(*context, full);
  // Broadcast along keys: [1, 1, L, 1].
  AttentionCase rows = denseCase(1, 1, 5, 600, 4, 4);
  rows.hasMask = true;
  rows.mask = contiguousView({1, 1, 5, 1});
  checkAttention(*context, rows);
}

TEST_F(AttentionTest, Causal) {
  AttentionCase ac = denseCase(1, 2, 70, 70, 8, 8);
  ac.causal = true;
  checkAttention(*context, ac);
  // More queries than keys, over several key blocks: the rows past the
  // last key keep every key.
  AttentionCase tall = denseCase(1, 1, 700, 600, 4, 4);
  tall.causal = true;
  checkAttention(*context, tall);
}

TEST_F(AttentionTest, FullyMaskedRowIsZero) {
  // A mask hiding every key of a query row (left padding in batched
  // decoding) gives 0 for that row, as PyTorch's CPU attention (flash and
  // math) does; a NaN there would spread through every later layer. Over
  // several key blocks too (700 keys).
  for (int64_t keys : {3, 700}) {
    AttentionCase ac = denseCase(1, 1, 2, keys, 4, 4);
    ac.hasMask = true;
    ac.mask = contiguousView({1, 1, 2, keys});
    for (int64_t j = 0; j < keys; ++j)
      ac.maskedEntries.push_back(j); // every key of query row 0
    OutputTensor out = checkAttention(*context, ac);
    for (int64_t c = 0; c < 4; ++c) {
      EXPECT_EQ(loadAsFloat(out.data, DType::F32, c), 0.0f);
      EXPECT_FALSE(std::isnan(loadAsFloat(out.data, DType::F32, 4 + c)));
    }
  }
}

TEST_F(AttentionTest, GroupedQueryHeads) {
  // 8 query heads over 2 key/value heads (Llama-style GQA), with a mask
  // per query head, and 6 over 6 (groups of one) as the must-not.
  for (int64_t kvHeads : {2, 1, 6}) {
    const int64_t heads = kvHeads == 6 ? 6 : 8;
    AttentionCase ac = denseCase(2, heads, 5, 9, 8, 4);
    ac.k = contiguousView({2, kvHeads, 9, 8});
    ac.v = contiguousView({2, kvHeads, 9, 4});
    ac.hasMask = true;
    ac.mask = contiguousView({1, heads, 5, 9});
    checkAttention(*context, ac);
  }
}

TEST_F(AttentionTest, HeadsNotAMultipleAreAnError) {
  AttentionCase ac = denseCase(1, 6, 5, 9, 8, 4);
  ac.k = contiguousView({1, 4, 9, 8});
  ac.v = contiguousView({1, 4, 9, 4});
  EXPECT_THROW(
      {
        try {
          checkAttention(*context, ac);
        } catch (const InvocationError &e) {
          EXPECT_NE(std::string(e.what()).find("multiple of the key and value "
                                                "head count"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      InvocationError);
}

TEST_F(AttentionTest, NanScoreGivesNanRow) {
  // A NaN score makes its row NaN, as in PyTorch, whether it falls in the
  // row maximum's packed part (key 3 of 21) or in its tail (key 19); the
  // row without one stays finite.
  AttentionCase ac = denseCase(1, 1, 3, 21, 4, 4);
  ac.hasMask = true;
  ac.mask = contiguousView({1, 1, 3, 21});
  ac.nanEntries = {3, 21 + 19};
  OutputTensor out = checkAttention(*context, ac);
  for (int64_t c = 0; c < 4; ++c) {
    EXPECT_TRUE(std::isnan(loadAsFloat(out.data, DType::F32, c)));
    EXPECT_TRUE(std::isnan(loadAsFloat(out.data, DType::F32, 4 + c)));
    EXPECT_FALSE(std::isnan(loadAsFloat(out.data, DType::F32, 8 + c)));
  }
}

TEST_F(AttentionTest, StridedOperands) {
  // q, k, v as the heads of [B, L, H, E] projections (a transpose view),
  // and k with a non-unit element stride (copied first).
  AttentionCase ac = denseCase(2, 3, 9, 11, 8, 8);
  ac.q.strides = {9 * 3 * 8, 8, 3 * 8, 1};
  ac.v.strides = {11 * 3 * 8, 8, 3 * 8, 1};
  ac.v.offset = 5;
  ac.k.strides = {3 * 11 * 8 * 2, 11 * 8 * 2, 8 * 2, 2};
  checkAttention(*context, ac);
}

TEST_F(AttentionTest, EmptyDims) {
  checkAttention(*context, denseCase(1, 2, 0, 5, 4, 4)); // no queries
  checkAttention(*context, denseCase(1, 1, 3, 0, 4, 4)); // no keys: zeros
  checkAttention(*context, denseCase(1, 1, 3, 4, 0, 4)); // E = 0: mean of v
}

TEST_F(AttentionTest, MismatchedShapesFailWithAMessage) {
  AttentionCase ac = denseCase(1, 2, 4, 5, 8, 8);
  ac.k = contiguousView({1, 2, 5, 7}); // head dim 7 vs 8
  gCase = &ac;
  std::mt19937 rng(1);
  RandomBuffer buffer(DType::F32, 1000, rng);
  std::vector<TensorView> inputs(4, {buffer.data(), DType::F32, {1000}});
  try {
    invoke(*context, attentionKernel, attentionSignature(), inputs);
    FAIL() << "expected an error";
  } catch (const std::exception &e) {
    EXPECT_NE(std::string(e.what()).find("disc_ral_attention_f32"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("head dims differ"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
