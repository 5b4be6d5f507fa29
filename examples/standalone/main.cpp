//===- main.cpp - run an exported model from C++, no Python ---------------===//
//
//   disc-standalone-example resnet.disc
//
// Loads the artifact written by export_model.py with the standalone runtime
// (disc_runtime.hpp; links libdisc_runtime.so only) and runs it at batch 1,
// 3 and 8: one artifact, every shape. Element i of the input is sin(i) / 2,
// so the sums it prints can be checked against export_model.py's.
//
//===----------------------------------------------------------------------===//
#include "disc/disc_runtime.hpp"

#include <cmath>
#include <cstdio>
#include <vector>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s ARTIFACT\n", argv[0]);
    return 2;
  }
  try {
    disc::Artifact model(argv[1]);
    std::printf("loaded %s: %lld input(s), %lld output(s)\n", argv[1],
                (long long)model.numInputs(), (long long)model.numOutputs());
    for (int64_t batch : {1, 3, 8}) {
      std::vector<float> input(batch * 3 * 32 * 32);
      for (size_t i = 0; i < input.size(); ++i)
        input[i] = static_cast<float>(std::sin(static_cast<double>(i)) / 2);
      std::vector<disc::Tensor> outputs =
          model.run({disc::cpuTensor(input.data(), {batch, 3, 32, 32})});
      const disc::Tensor &out = outputs[0];
      double sum = 0;
      for (int64_t i = 0; i < out.numel(); ++i)
        sum += out.data<float>()[i];
      std::printf("batch %lld: output [", (long long)batch);
      std::vector<int64_t> shape = out.shape();
      for (size_t d = 0; d < shape.size(); ++d)
        std::printf("%s%lld", d ? ", " : "", (long long)shape[d]);
      std::printf("] sum %.6f\n", sum);
    }
  } catch (const disc::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
