//===- Artifact.h - a compiled program as bytes, and loading it -*- C++ -*-===//
//
// An artifact is everything needed to run a compiled program without the
// compiler: a native shared object (host code, and CUDA kernels as constant
// images) emitted by LLVM, the call signature with its dim constraints,
// metadata (target, CPU features the code needs, compiler version, kernel
// counts) and optionally weights bound to some arguments. The compiler
// produces one per compilation; the compile cache stores them and
// `disc.export` writes them to files. The format is documented in
// docs/artifacts.md. Nothing here knows MLIR or LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_ARTIFACT_H
#define DISC_RUNTIME_ARTIFACT_H

#include "disc/Runtime/Runtime.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace disc {
namespace ral {

/// A file or byte string that is not a valid artifact (bad magic, truncated,
/// a checksum mismatch, a field out of range), or an artifact this machine
/// cannot run (missing CPU features, another target, a newer format).
class ArtifactError : public RuntimeError {
public:
  using RuntimeError::RuntimeError;
};

/// A tensor stored in the artifact and passed as argument `argIndex` on
/// every call (a weight); callers pass only the other arguments.
struct StoredTensor {
  int64_t argIndex = 0;
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::string bytes; // row-major contents
};

struct Artifact {
  /// Metadata keys the runtime reads: "format" (the writer's format
  /// version), "target" (cpu | cuda), "entry", "cpu.features" (comma list
  /// of x86 features the host code uses), "compiler.version",
  /// "kernels.loops", "kernels.library_calls", "kernels.copies",
  /// "compile.seconds". Other keys (the Python front end's input names and
  /// tree structure) are carried along untouched.
  std::map<std::string, std::string> metadata;
  Signature signature;
  std::string sharedObject;
  std::vector<StoredTensor> weights;

  std::string serialize() const;
  /// Throws ArtifactError naming `origin` (a path, or "compile cache entry
  /// ...") when the bytes are not a complete, intact artifact.
  static Artifact parse(const std::string &bytes, const std::string &origin);
  static Artifact readFile(const std::string &path);
  /// Written to a temporary file next to `path` and renamed: a reader never
  /// sees a partial file.
  void writeFile(const std::string &path) const;

  const std::string &meta(const std::string &key) const;
};

/// The CPU features this machine has, of those an artifact may require
/// (LLVM's names: "avx2", "avx512f", ...), comma-separated and sorted.
std::string hostCpuFeatures();

/// A loaded artifact, ready to run: its shared object is mapped, its entry
/// resolved, its weights in memory. Loading runs no compiler. Thread-safe to
/// call.
class Program {
public:
  /// Throws ArtifactError when the artifact cannot run here (missing CPU
  /// features, unknown target, a shared object the dynamic loader rejects).
  static std::shared_ptr<Program> load(Artifact artifact,
                                       std::shared_ptr<Context> context);
  ~Program();

  /// Runs with the arguments that are not stored weights, in order (all of
  /// them when there are none). See invoke() for errors and cuda streams,
  /// and InvokeOptions::resultsInto for `resultsInto` (indices of `inputs`;
  /// a stored weight is never written) and InvokeOptions::resultShareGroups
  /// for `shareGroups`, InvokeOptions::float32Math for `float32Math` and
  /// InvokeOptions::deviceAllocator for `deviceAllocator`.
  std::vector<OutputTensor>
  run(const std::vector<TensorView> &inputs, void *cudaStream = nullptr,
      const std::vector<int64_t> &resultsInto = {},
      const std::vector<int64_t> &shareGroups = {},
      Float32Math float32Math = {},
      std::shared_ptr<DeviceAllocator> deviceAllocator = nullptr) const;
  Device device() const;
  /// The full signature (weights included) and, separately, the arguments
  /// callers pass.
  const Signature &signature() const;
  const Signature &callerSignature() const;
  const Artifact &artifact() const;
  /// Seconds load() took.
  double loadSeconds() const;

private:
  Program();
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// The process-wide runtime context (allocator, oneDNN engine) every
/// program runs in unless given another.
std::shared_ptr<Context> defaultContext();

} // namespace ral
} // namespace disc

#endif // DISC_RUNTIME_ARTIFACT_H
