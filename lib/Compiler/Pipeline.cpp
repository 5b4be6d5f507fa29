//===- Pipeline.cpp - the DISC pass pipeline ------------------------------===//
#include "disc/Compiler/Pipeline.h"

#include "disc/Conversion/Cuda/Passes.h"
#include "disc/Conversion/Passes.h"
#include "disc/Dialect/Disc/DiscDialect.h"
#include "disc/Transforms/Passes.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

using namespace mlir;

void disc::registerAllDialects(DialectRegistry &registry) {
  registry.insert<disc::DiscDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  // The CUDA target: gpu.module -> NVVM -> PTX/cubin.
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
}

std::string disc::cpuPreparePipeline() {
  return "disc-verify-compilable,disc-select-entry,inline,symbol-dce,"
         "canonicalize,cse";
}

std::string disc::cpuLowerPipeline(bool runtimeChecks) {
  return cpuLowerToKernelsPipeline(runtimeChecks, false) + "," +
         cpuKernelsToLlvmPipeline();
}

/// The disc-fuse-library-epilogues step of the pipeline, from
/// DISC_LIBRARY_EPILOGUES: unset or "1" (the default) fuses the profitable
/// chains, "all" every chain, "0" none (docs/architecture.md, "Library
/// epilogues"). Any other value is an error, so a typo does not silently
/// measure the wrong variant. `cublaslt` (target cuda): only cuBLASLt's bias
/// epilogue, every one of them ("all" is "1" there).
static std::string libraryEpiloguesStep(bool logFusion, bool cublaslt) {
  const char *env = std::getenv("DISC_LIBRARY_EPILOGUES");
  const std::string mode = env && *env ? env : "1";
  if (mode == "0")
    return "";
  if (mode != "1" && mode != "all")
    throw std::invalid_argument("DISC_LIBRARY_EPILOGUES must be 0, 1 or "
                                "all, got '" +
                                mode + "'");
  std::string options;
  if (logFusion)
    options += "log=1";
  if (cublaslt)
    options += std::string(options.empty() ? "" : " ") + "cublaslt=1";
  else if (mode == "all")
    options += std::string(options.empty() ? "" : " ") + "all=1";
  return "func.func(disc-fuse-library-epilogues" +
         (options.empty() ? "" : "{" + options + "}") + "),canonicalize,cse,";
}

/// The integer value of environment variable `name` (`fallback` when unset
/// or empty), as a string for a pass option; anything but an integer from
/// `min` to `max` is an error naming the variable.
static std::string integerSetting(const char *name, long long fallback,
                                  long long min, long long max) {
  const char *env = std::getenv(name);
  std::string value = env && *env ? env : std::to_string(fallback);
  bool ok = value.find_first_not_of("0123456789") == std::string::npos &&
            value.size() <= std::to_string(max).size() &&
            std::stoll(value) >= min && std::stoll(value) <= max;
  if (!ok)
    throw std::invalid_argument(std::string(name) +
                                " must be an integer from " +
                                std::to_string(min) + " to " +
                                std::to_string(max) + ", got '" + value + "'");
  return value;
}

/// Values the host computes, stored in one-element buffers, forwarded to
/// their loads before the loop mapping (each host-level access of device
/// memory would be a one-thread kernel). DISC_CUDA_FORWARD_SCALARS=0 leaves
/// them (to compare, or to rule the pass out when debugging).
static std::string forwardHostScalarsStep() {
  return integerSetting("DISC_CUDA_FORWARD_SCALARS", 1, 0, 1) == "1"
             ? "func.func(disc-forward-host-scalars),"
             : "";
}

/// Row temporaries (a stitch row that its reduction and a later stage
/// both read) become slices of one buffer allocated before their loop
/// nest: a GPU kernel cannot allocate.
static std::string hoistLoopTemporariesStep() {
  return "func.func(disc-hoist-loop-temporaries),";
}

/// A host-level scf.if chosen by device data writes the buffers it would
/// yield (the host cannot pick a buffer by a value on the device).
static std::string ifResultsToBuffersStep() {
  return "func.func(disc-if-results-to-buffers),";
}

/// Repeated blocks outline the same kernel many times: compiled once
/// (DISC_CUDA_DEDUP_KERNELS=0 compiles every copy, to compare).
static std::string dedupKernelsStep(bool logFusion) {
  if (integerSetting("DISC_CUDA_DEDUP_KERNELS", 1, 0, 1) != "1")
    return "";
  return std::string("disc-deduplicate-gpu-kernels") +
         (logFusion ? "{log=1}," : ",");
}

/// DISC_CUDA_ROW_VARIANT: unset or "auto" (the default) lets each call of a
/// row kernel pick one row per thread, warp or block from the row length
/// and count; "thread", "warp" or "block" forces one (tests, benchmarks).
/// DISC_CUDA_VECTORIZE=0 leaves elementwise grids without their vector
/// variant, DISC_CUDA_LINEAR_LANES=0 that variant without linear lanes
/// (rows of four only), DISC_CUDA_ROW_VECTORS=0 row kernels without their vector
/// path. DISC_CUDA_ROW_CACHE_BYTES bounds row kernels' shared-memory row
/// caches. DISC_CUDA_ROW_UNROLL sets the block-per-row unroll factor.
/// DISC_CUDA_REDUCTION_SLOTS bounds the slots of whole-range reductions.
/// DISC_CUDA_COLUMN_THREADS sets when column reductions split their rows.
static std::string mapLoopsToGpuStep(bool logFusion) {
  const char *env = std::getenv("DISC_CUDA_ROW_VARIANT");
  std::string variant = env && *env ? env : "auto";
  if (variant != "auto" && variant != "thread" && variant != "warp" &&
      variant != "block")
    throw std::invalid_argument("DISC_CUDA_ROW_VARIANT must be auto, "
                                "thread, warp or block, got '" +
                                variant + "'");
  // DISC_CUDA_VECTORIZE=0: elementwise grids without their vector variant
  // (to compare, or to rule it out when debugging).
  const char *vectorize = std::getenv("DISC_CUDA_VECTORIZE");
  bool vectorGrids = !(vectorize && std::string(vectorize) == "0");
  // DISC_CUDA_LINEAR_LANES=0: the vector variant's lanes stay in one row.
  std::string linearLanes =
      integerSetting("DISC_CUDA_LINEAR_LANES", 1, 0, 1);
  // DISC_CUDA_ROW_UNROLL: the block-per-row variant's per-thread unroll
  // factor (default 4; 1 leaves the loops rolled).
  std::string unroll = integerSetting("DISC_CUDA_ROW_UNROLL", 4, 1, 16);
  // DISC_CUDA_REDUCTION_SLOTS: the most parts a whole-range reduction is
  // cut into (default 4096; 0: every thread's atomic on the result).
  std::string slots =
      integerSetting("DISC_CUDA_REDUCTION_SLOTS", 4096, 0, 65536);
  // DISC_CUDA_COLUMN_THREADS: column reductions with fewer columns split
  // their rows for about this many threads (default 65536; 0: never).
  std::string columns =
      integerSetting("DISC_CUDA_COLUMN_THREADS", 65536, 0, 1ll << 24);
  // DISC_CUDA_INDEX32_LIMIT: elementwise grids take their 32-bit index
  // variant when every thread's linear index is at most this (default
  // 2^31 - 1; 0: never; a small value makes tests take both).
  std::string index32 = integerSetting("DISC_CUDA_INDEX32_LIMIT",
                                       2147483647, 0, 2147483647);
  // DISC_CUDA_ROW_VECTORS=0: row kernels without their vector path.
  std::string rowVectors = integerSetting("DISC_CUDA_ROW_VECTORS", 1, 0, 1);
  // DISC_CUDA_ROW_CACHE_BYTES: the shared memory a block's row caches may
  // take (default 40960; 0: row kernels re-read their rows).
  std::string rowCache =
      integerSetting("DISC_CUDA_ROW_CACHE_BYTES", 40960, 0, 45056);
  return "disc-map-loops-to-gpu{row-variant=" + variant +
         " row-unroll=" + unroll +
         " vectorize=" + (vectorGrids ? "true" : "false") +
         " linear-lanes=" + (linearLanes == "1" ? "true" : "false") +
         " reduction-slots=" + slots + " column-threads=" + columns +
         " index32-limit=" + index32 +
         " row-vectors=" + (rowVectors == "1" ? "true" : "false") +
         " row-cache-bytes=" + rowCache +
         (logFusion ? " log=1" : "") + "}";
}

/// DISC_PROFILE: unset or "0" compiles without profiling hooks, "1" times
/// every kernel, library call and copy (disc-profile-calls; the table is in
/// disc.profile()). Any other value is an error.
static std::string profileStep() {
  const char *env = std::getenv("DISC_PROFILE");
  const std::string mode = env ? env : "";
  if (mode.empty() || mode == "0")
    return "";
  if (mode != "1")
    throw std::invalid_argument("DISC_PROFILE must be 0 or 1, got '" + mode +
                                "'");
  return ",disc-profile-calls";
}

/// DISC_CUDA_DEPTHWISE: unset or "generated" (the default) compiles float
/// depthwise convolutions of the cuda targets as loop nests (generated
/// kernels, fused with their neighbours); "cudnn" leaves them library calls
/// (to compare the two on a GPU).
static std::string integerContractionsStep(bool gpu) {
  bool generated = false;
  if (gpu) { // a setting of the cuda targets only
    const char *env = std::getenv("DISC_CUDA_DEPTHWISE");
    const std::string mode = env && *env ? env : "generated";
    if (mode != "generated" && mode != "cudnn")
      throw std::invalid_argument(
          "DISC_CUDA_DEPTHWISE must be generated or cudnn, got '" + mode +
          "'");
    generated = mode == "generated";
  }
  return std::string("func.func(disc-lower-integer-contractions") +
         (generated ? "{float-depthwise=1}" : "") + "),";
}

/// Stages 1-6 shared by every target: graph-level rewrites, disc -> linalg,
/// fusion, library calls, bufferization, loop nests. `target` is "cpu",
/// "cuda-emulated" or "cuda": only the CPU has per-thread scratch buffers
/// (a GPU kernel's row temporaries take slices of a buffer the host
/// allocates: disc-hoist-loop-temporaries, after these stages); library calls
/// run on the GPU for cuda (cuBLASLt's bias epilogue only), on the CPU
/// otherwise.
static std::string lowerToLoopsPipeline(bool runtimeChecks, bool logFusion,
                                        const std::string &target) {

  // The stages of DESIGN.md, in order. Stage 4 (fusion planning) is empty in
  // this version: each memory-bound op becomes its own loop nest, which LLVM
  // then optimises; the fusion passes slot in right after the shape
  // simplification below, before library-call lowering.
  // The cuda targets recompute expensive broadcast producers per element
  // (a launch costs more than the arithmetic there).
  const bool gpu = target == "cuda" || target == "cuda-emulated";
  std::string fuseOptions;
  if (logFusion)
    fuseOptions += "log=1";
  if (gpu)
    fuseOptions += std::string(fuseOptions.empty() ? "" : " ") +
                   "recompute-broadcasts=1";
  const std::string log = logFusion ? "{log=1}" : "";
  const std::string fuse =
      fuseOptions.empty() ? "" : "{" + fuseOptions + "}";
  // CPU: a scatter's leading unindexed window dims (the N, C of upsampling's
  // backward into [N, C, H, W]) run on threads, one slice each; the GPU
  // turns the batch loop into a grid with atomics instead.
  const std::string legalize =
      gpu ? "disc-legalize-to-linalg,"
          : "disc-legalize-to-linalg{scatter-window-threads=1},";
  return // 1-2. graph level simplification (shape optimisation grows here).
         // The cuda targets have no attention library call: two batched
         // products around a softmax instead.
         std::string(gpu ? "func.func(disc-decompose-attention)," : "") +
         // A transpose moved after a collapsing reshape folds into the
         // dot_general it feeds (attention's q @ k^T).
         "func.func(disc-transpose-after-collapse),canonicalize,cse,"
         // A scatter of rows addressed by an expanded index reads the row
         // index once per row instead of a coordinate tensor per element.
         "func.func(disc-scatter-window-indices),canonicalize,cse," +
         // Library ops with epilogues (DISC_LIBRARY_EPILOGUES, default 1:
         // the profitable chains): a convolution's bias and activation run
         // inside its call; on cuda, a matmul's bias inside cuBLASLt's.
         // On the GPU targets float depthwise convolutions become loop nests
         // first (no library epilogue then, on cuda-emulated either).
         (gpu ? integerContractionsStep(true) : std::string()) +
         libraryEpiloguesStep(logFusion, target == "cuda") +
         // 3. placement: host shape code and device work share the CPU
         "disc-add-ral-context,disc-read-only-inputs," +
         // 4. (fusion planning)
         // 5. codegen of memory-bound ops
         // Loop and input fusion: upstream elementwise fusion (producers
         // into consumers, reductions included); unit dims (the [M, 1] of a
         // kept-dim reduction) are dropped so reshapes do not separate ops.
         // Sizes computed at run time are checked before any allocation.
         // Ops iterating over a static zero-size dim fold to their inits.
         // Integer matmuls and convolutions (no library) become loop nests.
         (gpu ? std::string() : integerContractionsStep(false)) + legalize +
         "func.func(disc-check-buffer-sizes,disc-fold-empty-loops),"
         "linalg-generalize-named-ops,canonicalize,cse,"
         "disc-fuse-elementwise" + fuse + ","
         "linalg-fold-unit-extent-dims,canonicalize,cse,"
         // Stitch fusion: row reductions with their elementwise stages in
         // one loop over rows; elementwise fusion then merges the per-row
         // stages into their users.
         // Now also multi-result: a producer whose other uses all follow
         // a consumer is computed in that consumer's loop.
         "func.func(disc-stitch-fusion" + log +
         "),disc-fuse-elementwise{multi-result=1" +
         (fuseOptions.empty() ? std::string() : " " + fuseOptions) +
         "},canonicalize,cse," +
         // Library calls last before bufferization, and nothing that moves,
         // merges or folds ops in between: a call reads its operands through
         // `bufferization.to_buffer` right before it, which is where one-shot
         // bufferization sees the read. CSE would merge two to_buffer of one
         // tensor and hide the second call's read, so bufferization could
         // reuse the buffer in place before that call ran. The second
         // legalize converts the transposes/reshapes the calls introduce.
         // On cuda, f16/bf16 matmuls may have cuBLASLt's bias epilogue.
         std::string(target == "cuda"
                         ? "disc-lower-library-calls{half-epilogues=1},"
                           "disc-cuda-library-calls,"
                         : "disc-lower-library-calls,") +
         legalize +
         // 6. bufferization (memory: per-call arena in the RAL). A stitch
         // kernel writes each row straight into its output slice (no
         // row-sized temporary); its per-row scalars go on the stack.
         // Results the entry writes into its arguments (an optimizer
         // step's parameters, `disc.result_into`) are materialized there:
         // computed in the argument's buffer when nothing reads its old
         // value later.
         "disc-tie-results-to-arguments,eliminate-empty-tensors,"
         "one-shot-bufferize{bufferize-function-boundaries=1 "
         "function-boundary-type-conversion=identity-layout-map "
         "unknown-type-conversion=identity-layout-map},"
         "func.func(resolve-ranked-shaped-type-result-dims),cse,canonicalize,"
         // Strided copies become loop nests like the rest; parallel dims
         // become scf.parallel, reductions scf.for inside. Dims every
         // operand holds contiguously merge first ([N, C, H, W] + [C] loops
         // over N*C rows of H*W), so short rows still vectorise.
         "func.func(disc-stack-loop-temporaries," +
         std::string(target == "cpu" ? "disc-thread-scratch-temporaries," : "") +
         "scf-forall-to-parallel,disc-lower-strided-copies,"
         "disc-collapse-contiguous-dims,"
         "convert-linalg-to-parallel-loops,canonicalize," +
         // The GPU has a NaN-propagating max: no NaN flag carried apart.
         std::string(gpu ? "disc-promote-accumulators{carry-nan-apart=0}"
                         : "disc-promote-accumulators") +
         // A plain column sum's rows split into chunks that threads share
         // (CPU: the GPU maps columns onto threads instead).
         std::string(target == "cpu" ? ",disc-parallel-row-chunks" : "") +
         ")" +
         std::string(runtimeChecks ? ",generate-runtime-verification" : "");
}

std::string disc::cpuLowerToKernelsPipeline(bool runtimeChecks,
                                             bool logFusion) {
  return lowerToLoopsPipeline(runtimeChecks, logFusion, "cpu") + "," +
         cpuOutlineKernelsPipeline();
}

std::string disc::cpuOutlineKernelsPipeline() {
  return "disc-outline-loop-kernels,"
         // A column reduction's row loop around its column loop becomes a
         // parallel loop over column blocks, each walking every row.
         "disc-parallel-column-blocks,"
         // Each kernel's outer parallel loop runs on the runtime's threads.
         "disc-parallelize-loops,func.func(disc-hoist-static-allocas),"
         // Buffers no other kernel argument overlaps: noalias for LLVM.
         "disc-mark-noalias-args,"
         // Memory planning: every buffer goes back to the caching allocator
         // right after its last use, for the next allocation to reuse.
         "func.func(disc-free-after-last-use)" +
         // DISC_PROFILE=1: per-kernel wall time.
         profileStep();
}

std::string disc::cpuKernelsToLlvmPipeline() {
  return "func.func(disc-lower-expand-shape),expand-strided-metadata,"
         "lower-affine,convert-scf-to-cf,"
         "disc-ral-lower-asserts,disc-ral-lower-thread-scratch,"
         // 7. to LLVM
         "math-extend-to-supported-types,"
         // f32 transcendental ops become inline polynomials, so the loops
         // around them vectorise (a libm call per element does not).
         "disc-approximate-math,"
         "arith-emulate-unsupported-floats{source-types=bf16,f16 "
         "target-type=f32},"
         "convert-math-to-funcs,convert-math-to-llvm,convert-math-to-libm,"
         // max/min reductions vectorise only as LLVM intrinsics; arith-expand
         // would turn them into compare+select.
         "disc-lower-float-min-max,"
         "arith-expand{include-bf16=true},"
         // aligned_alloc, not malloc(size + alignment) and a manual
         // offset: the RAL allocator aligns every block to 64 bytes, and the
         // extra bytes would push a power-of-two size into the next bucket.
         // Vector loads and stores: the cuda-emulated target's vector
         // grids (disc-map-loops-to-gpu).
         "convert-vector-to-llvm,"
         "finalize-memref-to-llvm{use-aligned-alloc=1},convert-arith-to-llvm,convert-index-to-llvm,"
         "convert-cf-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts,"
         "disc-apply-noalias-args,"
         "disc-ral-lower-parallel-for,"
         "disc-ral-inject-context";
}

std::string disc::cudaEmulatedLowerToKernelsPipeline(bool runtimeChecks,
                                                     bool logFusion) {
  return lowerToLoopsPipeline(runtimeChecks, logFusion, "cuda-emulated") +
         ",convert-math-to-funcs," + hoistLoopTemporariesStep() +
         forwardHostScalarsStep() + ifResultsToBuffersStep() +
         mapLoopsToGpuStep(logFusion) + ",disc-cuda-sort-loops," +
         cpuOutlineKernelsPipeline();
}

std::string disc::cudaLowerToKernelsPipeline(bool runtimeChecks,
                                              bool logFusion) {
  return lowerToLoopsPipeline(runtimeChecks, logFusion, "cuda") +
         // Every loop nest becomes a block/thread grid (no canonicalize
         // before convert-parallel-loops-to-gpu: it would fold the
         // one-iteration loops of one-thread grids away), then gpu.launch,
         // then one gpu.func per launch.
         // Integer powers become helper functions (cloned into the kernels'
         // modules by outlining).
         // Block-per-row nests become gpu.launch first (upstream does
         // not take their reductions and barriers).
         // Sorts: a block-per-row nest of generated code in place of their
         // library call, after the mapping (which would take the nest's
         // step loops for column loops).
         ",convert-math-to-funcs," + hoistLoopTemporariesStep() +
         forwardHostScalarsStep() + ifResultsToBuffersStep() +
         mapLoopsToGpuStep(logFusion) + ",disc-cuda-sort-loops,"
         "func.func(disc-row-blocks-to-gpu,convert-parallel-loops-to-gpu),"
         // Constants and index arithmetic move into the kernels (known
         // there, not passed as arguments).
         "func.func(gpu-launch-sink-index-computations),gpu-kernel-outlining," +
         dedupKernelsStep(logFusion) +
         // A few modules for all kernels: few ptxas runs per chip, few
         // CUDA modules to load.
         "disc-merge-gpu-modules,func.func(disc-free-after-last-use)" +
         // DISC_PROFILE=1: the host cost of each launch and library call.
         profileStep();
}

std::vector<std::string>
disc::cudaChips(const std::vector<std::string> &requested) {
  static const char *const known[] = {"sm_80", "sm_86", "sm_87", "sm_89",
                                      "sm_90"};
  std::vector<std::string> chips = requested;
  std::string source = "cuda_chips";
  if (chips.empty()) {
    const char *env = std::getenv("DISC_CUDA_CHIPS");
    if (!env || !*env)
      return {"sm_80", "sm_90"};
    source = "DISC_CUDA_CHIPS";
    // A comma list; spaces around a name are not part of it.
    std::string list = env;
    for (size_t start = 0;;) {
      size_t comma = list.find(',', start);
      std::string chip = list.substr(start, comma - start);
      size_t first = chip.find_first_not_of(' ');
      chip = first == std::string::npos
                 ? ""
                 : chip.substr(first, chip.find_last_not_of(' ') - first + 1);
      chips.push_back(chip);
      if (comma == std::string::npos)
        break;
      start = comma + 1;
    }
  }
  for (const std::string &chip : chips)
    if (std::find(std::begin(known), std::end(known), chip) ==
        std::end(known))
      throw std::invalid_argument(
          source + ": the cuda target compiles for " +
          llvm::join(std::begin(known), std::end(known), ", ") +
          " (newer GPUs run the PTX of the newest chip compiled), got '" +
          chip + "'");
  // sm_NN sorts as its number: same length.
  std::sort(chips.begin(), chips.end());
  chips.erase(std::unique(chips.begin(), chips.end()), chips.end());
  return chips;
}

std::string
disc::cudaKernelsToLlvmPipeline(const std::string &toolkitPath,
                                const std::string &dumpDir,
                                const std::vector<std::string> &chips) {
  std::string toolkit =
      toolkitPath.empty() ? "" : " toolkit=" + toolkitPath;
  // One object per chip: a fatbin with its cubin and its PTX (which the
  // driver compiles for newer GPUs).
  std::string attachTargets;
  for (const std::string &chip : chips)
    attachTargets +=
        "nvvm-attach-target{chip=" + chip + " features=+ptx80 O=3},";
  return attachTargets +
      "func.func(disc-lower-expand-shape),expand-strided-metadata,"
      "lower-affine,"
      "gpu.module(convert-scf-to-cf,math-extend-to-supported-types,"
      "arith-emulate-unsupported-floats{source-types=bf16 target-type=f32},"
      "convert-gpu-to-nvvm,canonicalize,cse,reconcile-unrealized-casts),"
      "convert-scf-to-cf,disc-ral-lower-asserts,"
      "finalize-memref-to-llvm{use-aligned-alloc=1},convert-arith-to-llvm,"
      "convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
      "gpu-to-llvm,reconcile-unrealized-casts,"
      // Upstream's gpu-module-to-binary with each module's LLVM code
      // generation and each chip's ptxas on a thread of their own: LLVM
      // makes the PTX once, for the oldest chip, and ptxas compiles it for
      // each chip (DISC_CUDA_SHARE_PTX=0: LLVM once per chip, as upstream).
      "disc-gpu-module-to-binary{format=fatbin" + toolkit +
      (integerSetting("DISC_CUDA_SHARE_PTX", 1, 0, 1) == "1"
           ? ""
           : " share-ptx=0") +
      "},"
      "disc-ral-lower-gpu-launch" +
      (dumpDir.empty() ? "" : "{dump-dir=" + dumpDir + "}") +
      ",disc-ral-inject-context{device=cuda}";
}

void disc::registerAllPasses() {
  mlir::registerAllPasses();
  registerDiscTransformsPasses();
  registerDiscConversionPasses();
  registerDiscCudaConversionPasses();
  static bool registered = [] {
    PassPipelineRegistration<>(
        "disc-cpu-prepare", "DISC stage 1: entry selection and simplification",
        [](OpPassManager &pm) {
          (void)parsePassPipeline(cpuPreparePipeline(), pm);
        });
    PassPipelineRegistration<>(
        "disc-cpu-lower", "DISC stage 2: lower a prepared module to LLVM",
        [](OpPassManager &pm) {
          (void)parsePassPipeline(cpuLowerPipeline(), pm);
        });
    return true;
  }();
  (void)registered;
}
