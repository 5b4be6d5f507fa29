//===- Pipeline.h - the DISC pass pipeline ----------------------*- C++ -*-===//
#ifndef DISC_COMPILER_PIPELINE_H
#define DISC_COMPILER_PIPELINE_H

#include "mlir/IR/DialectRegistry.h"
#include <string>
#include <vector>

namespace disc {
/// Every dialect, interface model and translation the pipeline needs.
void registerAllDialects(mlir::DialectRegistry &registry);
/// DISC passes, the upstream passes, and the named pipelines
/// `disc-cpu-prepare` and `disc-cpu-lower` for disc-opt.
void registerAllPasses();

/// Pipelines are textual, anchored on builtin.module, without the anchor.
/// Stage 1 (graph level, on the `disc` dialect): pick the entry, inline,
/// simplify. The signature for call-time checks is read after it.
std::string cpuPreparePipeline();
/// Stage 2: graph-level optimisation (fusion planning goes here), library
/// calls, disc -> linalg, bufferization, loops, LLVM dialect.
/// `runtimeChecks` adds MLIR's runtime verification (every memref access,
/// subview and reshape checked against its buffer's bounds; failures raise
/// disc.InvocationError naming the op): slow, for debugging miscompiles.
std::string cpuLowerPipeline(bool runtimeChecks = false);
/// cpuLowerPipeline in two halves: to outlined loop kernels (memrefs, scf),
/// where Executable counts the kernels, and from there to the LLVM dialect.
std::string cpuLowerToKernelsPipeline(bool runtimeChecks = false,
                                      bool logFusion = false);
std::string cpuKernelsToLlvmPipeline();
/// The CPU's kernel outlining and threading (the tail of
/// cpuLowerToKernelsPipeline).
std::string cpuOutlineKernelsPipeline();

/// The CUDA target (docs/cuda.md). To loop nests as on the CPU, then every
/// nest a block/thread grid (disc-map-loops-to-gpu), gpu.launch, outlined
/// gpu.func kernels; the host code keeps shapes, allocation and launches.
std::string cudaLowerToKernelsPipeline(bool runtimeChecks = false,
                                       bool logFusion = false);
/// gpu.module -> NVVM -> a fatbin per chip of `chips` (a cubin and PTX;
/// ptxas and fatbinary from `toolkitPath`, or MLIR's default search when
/// empty); the host code -> LLVM with RAL CUDA launches and device
/// allocations. With `dumpDir`, every kernel object is written there too.
std::string cudaKernelsToLlvmPipeline(const std::string &toolkitPath,
                                      const std::string &dumpDir,
                                      const std::vector<std::string> &chips);
/// The chips a cuda compile makes cubins for: `requested` when not empty,
/// else DISC_CUDA_CHIPS (a comma list), else sm_80 and sm_90. Sorted,
/// without repeats. Throws std::invalid_argument naming the chip and where
/// it came from when one is not an Ampere, Ada or Hopper chip (sm_80,
/// sm_86, sm_87, sm_89, sm_90: PTX 8.0 covers them all).
std::vector<std::string>
cudaChips(const std::vector<std::string> &requested = {});
/// The CPU pipeline with the CUDA target's grid mapping inserted: the
/// block/thread loops run as CPU loops, to test the mapping's index
/// arithmetic without a GPU (target "cuda-emulated").
std::string cudaEmulatedLowerToKernelsPipeline(bool runtimeChecks = false,
                                               bool logFusion = false);
} // namespace disc

#endif // DISC_COMPILER_PIPELINE_H
