//===- CApi.cpp - the standalone runtime's C API (disc_runtime.h) ---------===//
//
// A thin layer over Artifact/Program: DLPack in and out, C++ exceptions
// turned into return codes and a per-thread error message.
//
//===----------------------------------------------------------------------===//
#include "disc/disc_runtime.h"

#include "disc/Runtime/Artifact.h"

#include <cstring>
#include <string>

using namespace disc::ral;

struct disc_artifact {
  std::shared_ptr<Program> program;
};

namespace {

thread_local std::string lastError;

int fail(const std::string &message) {
  lastError = message;
  return 1;
}

template <typename F> int guarded(F &&body) {
  try {
    body();
    lastError.clear();
    return 0;
  } catch (const std::exception &e) {
    return fail(e.what());
  } catch (...) {
    return fail("unknown error");
  }
}

bool toDType(DLDataType t, DType &out) {
  return dtypeFromDLPack(t.code, t.bits, t.lanes, out);
}

DLDataType fromDType(DType t) {
  DLDataType d{0, 0, 1};
  dtypeToDLPack(t, d.code, d.bits);
  return d;
}

/// An output handed to C: owns the runtime's buffer and the shape array.
struct ManagedOutput {
  DLManagedTensor managed;
  std::shared_ptr<void> owner;
  std::vector<int64_t> shape;
};

void deleteOutput(DLManagedTensor *self) {
  delete static_cast<ManagedOutput *>(self->manager_ctx);
}

const ArgSpec *inputSpec(const disc_artifact *a, int64_t i) {
  if (!a || i < 0)
    return nullptr;
  const Signature &sig = a->program->callerSignature();
  if (i >= static_cast<int64_t>(sig.args.size()))
    return nullptr;
  return &sig.args[static_cast<size_t>(i)];
}

} // namespace

extern "C" {

const char *disc_last_error(void) { return lastError.c_str(); }

int disc_artifact_load(const char *path, disc_artifact **artifact) {
  if (!path || !artifact)
    return fail("disc_artifact_load: null argument");
  *artifact = nullptr;
  return guarded([&] {
    auto program = Program::load(Artifact::readFile(path), defaultContext());
    if (program->device() != Device::Cpu)
      throw ArtifactError(std::string(path) +
                          ": a cuda artifact; the C API runs cpu artifacts");
    *artifact = new disc_artifact{std::move(program)};
  });
}

void disc_artifact_free(disc_artifact *artifact) { delete artifact; }

int64_t disc_artifact_num_inputs(const disc_artifact *artifact) {
  return artifact ? static_cast<int64_t>(
                        artifact->program->callerSignature().args.size())
                  : -1;
}

int64_t disc_artifact_num_outputs(const disc_artifact *artifact) {
  return artifact ? static_cast<int64_t>(
                        artifact->program->callerSignature().results.size())
                  : -1;
}

const char *disc_artifact_input_name(const disc_artifact *artifact,
                                     int64_t i) {
  const ArgSpec *spec = inputSpec(artifact, i);
  return spec ? spec->name.c_str() : nullptr;
}

int disc_artifact_input_dtype(const disc_artifact *artifact, int64_t i,
                              DLDataType *dtype) {
  const ArgSpec *spec = inputSpec(artifact, i);
  if (!spec || !dtype)
    return fail("disc_artifact_input_dtype: no input " + std::to_string(i));
  *dtype = fromDType(spec->dtype);
  return 0;
}

int64_t disc_artifact_input_rank(const disc_artifact *artifact, int64_t i) {
  const ArgSpec *spec = inputSpec(artifact, i);
  return spec ? static_cast<int64_t>(spec->dims.size()) : -1;
}

int disc_artifact_input_dims(const disc_artifact *artifact, int64_t i,
                             int64_t *dims) {
  const ArgSpec *spec = inputSpec(artifact, i);
  if (!spec || !dims)
    return fail("disc_artifact_input_dims: no input " + std::to_string(i));
  std::copy(spec->dims.begin(), spec->dims.end(), dims);
  return 0;
}

const char *disc_artifact_metadata(const disc_artifact *artifact,
                                   const char *key) {
  if (!artifact || !key)
    return nullptr;
  const auto &meta = artifact->program->artifact().metadata;
  auto it = meta.find(key);
  return it == meta.end() ? nullptr : it->second.c_str();
}

int disc_artifact_run(disc_artifact *artifact, const DLTensor *inputs,
                      int64_t num_inputs, DLManagedTensor **outputs,
                      int64_t num_outputs) {
  if (!artifact || (num_inputs > 0 && !inputs) ||
      (num_outputs > 0 && !outputs))
    return fail("disc_artifact_run: null argument");
  const Signature &sig = artifact->program->callerSignature();
  if (num_outputs != static_cast<int64_t>(sig.results.size()))
    return fail("disc_artifact_run: the artifact has " +
                std::to_string(sig.results.size()) + " outputs, " +
                std::to_string(num_outputs) + " requested");
  std::vector<TensorView> views;
  for (int64_t i = 0; i < num_inputs; ++i) {
    const DLTensor &t = inputs[i];
    std::string label = "input " + std::to_string(i);
    if (const ArgSpec *spec = inputSpec(artifact, i))
      label += " (" + spec->name + ")";
    if (t.device.device_type != kDLCPU)
      return fail(label + " is not a CPU tensor");
    TensorView view;
    if (!toDType(t.dtype, view.dtype))
      return fail(label + " has a dtype DISC does not support (DLPack code " +
                  std::to_string(t.dtype.code) + ", " +
                  std::to_string(t.dtype.bits) + " bits)");
    if (t.ndim < 0 || (t.ndim > 0 && !t.shape))
      return fail(label + " has no shape");
    view.shape.assign(t.shape, t.shape + t.ndim);
    if (t.strides) {
      int64_t expected = 1;
      for (int32_t d = t.ndim; d-- > 0;) {
        if (t.shape[d] != 1 && t.strides[d] != expected)
          return fail(label + " is not contiguous");
        expected *= t.shape[d];
      }
    }
    view.data = static_cast<char *>(t.data) + t.byte_offset;
    views.push_back(std::move(view));
  }
  return guarded([&] {
    std::vector<OutputTensor> results = artifact->program->run(views);
    for (size_t r = 0; r < results.size(); ++r) {
      auto *out = new ManagedOutput();
      out->owner = std::move(results[r].owner);
      out->shape = results[r].shape;
      DLTensor &dl = out->managed.dl_tensor;
      dl.data = results[r].data;
      dl.device = {kDLCPU, 0};
      dl.ndim = static_cast<int32_t>(out->shape.size());
      dl.dtype = fromDType(results[r].dtype);
      dl.shape = out->shape.data();
      dl.strides = nullptr;
      dl.byte_offset = 0;
      out->managed.manager_ctx = out;
      out->managed.deleter = &deleteOutput;
      outputs[r] = &out->managed;
    }
  });
}

} // extern "C"
