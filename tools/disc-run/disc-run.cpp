//===- disc-run.cpp - run an artifact from the command line ---------------===//
//
//   disc-run model.disc --shapes 4x16 [--inputs FILE] [--repeat 20]
//
// Loads an artifact (disc.export(...).save) with the standalone runtime,
// builds its inputs (random, or read from FILE: every input's bytes back to
// back, row-major, in input order) at the given shapes, runs it, and prints
// each output's shape, first values and sum, and the call times. Links only
// libdisc_runtime.so.
//
//===----------------------------------------------------------------------===//
#include "disc/disc_runtime.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

namespace {

void usage() {
  std::cerr << "usage: disc-run ARTIFACT [--shapes S1;S2;...] [--inputs FILE] "
               "[--repeat N] [--print N]\n"
               "  S: an input's dims joined by 'x' (4x16; '' for a scalar)\n";
}

size_t bytesOf(DLDataType t) { return (t.bits + 7) / 8; }

std::string dtypeName(DLDataType t) {
  switch (t.code) {
  case kDLFloat: return "f" + std::to_string(t.bits);
  case kDLBfloat: return "bf16";
  case kDLBool: return "bool";
  case kDLInt: return "i" + std::to_string(t.bits);
  case kDLUInt: return "u" + std::to_string(t.bits);
  }
  return "?";
}

std::vector<std::vector<int64_t>> parseShapes(const std::string &text) {
  std::vector<std::vector<int64_t>> shapes;
  std::stringstream all(text);
  std::string one;
  while (std::getline(all, one, ';')) {
    std::vector<int64_t> dims;
    std::stringstream ss(one);
    std::string dim;
    while (std::getline(ss, dim, 'x'))
      if (!dim.empty())
        dims.push_back(std::stoll(dim));
    shapes.push_back(dims);
  }
  return shapes;
}

double valueAt(const DLTensor &t, int64_t i) {
  const char *p = static_cast<const char *>(t.data) + i * bytesOf(t.dtype);
  if (t.dtype.code == kDLFloat && t.dtype.bits == 32) return *(const float *)p;
  if (t.dtype.code == kDLFloat && t.dtype.bits == 64) return *(const double *)p;
  if (t.dtype.code == kDLInt && t.dtype.bits == 64) return (double)*(const int64_t *)p;
  if (t.dtype.code == kDLInt && t.dtype.bits == 32) return *(const int32_t *)p;
  if (t.dtype.bits == 8) return *(const uint8_t *)p;
  if (t.dtype.bits == 16) { // f16/bf16: the bits as f32
    uint16_t h = *(const uint16_t *)p;
    if (t.dtype.code == kDLBfloat) {
      uint32_t w = uint32_t(h) << 16;
      float f;
      std::memcpy(&f, &w, 4);
      return f;
    }
    return std::nan(""); // f16 printing left out
  }
  return std::nan("");
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    usage();
    return 2;
  }
  std::string path = argv[1], shapesText, inputsFile;
  int repeat = 10, printCount = 8;
  bool haveShapes = false;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        usage();
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--shapes") { shapesText = value(); haveShapes = true; }
    else if (arg == "--inputs") inputsFile = value();
    else if (arg == "--repeat") repeat = std::max(1, std::stoi(value()));
    else if (arg == "--print") printCount = std::stoi(value());
    else { usage(); return 2; }
  }
  try {
    auto start = std::chrono::steady_clock::now();
    disc::Artifact artifact(path);
    double loadMs = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start).count();
    std::cout << "artifact " << path << " (model "
              << artifact.metadata("model") << ", target "
              << artifact.metadata("target") << "), loaded in " << loadMs
              << " ms\n";
    int64_t n = artifact.numInputs();
    std::vector<std::vector<int64_t>> shapes =
        haveShapes ? parseShapes(shapesText) : std::vector<std::vector<int64_t>>();
    if (haveShapes && (int64_t)shapes.size() != n)
      throw disc::Error("--shapes gives " + std::to_string(shapes.size()) +
                        " shapes for " + std::to_string(n) + " inputs");
    std::ifstream inputStream;
    if (!inputsFile.empty()) {
      inputStream.open(inputsFile, std::ios::binary);
      if (!inputStream)
        throw disc::Error("cannot open " + inputsFile);
    }
    std::mt19937 rng(0);
    std::vector<std::vector<char>> buffers(n);
    std::vector<disc::InputTensor> inputs;
    for (int64_t i = 0; i < n; ++i) {
      std::vector<int64_t> dims = artifact.inputDims(i);
      std::vector<int64_t> shape = haveShapes ? shapes[i] : dims;
      if (!haveShapes && std::count(dims.begin(), dims.end(), -1))
        throw disc::Error("input " + std::to_string(i) + " (" +
                          artifact.inputName(i) +
                          ") has dynamic dims: give --shapes");
      int64_t count = 1;
      for (int64_t s : shape)
        count *= s;
      DLDataType type{};
      type = artifact.inputType(i);
      buffers[i].resize(count * bytesOf(type));
      if (inputStream.is_open()) {
        inputStream.read(buffers[i].data(), buffers[i].size());
        if (!inputStream)
          throw disc::Error(inputsFile + " is too short for input " +
                            std::to_string(i));
      } else {
        std::uniform_real_distribution<float> uniform(-1.f, 1.f);
        for (int64_t e = 0; e < count; ++e) {
          char *p = buffers[i].data() + e * bytesOf(type);
          if (type.code == kDLFloat && type.bits == 32) *(float *)p = uniform(rng);
          else if (type.code == kDLFloat && type.bits == 64) *(double *)p = uniform(rng);
          else if (type.code == kDLInt && type.bits == 64) *(int64_t *)p = rng() % 10;
          else if (type.code == kDLInt && type.bits == 32) *(int32_t *)p = rng() % 10;
          else if (type.bits == 8) *(uint8_t *)p = rng() % 2;
          else std::memset(p, 0, bytesOf(type));
        }
      }
      disc::InputTensor input;
      input.shape = shape;
      input.tensor.data = buffers[i].data();
      input.tensor.device = {kDLCPU, 0};
      input.tensor.ndim = (int32_t)shape.size();
      input.tensor.dtype = type;
      inputs.push_back(input);
      std::cout << "input " << i << " " << artifact.inputName(i) << ": "
                << dtypeName(type) << "[";
      for (size_t d = 0; d < shape.size(); ++d)
        std::cout << (d ? ", " : "") << shape[d];
      std::cout << "]\n";
    }
    std::vector<double> times;
    std::vector<disc::Tensor> outputs;
    for (int r = 0; r < repeat; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      outputs = artifact.run(inputs);
      times.push_back(std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - t0).count());
    }
    for (size_t o = 0; o < outputs.size(); ++o) {
      const DLTensor &t = outputs[o].dl();
      std::cout << "output " << o << ": " << dtypeName(t.dtype) << "[";
      for (int32_t d = 0; d < t.ndim; ++d)
        std::cout << (d ? ", " : "") << t.shape[d];
      std::cout << "] values";
      double sum = 0;
      for (int64_t e = 0; e < outputs[o].numel(); ++e) {
        double v = valueAt(t, e);
        sum += v;
        if (e < printCount)
          std::cout << " " << v;
      }
      std::cout << (outputs[o].numel() > printCount ? " ..." : "")
                << " sum " << sum << "\n";
    }
    double first = times.front();
    std::sort(times.begin(), times.end());
    std::cout << "time: first call " << first << " ms, median "
              << times[times.size() / 2] << " ms over " << repeat
              << " calls\n";
  } catch (const std::exception &e) {
    std::cerr << "disc-run: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
