//===- Executable.h - a compiled DISC program -------------------*- C++ -*-===//
//
// No MLIR types in this header: the Python binding and tools include it.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_COMPILER_EXECUTABLE_H
#define DISC_COMPILER_EXECUTABLE_H

#include "disc/Runtime/Artifact.h"
#include "disc/Runtime/Runtime.h"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace disc {

/// Malformed or unverifiable IR, or IR the pipeline cannot lower. The message
/// carries MLIR's diagnostics with line:column.
class CompileError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct CompileOptions {
  /// When non-empty: write 000-input.mlir, the module after each pass
  /// (NNN-<stage>-<pass>.mlir, numbered in execution order) and
  /// 999-llvm.mlir (the LLVM dialect handed to the JIT) into this directory.
  std::string dumpDir;
  /// Print the wall time of each compile phase to stderr.
  bool logTiming = false;
  /// Print the fusion decisions (stitch kernels and what they contain).
  bool logFusion = false;
  /// Name used for the input buffer in diagnostics.
  std::string sourceName = "input.mlir";
  /// "cpu" (the host), "cuda" (NVIDIA GPUs: kernels for sm_80 and sm_90
  /// plus PTX, host code on the CPU; docs/cuda.md) or "cuda-emulated" (the
  /// CPU pipeline with the cuda target's block/thread mapping: runs on the
  /// CPU, for testing the mapping without a GPU).
  std::string target = "cpu";
  /// The chips the cuda target makes cubins for (disc::cudaChips): empty
  /// for DISC_CUDA_CHIPS, else sm_80 and sm_90.
  std::vector<std::string> cudaChips;
};

/// What the compiled program runs per call, counted after kernel outlining:
/// generated loop kernels (one per loop nest left after fusion: in kernel
/// functions and in the entry), library calls (oneDNN matmul/convolution,
/// the runtime's attention)
/// and whole-buffer copies (memref.copy from bufferization).
struct KernelCounts {
  int64_t loopKernels = 0;
  int64_t libraryCalls = 0;
  int64_t copies = 0;
  int64_t total() const { return loopKernels + libraryCalls + copies; }
};

class Executable {
public:
  /// Compiles the public function of `mlirText` (the one named `main` if
  /// there are several) to an artifact: a native shared object and its
  /// signature (Artifact.h), not loaded. Throws CompileError.
  static ral::Artifact compileArtifact(const std::string &mlirText,
                                       const CompileOptions &options = {});
  /// compileArtifact, then load.
  static std::unique_ptr<Executable> compile(const std::string &mlirText,
                                             const CompileOptions &options = {});
  /// Loads an artifact (no compiler runs). Throws ral::ArtifactError.
  static std::unique_ptr<Executable> load(ral::Artifact artifact);
  ~Executable();

  /// Runs the program. Throws ral::InvocationError for bad inputs. A cuda
  /// executable takes device pointers of the current CUDA context and
  /// queues its work on `cudaStream` (a CUstream; null: the default stream)
  /// without synchronising; `float32Math` says whether its f32 matmuls
  /// and convolutions may use TF32 (ral::Float32Math); its device memory
  /// comes from `deviceAllocator` (null: the device's stream-ordered pool).
  std::vector<ral::OutputTensor>
  run(const std::vector<ral::TensorView> &inputs, void *cudaStream = nullptr,
      ral::Float32Math float32Math = {},
      std::shared_ptr<ral::DeviceAllocator> deviceAllocator = nullptr);
  /// Where inputs and outputs live: Cpu, or Cuda for target "cuda".
  ral::Device device() const;

  /// What callers pass (the arguments that are not stored weights).
  const ral::Signature &signature() const;
  const ral::Program &program() const;
  const std::string &entryName() const;
  /// Seconds spent in compile().
  double compileSeconds() const;
  const KernelCounts &kernelCounts() const;

private:
  Executable();
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// The CUDA toolkit the cuda target takes ptxas, fatbinary and libdevice
/// from: $DISC_CUDA_TOOLKIT, else $CUDA_HOME, $CUDA_PATH, /usr/local/cuda,
/// the first that has bin/ptxas; empty when none has.
std::string cudaToolkitPath();

/// Number of successful MLIR compilations in this process.
int64_t compilationCount();

/// The allocator of the runtime context every Executable runs in: bytes in
/// use, peak, cached, allocation counts.
ral::Allocator &defaultAllocator();

} // namespace disc

#endif // DISC_COMPILER_EXECUTABLE_H
