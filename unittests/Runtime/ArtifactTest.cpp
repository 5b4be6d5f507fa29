//===- ArtifactTest.cpp - the artifact format and the C API's errors ------===//
#include "disc/Runtime/Artifact.h"
#include "disc/disc_runtime.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

using namespace disc::ral;

namespace {

Artifact sample() {
  Artifact a;
  a.metadata["target"] = "cpu";
  a.metadata["entry"] = "main";
  ArgSpec x;
  x.name = "x";
  x.dtype = DType::F32;
  x.dims = {-1, 4};
  x.dimClass = {0, 1};
  x.minSize = {2, 0};
  x.maxSize = {64, -1};
  ArgSpec w;
  w.name = "w";
  w.dtype = DType::F32;
  w.dims = {4};
  w.dimClass = {1};
  a.signature.args = {x, w};
  a.signature.results = {{DType::F32, 2}};
  a.signature.classes = {{-1, ""}, {4, "disc.add at input.mlir:3:8"}};
  a.sharedObject = std::string(1000, 'C');
  StoredTensor t;
  t.argIndex = 1;
  t.name = "w";
  t.shape = {4};
  t.bytes = std::string(16, '\1');
  a.weights = {t};
  return a;
}

TEST(Artifact, RoundTrip) {
  Artifact a = sample();
  Artifact b = Artifact::parse(a.serialize(), "test");
  EXPECT_EQ(b.metadata, a.metadata);
  EXPECT_EQ(b.sharedObject, a.sharedObject);
  ASSERT_EQ(b.signature.args.size(), 2u);
  EXPECT_EQ(b.signature.args[0].name, "x");
  EXPECT_EQ(b.signature.args[0].dims, (std::vector<int64_t>{-1, 4}));
  EXPECT_EQ(b.signature.args[0].maxSize, (std::vector<int64_t>{64, -1}));
  EXPECT_EQ(b.signature.classes[1].reason, "disc.add at input.mlir:3:8");
  ASSERT_EQ(b.weights.size(), 1u);
  EXPECT_EQ(b.weights[0].bytes, std::string(16, '\1'));
}

TEST(Artifact, ResultsWrittenIntoArgumentsRoundTrip) {
  Artifact a = sample();
  a.signature.results = {{DType::F32, 2}, {DType::F32, 1}};
  a.signature.results[0].intoArg = 0;
  Artifact b = Artifact::parse(a.serialize(), "test");
  ASSERT_EQ(b.signature.results.size(), 2u);
  EXPECT_EQ(b.signature.results[0].intoArg, 0);
  EXPECT_EQ(b.signature.results[1].intoArg, -1);
  // Into a missing argument, one of another rank, or two results into one
  // argument: rejected.
  for (auto bad : {std::vector<int64_t>{5, -1}, std::vector<int64_t>{1, -1},
                   std::vector<int64_t>{0, 0}}) {
    Artifact c = sample();
    c.signature.results = {{DType::F32, 2}, {DType::F32, 2}};
    c.signature.results[0].intoArg = bad[0];
    c.signature.results[1].intoArg = bad[1];
    EXPECT_THROW(Artifact::parse(c.serialize(), "bad"), ArtifactError);
  }
}

TEST(Artifact, EveryPrefixIsRejected) {
  std::string bytes = sample().serialize();
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_THROW(Artifact::parse(bytes.substr(0, n), "prefix"), ArtifactError)
        << "prefix of " << n << " bytes";
}

TEST(Artifact, EveryFlippedByteOutsidePaddingIsRejected) {
  std::string bytes = sample().serialize();
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string copy = bytes;
    copy[i] ^= 0x20;
    try {
      Artifact::parse(copy, "flipped");
      EXPECT_EQ(bytes[i], '\0') << "byte " << i << " changed unnoticed";
    } catch (const ArtifactError &) {
    }
  }
}

TEST(Artifact, InconsistentWeightsAreRejected) {
  Artifact a = sample();
  a.weights[0].bytes.resize(12); // 3 floats for a [4] tensor
  EXPECT_THROW(Artifact::parse(a.serialize(), "t"), ArtifactError);
  a = sample();
  a.weights[0].argIndex = 7;
  EXPECT_THROW(Artifact::parse(a.serialize(), "t"), ArtifactError);
  a = sample();
  a.weights.push_back(a.weights[0]); // bound twice
  EXPECT_THROW(Artifact::parse(a.serialize(), "t"), ArtifactError);
  a = sample();
  a.signature.args[0].dimClass[0] = 5; // no such class
  EXPECT_THROW(Artifact::parse(a.serialize(), "t"), ArtifactError);
}

TEST(Artifact, LoadRejectsWhatCannotRunHere) {
  Artifact a = sample();
  a.metadata["cpu.features"] = "avx2,no-such-feature";
  try {
    Program::load(a, defaultContext());
    FAIL() << "loaded an artifact needing a missing feature";
  } catch (const ArtifactError &e) {
    EXPECT_NE(std::string(e.what()).find("no-such-feature"), std::string::npos);
  }
  a = sample();
  a.metadata["target"] = "tpu";
  EXPECT_THROW(Program::load(a, defaultContext()), ArtifactError);
  a = sample(); // the code is not a shared object
  try {
    Program::load(a, defaultContext());
    FAIL() << "loaded garbage code";
  } catch (const ArtifactError &e) {
    EXPECT_NE(std::string(e.what()).find("cannot load"), std::string::npos);
  }
}

TEST(CApi, ErrorsAreReturnedWithMessages) {
  disc_artifact *artifact = reinterpret_cast<disc_artifact *>(1);
  EXPECT_NE(disc_artifact_load("/nonexistent/model.disc", &artifact), 0);
  EXPECT_EQ(artifact, nullptr);
  EXPECT_NE(std::string(disc_last_error()).find("cannot open"),
            std::string::npos);
  EXPECT_NE(disc_artifact_load(nullptr, &artifact), 0);
  std::string path = ::testing::TempDir() + "/disc-capi-test.disc";
  {
    std::ofstream out(path, std::ios::binary);
    std::string bytes = sample().serialize();
    out.write(bytes.data(), (std::streamsize)bytes.size() / 2);
  }
  EXPECT_NE(disc_artifact_load(path.c_str(), &artifact), 0);
  EXPECT_NE(std::string(disc_last_error()).find("truncated"), std::string::npos);
  std::remove(path.c_str());
  EXPECT_EQ(disc_artifact_num_inputs(nullptr), -1);
  EXPECT_EQ(disc_artifact_input_name(nullptr, 0), nullptr);
  EXPECT_NE(disc_artifact_run(nullptr, nullptr, 0, nullptr, 0), 0);
}

} // namespace
