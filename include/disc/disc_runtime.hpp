//===- disc_runtime.hpp - the standalone DISC runtime: C++ API --*- C++ -*-===//
//
// A header-only wrapper of disc_runtime.h: RAII for artifacts and outputs,
// errors as disc::Error exceptions.
//
//   disc::Artifact model("model.disc");
//   std::vector<float> x(4 * 16);
//   disc::Tensor out = model.run({disc::cpuTensor(x.data(), {4, 16})})[0];
//   const float *y = out.data<float>();      // out.shape() == {4, 8}
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_HPP
#define DISC_RUNTIME_HPP

#include "disc/disc_runtime.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace disc {

class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// An input: a view of caller-owned, row-major memory.
struct InputTensor {
  DLTensor tensor{};
  std::vector<int64_t> shape;
};

template <typename T> DLDataType dlpackTypeOf();
template <> inline DLDataType dlpackTypeOf<float>() { return {kDLFloat, 32, 1}; }
template <> inline DLDataType dlpackTypeOf<double>() { return {kDLFloat, 64, 1}; }
template <> inline DLDataType dlpackTypeOf<int64_t>() { return {kDLInt, 64, 1}; }
template <> inline DLDataType dlpackTypeOf<int32_t>() { return {kDLInt, 32, 1}; }

template <typename T>
InputTensor cpuTensor(T *data, std::vector<int64_t> shape) {
  InputTensor input;
  input.shape = std::move(shape);
  input.tensor.data = data;
  input.tensor.device = {kDLCPU, 0};
  input.tensor.ndim = static_cast<int32_t>(input.shape.size());
  input.tensor.dtype = dlpackTypeOf<T>();
  return input;
}

/// An output: owns its memory (released with the last copy of the Tensor).
class Tensor {
public:
  explicit Tensor(DLManagedTensor *managed)
      : managed(managed, [](DLManagedTensor *m) {
          if (m && m->deleter)
            m->deleter(m);
        }) {}
  const DLTensor &dl() const { return managed->dl_tensor; }
  std::vector<int64_t> shape() const {
    return {dl().shape, dl().shape + dl().ndim};
  }
  int64_t numel() const {
    int64_t n = 1;
    for (int32_t d = 0; d < dl().ndim; ++d)
      n *= dl().shape[d];
    return n;
  }
  template <typename T> const T *data() const {
    return static_cast<const T *>(dl().data);
  }

private:
  std::shared_ptr<DLManagedTensor> managed;
};

class Artifact {
public:
  explicit Artifact(const std::string &path) {
    disc_artifact *raw = nullptr;
    if (disc_artifact_load(path.c_str(), &raw) != 0)
      throw Error(disc_last_error());
    handle.reset(raw);
  }
  int64_t numInputs() const { return disc_artifact_num_inputs(handle.get()); }
  int64_t numOutputs() const { return disc_artifact_num_outputs(handle.get()); }
  std::string inputName(int64_t i) const {
    const char *name = disc_artifact_input_name(handle.get(), i);
    return name ? name : "";
  }
  /// Input i's dims, -1 where dynamic.
  std::vector<int64_t> inputDims(int64_t i) const {
    std::vector<int64_t> dims(
        static_cast<size_t>(disc_artifact_input_rank(handle.get(), i)));
    if (disc_artifact_input_dims(handle.get(), i, dims.data()) != 0)
      throw Error(disc_last_error());
    return dims;
  }
  DLDataType inputType(int64_t i) const {
    DLDataType type{};
    if (disc_artifact_input_dtype(handle.get(), i, &type) != 0)
      throw Error(disc_last_error());
    return type;
  }
  std::string metadata(const std::string &key) const {
    const char *value = disc_artifact_metadata(handle.get(), key.c_str());
    return value ? value : "";
  }
  std::vector<Tensor> run(std::vector<InputTensor> inputs) const {
    std::vector<DLTensor> tensors;
    for (InputTensor &input : inputs) {
      input.tensor.shape = input.shape.data();
      tensors.push_back(input.tensor);
    }
    std::vector<DLManagedTensor *> raw(static_cast<size_t>(numOutputs()));
    if (disc_artifact_run(handle.get(), tensors.data(),
                          static_cast<int64_t>(tensors.size()), raw.data(),
                          static_cast<int64_t>(raw.size())) != 0)
      throw Error(disc_last_error());
    std::vector<Tensor> outputs;
    for (DLManagedTensor *m : raw)
      outputs.emplace_back(m);
    return outputs;
  }

private:
  struct Free {
    void operator()(disc_artifact *a) const { disc_artifact_free(a); }
  };
  std::unique_ptr<disc_artifact, Free> handle;
};

} // namespace disc

#endif // DISC_RUNTIME_HPP
