//===- Executable.cpp - compile a disc module and run it ------------------===//
#include "disc/Compiler/Executable.h"

#include "disc/Analysis/ShapeConstraints.h"
#include "disc/Compiler/Pipeline.h"
#include "disc/Dialect/Disc/DiscDialect.h"
#include "disc/Runtime/Artifact.h"
#include "SharedObject.h"
#include "disc/Runtime/RalApi.h"
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/SplitModule.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SourceMgr.h"

#include <algorithm>

#include <thread>
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <mutex>

using namespace mlir;

namespace disc {

static std::atomic<int64_t> numCompilations{0};
int64_t compilationCount() { return numCompilations.load(); }

struct Executable::Impl {
  std::shared_ptr<ral::Program> program;
  double compileSeconds = 0;
  KernelCounts kernels;
};

Executable::Executable() : impl(std::make_unique<Impl>()) {}
Executable::~Executable() = default;

const ral::Signature &Executable::signature() const {
  return impl->program->callerSignature();
}
const std::string &Executable::entryName() const {
  return impl->program->artifact().meta("entry");
}
double Executable::compileSeconds() const { return impl->compileSeconds; }
const KernelCounts &Executable::kernelCounts() const { return impl->kernels; }
ral::Device Executable::device() const { return impl->program->device(); }
const ral::Program &Executable::program() const { return *impl->program; }

std::vector<ral::OutputTensor>
Executable::run(const std::vector<ral::TensorView> &inputs, void *cudaStream,
                ral::Float32Math float32Math,
                std::shared_ptr<ral::DeviceAllocator> deviceAllocator) {
  return impl->program->run(inputs, cudaStream, {}, {}, float32Math,
                            std::move(deviceAllocator));
}

std::string cudaToolkitPath() {
  for (const char *var : {"DISC_CUDA_TOOLKIT", "CUDA_HOME", "CUDA_PATH"})
    if (const char *path = std::getenv(var); path && *path &&
        llvm::sys::fs::exists(std::string(path) + "/bin/ptxas"))
      return path;
  if (llvm::sys::fs::exists("/usr/local/cuda/bin/ptxas"))
    return "/usr/local/cuda";
  return "";
}

namespace {

/// Counts the module's kernels after disc-parallelize-loops (see
/// KernelCounts): outermost loops and parallel-body calls of kernel
/// functions, outermost loops of other functions, library calls, copies.
/// Whether `op` is in the block variant of a row kernel
/// (disc-map-loops-to-gpu): a call runs one of the two variants, counted in
/// the other branch.
bool inBlockVariant(Operation *op) {
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp())
    if (auto choice = dyn_cast<scf::IfOp>(parent);
        choice && choice->hasAttr("disc.row_variants") &&
        choice.getThenRegion().isAncestor(op->getParentRegion()))
      return true;
  return false;
}

KernelCounts countKernels(ModuleOp module) {
  KernelCounts counts;
  // Kernel functions (CPU outlining) called from a block variant.
  llvm::DenseSet<Operation *> blockVariantKernels;
  module.walk([&](func::CallOp call) {
    if (inBlockVariant(call))
      if (auto target = module.lookupSymbol<func::FuncOp>(call.getCallee()))
        blockVariantKernels.insert(target);
  });
  module.walk([&](Operation *op) {
    auto func = op->getParentOfType<func::FuncOp>();
    if (!func || func->hasAttr(kParallelBodyAttr))
      return; // a parallel body is counted at its call
    if (op->getParentOfType<gpu::GPUModuleOp>())
      return; // counted at its launch
    if (inBlockVariant(op) || blockVariantKernels.contains(func))
      return;
    if (auto call = dyn_cast<func::CallOp>(op)) {
      StringRef callee = call.getCallee();
      if (callee.starts_with("disc_ral_matmul") ||
          callee.starts_with("disc_ral_cuda_matmul") ||
          callee.starts_with("disc_ral_cuda_conv") ||
          callee.starts_with("disc_ral_conv") ||
          callee.starts_with("disc_ral_attention") ||
          callee.starts_with("disc_ral_sort"))
        ++counts.libraryCalls;
      else if (auto target = module.lookupSymbol<func::FuncOp>(callee);
               target && target->hasAttr(kParallelBodyAttr))
        ++counts.loopKernels;
      return;
    }
    if (isa<memref::CopyOp>(op)) {
      ++counts.copies;
      return;
    }
    if (isa<gpu::LaunchFuncOp>(op)) {
      ++counts.loopKernels;
      return;
    }
    if (isa<LoopLikeOpInterface>(op) &&
        !op->getParentOfType<LoopLikeOpInterface>())
      ++counts.loopKernels;
  });
  return counts;
}

/// The kernels the cuda target compiles to device code (after
/// disc-deduplicate-gpu-kernels: a kernel several launches share counts
/// once).
int64_t countDeviceKernels(ModuleOp module) {
  int64_t kernels = 0;
  for (auto kernelModule : module.getOps<gpu::GPUModuleOp>())
    for (auto func : kernelModule.getOps<gpu::GPUFuncOp>())
      kernels += func.isKernel();
  return kernels;
}

/// Process-wide state set up once: LLVM targets, the pass registry.
/// LLVM's O3 pipeline for this target, without loop unrolling. Compiled
/// code is loop nests over memory; LLVM's loop vectoriser (with
/// interleaving) and SLP vectoriser give the speed, while runtime and full
/// unrolling of those nests multiply code size (and loop-strength-reduction
/// time in the backend) several times for little gain: on a 1,000-op graph
/// compile time drops from 14 s to 5 s. DISC_LLVM_UNROLL=1 turns unrolling
/// back on for experiments.
/// `dumpSuffix` tells the parts of a split module apart in the dump.
/// `level`: O3 for CPU programs; O1 for a cuda program's host code, which
/// only computes shapes and launches kernels (its loops are the GPU's).
std::function<llvm::Error(llvm::Module *)>
makeLlvmOptimizer(llvm::TargetMachine *targetMachine,
                  const std::string &dumpDir, llvm::OptimizationLevel level,
                  const std::string &dumpSuffix = "") {
  const char *unrollEnv = std::getenv("DISC_LLVM_UNROLL");
  bool unroll = unrollEnv && std::string(unrollEnv) == "1";
  return [targetMachine, unroll, dumpDir, dumpSuffix,
          level](llvm::Module *module) -> llvm::Error {
    auto dump = [&](const char *name) {
      if (dumpDir.empty())
        return;
      std::error_code error;
      llvm::raw_fd_ostream out(dumpDir + "/" + name + dumpSuffix + ".ll",
                               error);
      if (!error)
        module->print(out, nullptr);
    };
    dump("1000-llvm-ir");
    llvm::PipelineTuningOptions tuning;
    tuning.LoopUnrolling = unroll;
    // DISC_LLVM_INTERLEAVE=0: ~15% less LLVM time on big graphs, slower
    // reductions (one accumulator chain instead of several).
    const char *interleaveEnv = std::getenv("DISC_LLVM_INTERLEAVE");
    tuning.LoopInterleaving = !interleaveEnv || std::string(interleaveEnv) != "0";
    tuning.LoopVectorization = true;
    tuning.SLPVectorization = true;
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder builder(targetMachine, tuning);
    builder.registerModuleAnalyses(mam);
    builder.registerCGSCCAnalyses(cgam);
    builder.registerFunctionAnalyses(fam);
    builder.registerLoopAnalyses(lam);
    builder.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager passes =
        builder.buildPerModuleDefaultPipeline(level);
    passes.run(*module, mam);
    dump("1001-llvm-ir-optimized");
    return llvm::Error::success();
  };
}

/// Wall time of the compile phases; printed to stderr when asked for
/// (CompileOptions::logTiming, `DISC_LOG=compile` from Python).
class PhaseTimer {
public:
  explicit PhaseTimer(bool enabled) : enabled(enabled) {}
  void phase(StringRef name) {
    auto now = Clock::now();
    double seconds = std::chrono::duration<double>(now - last).count();
    last = now;
    if (!phases.empty() && phases.back().first == name)
      phases.back().second += seconds; // a stage run in several parts
    else
      phases.emplace_back(name.str(), seconds);
  }
  double total() const {
    return std::chrono::duration<double>(last - start).count();
  }
  /// `what`: what was compiled for, when it says more than the target.
  void report(const std::string &what = "") const {
    if (!enabled)
      return;
    std::string line = "[disc] compile";
    if (!what.empty())
      line += " (" + what + ")";
    for (const auto &[name, seconds] : phases)
      line += llvm::formatv(" {0}={1:F1}ms", name, seconds * 1e3).str();
    line += llvm::formatv(" total={0:F1}ms\n", total() * 1e3).str();
    llvm::errs() << line;
  }

private:
  using Clock = std::chrono::steady_clock;
  bool enabled;
  Clock::time_point start = Clock::now(), last = start;
  std::vector<std::pair<std::string, double>> phases;
};

/// How many parts LLVM optimises and compiles a module in, each in its own
/// thread (as many at once as there are cores) and LLVM context, the
/// objects then linked together: one per 24 defined functions (kernels,
/// their parallel bodies), at most 8, so a big graph's LLVM time divides
/// by the cores while small modules stay whole. A function of one part
/// cannot be inlined into another: kernels are called through the runtime
/// anyway. DISC_LLVM_PARTS=N overrides (1: never split). The count depends
/// on the module only, so the code does not depend on the machine.
unsigned llvmParts(const llvm::Module &module) {
  if (const char *env = std::getenv("DISC_LLVM_PARTS"); env && *env) {
    char *end = nullptr;
    long parts = std::strtol(env, &end, 10);
    if (*end != 0 || parts < 1 || parts > 64)
      throw std::invalid_argument("DISC_LLVM_PARTS must be 1 to 64, got '" +
                                  std::string(env) + "'");
    return static_cast<unsigned>(parts);
  }
  unsigned defined = 0;
  for (const llvm::Function &function : module)
    defined += !function.isDeclaration();
  return std::clamp(defined / 24u, 1u, 8u);
}

/// `module` (in `context`, optimised here) as one shared object: split in
/// llvmParts() parts optimised and compiled in parallel, or whole.
llvm::Expected<std::string> compileLlvmModule(llvm::Module &module,
                                              llvm::TargetMachine &machine,
                                              const std::string &dumpDir,
                                              PhaseTimer &timer,
                                              bool hostCodeOnly) {
  // A cuda program's host code: shape arithmetic and launches, compiled
  // quickly: O1 and LLVM's fast instruction selection (swin_v2_t's host
  // code, 2 cores: 5.8 s of LLVM at O3, 2.3 s so).
  const llvm::OptimizationLevel level =
      hostCodeOnly ? llvm::OptimizationLevel::O1 : llvm::OptimizationLevel::O3;
  if (hostCodeOnly)
    machine.setOptLevel(llvm::CodeGenOptLevel::None);
  const unsigned parts = llvmParts(module);
  if (parts == 1) {
    if (llvm::Error error =
            makeLlvmOptimizer(&machine, dumpDir, level)(&module))
      return std::move(error);
    timer.phase("llvm-opt");
    auto sharedObject = emitSharedObject(module, machine);
    timer.phase("codegen+link");
    return sharedObject;
  }
  // A definition that a part may drop once it has inlined it (linkonce_odr:
  // convert-math-to-funcs' helpers) must stay for the other parts that
  // call it: an ordinary hidden definition in whichever part gets it.
  for (llvm::GlobalValue &value : module.global_values())
    if (!value.isDeclaration() && !value.hasLocalLinkage() &&
        llvm::GlobalValue::isDiscardableIfUnused(value.getLinkage())) {
      value.setLinkage(llvm::GlobalValue::ExternalLinkage);
      value.setVisibility(llvm::GlobalValue::HiddenVisibility);
    }
  // Each part goes to its own context through bitcode: an LLVMContext is
  // not thread-safe.
  std::vector<std::string> bitcodes;
  llvm::SplitModule(
      module, parts,
      [&](std::unique_ptr<llvm::Module> part) {
        std::string &bitcode = bitcodes.emplace_back();
        llvm::raw_string_ostream stream(bitcode);
        llvm::WriteBitcodeToFile(*part, stream);
      },
      /*PreserveLocals=*/false, /*RoundRobin=*/true);
  timer.phase("llvm-split");
  std::vector<std::string> objects(bitcodes.size()), errors(bitcodes.size());
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    for (size_t i = next++; i < bitcodes.size(); i = next++) {
      llvm::LLVMContext context;
      auto part = llvm::parseBitcodeFile(
          llvm::MemoryBufferRef(bitcodes[i], "part"), context);
      if (!part) {
        errors[i] = llvm::toString(part.takeError());
        continue;
      }
      auto partMachine = createHostTargetMachine();
      if (!partMachine) {
        errors[i] = llvm::toString(partMachine.takeError());
        continue;
      }
      if (hostCodeOnly)
        (*partMachine)->setOptLevel(llvm::CodeGenOptLevel::None);
      if (llvm::Error error =
              makeLlvmOptimizer(partMachine->get(), dumpDir, level,
                                ".part" + std::to_string(i))(part->get())) {
        errors[i] = llvm::toString(std::move(error));
        continue;
      }
      auto object = emitObject(**part, **partMachine);
      if (!object) {
        errors[i] = llvm::toString(object.takeError());
        continue;
      }
      objects[i] = std::move(*object);
    }
  };
  unsigned threads =
      std::min<unsigned>(parts, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread &thread : pool)
    thread.join();
  for (size_t i = 0; i < errors.size(); ++i)
    if (!errors[i].empty())
      return llvm::createStringError("part " + std::to_string(i) + " of " +
                                     std::to_string(parts) + ": " + errors[i]);
  timer.phase("llvm-opt+codegen");
  auto sharedObject = linkSharedObject(objects);
  timer.phase("link");
  return sharedObject;
}

void initializeOnce() {
  static std::once_flag flag;
  std::call_once(flag, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    registerAllPasses();
    // The entry function is one long basic block of runtime calls, each
    // passing memref descriptors through stack slots: thousands of stores.
    // The SelectionDAG combiner's store merging searches candidates per
    // store and goes quadratic there (18 of 21 s of code generation on
    // SegFormer-B0); it merges nothing useful in such code.
    auto &options = llvm::cl::getRegisteredOptions();
    auto storeMerging = options.find("combiner-store-merging");
    if (storeMerging != options.end())
      static_cast<llvm::cl::opt<bool> *>(storeMerging->second)->setValue(false);

  });
}

FailureOr<ral::DType> toDType(Type t) {
  if (t.isF16())
    return ral::DType::F16;
  if (t.isBF16())
    return ral::DType::BF16;
  if (t.isF32())
    return ral::DType::F32;
  if (t.isF64())
    return ral::DType::F64;
  if (t.isInteger(1))
    return ral::DType::I1;
  if (t.isInteger(8))
    return ral::DType::I8;
  if (t.isInteger(16))
    return ral::DType::I16;
  if (t.isInteger(32))
    return ral::DType::I32;
  if (t.isInteger(64))
    return ral::DType::I64;
  return failure();
}

/// Reads the entry function's call signature and its dim-equality classes.
LogicalResult buildSignature(func::FuncOp entry, ral::Signature &signature) {
  ShapeConstraints constraints(entry);
  llvm::DenseMap<int64_t, int> classIds;
  for (BlockArgument arg : entry.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      return emitError(arg.getLoc())
             << "entry argument " << arg.getArgNumber() << " has type "
             << arg.getType() << "; only ranked tensors are supported";
    auto dtype = toDType(type.getElementType());
    if (failed(dtype))
      return emitError(arg.getLoc()) << "unsupported element type "
                                     << type.getElementType();
    ral::ArgSpec spec;
    spec.name = "%arg" + std::to_string(arg.getArgNumber());
    spec.dtype = *dtype;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      spec.dims.push_back(type.isDynamicDim(d) ? -1 : type.getDimSize(d));
      int64_t c = constraints.classOf(arg, d);
      auto [it, inserted] =
          classIds.try_emplace(c, (int)signature.classes.size());
      if (inserted) {
        ral::DimClass dimClass;
        int64_t size = constraints.staticSizeOf(c);
        dimClass.staticSize = ShapedType::isDynamic(size) ? -1 : size;
        dimClass.reason = constraints.reasonOf(c);
        signature.classes.push_back(dimClass);
      }
      spec.dimClass.push_back(it->second);
    }
    signature.args.push_back(std::move(spec));
  }
  for (Type t : entry.getResultTypes()) {
    auto type = dyn_cast<RankedTensorType>(t);
    FailureOr<ral::DType> dtype = failure();
    if (type)
      dtype = toDType(type.getElementType());
    if (!type || failed(dtype))
      return entry.emitError() << "unsupported result type " << t;
    ral::ResultSpec spec;
    spec.dtype = *dtype;
    spec.rank = type.getRank();
    signature.results.push_back(spec);
  }
  // `disc.result_into` (verified by the dialect: an existing result of the
  // argument's type): the code writes that result into the argument.
  for (BlockArgument arg : entry.getArguments()) {
    auto index = entry.getArgAttrOfType<IntegerAttr>(
        arg.getArgNumber(), DiscDialect::kResultIntoAttrName);
    if (!index)
      continue;
    ral::ResultSpec &spec = signature.results[index.getInt()];
    if (spec.intoArg >= 0)
      return entry.emitError()
             << "arguments " << spec.intoArg << " and " << arg.getArgNumber()
             << " both carry '" << DiscDialect::kResultIntoAttrName << " = "
             << index.getInt() << "'";
    spec.intoArg = arg.getArgNumber();
  }
  return success();
}

void writeFile(const std::string &dir, const std::string &name,
               Operation *op) {
  std::error_code ec;
  llvm::raw_fd_ostream os(dir + "/" + name, ec);
  if (!ec)
    op->print(os);
}

/// Writes the module after every pass to
/// `<dumpDir>/<NNN>-<stage>-<pass-argument>.mlir`, numbered across stages in
/// execution order (nested passes print their whole module).
class DumpAfterEachPass : public PassInstrumentation {
public:
  DumpAfterEachPass(std::string dir, StringRef stage, unsigned &counter)
      : dir(std::move(dir)), stage(stage.str()), counter(counter) {}
  void runAfterPass(Pass *pass, Operation *op) override {
    Operation *top = op;
    while (Operation *parent = top->getParentOp())
      top = parent;
    std::string name = llvm::formatv("{0:03}-{1}-{2}.mlir", ++counter, stage,
                                     pass->getArgument().empty()
                                         ? pass->getName()
                                         : pass->getArgument());
    writeFile(dir, name, top);
  }
  void runAfterPassFailed(Pass *pass, Operation *op) override {
    runAfterPass(pass, op);
  }

private:
  std::string dir, stage;
  unsigned &counter;
};


} // namespace

ral::Allocator &defaultAllocator() {
  return ral::defaultContext()->allocator();
}

ral::Artifact Executable::compileArtifact(const std::string &mlirText,
                                        const CompileOptions &options) {
  PhaseTimer timer(options.logTiming);
  initializeOnce();
  DialectRegistry registry;
  registerAllDialects(registry);
  // Passes run on the calling thread (the dump instrumentation prints the
  // whole module after each pass). disc-gpu-module-to-binary enables the
  // context's threads for its own parallel serialisation only.
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  timer.phase("context");

  std::string diagnostics;
  llvm::raw_string_ostream diagStream(diagnostics);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(mlirText, options.sourceName),
      llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context, diagStream);
  auto fail = [&](const std::string &what) -> ral::Artifact {
    diagStream.flush();
    throw CompileError(what + (diagnostics.empty() ? "" : ":\n" + diagnostics));
  };

  std::string dumpDir = options.dumpDir;
  if (!dumpDir.empty())
    llvm::sys::fs::create_directories(dumpDir);

  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module)
    return fail("failed to parse the MLIR module");
  if (failed(verify(*module)))
    return fail("the MLIR module does not verify");
  if (!dumpDir.empty())
    writeFile(dumpDir, "000-input.mlir", *module);
  timer.phase("parse+verify");
  unsigned passCounter = 0;

  auto runPipeline = [&](const std::string &pipeline, StringRef stage) {
    PassManager pm(&context);
    if (failed(parsePassPipeline(pipeline, pm, diagStream)))
      return failure();
    if (!dumpDir.empty())
      pm.addInstrumentation(
          std::make_unique<DumpAfterEachPass>(dumpDir, stage, passCounter));
    // DISC_PASS_TIMING=1: MLIR's per-pass timing report on stderr, one per
    // stage (docs/debugging.md).
    if (const char *timing = std::getenv("DISC_PASS_TIMING");
        timing && std::string(timing) == "1")
      pm.enableTiming();
    LogicalResult result = pm.run(*module);
    timer.phase(stage);
    return result;
  };

  if (failed(runPipeline(cpuPreparePipeline(), "prepare")))
    return fail("compilation failed (prepare stage)");
  ral::Artifact artifact;
  func::FuncOp entry;
  for (auto func : module->getOps<func::FuncOp>())
    if (func->hasAttr(kEntryAttr))
      entry = func;
  if (!entry)
    return fail("no entry function");
  const std::string entryName = entry.getSymName().str();
  if (failed(buildSignature(entry, artifact.signature)))
    return fail("unsupported entry signature");

  const char *checksEnv = std::getenv("DISC_RUNTIME_CHECKS");
  bool runtimeChecks = checksEnv && std::string(checksEnv) == "1";
  const std::string &target = options.target;
  std::string toKernels, toLlvm;
  std::vector<std::string> chips; // the cuda target's
  if (!options.cudaChips.empty() && target != "cuda")
    throw std::invalid_argument("cuda_chips is for the cuda target, not '" +
                                target + "'");
  if (target == "cpu") {
    toKernels = cpuLowerToKernelsPipeline(runtimeChecks, options.logFusion);
    toLlvm = cpuKernelsToLlvmPipeline();
  } else if (target == "cuda-emulated") {
    toKernels =
        cudaEmulatedLowerToKernelsPipeline(runtimeChecks, options.logFusion);
    toLlvm = cpuKernelsToLlvmPipeline();
  } else if (target == "cuda") {
    std::string toolkit = cudaToolkitPath();
    if (toolkit.empty())
      return fail("the cuda target needs the CUDA toolkit's ptxas and "
                  "fatbinary: set DISC_CUDA_TOOLKIT (or CUDA_HOME) to a "
                  "directory with bin/ptxas, bin/fatbinary and "
                  "nvvm/libdevice");
    toKernels = cudaLowerToKernelsPipeline(runtimeChecks, options.logFusion);
    chips = cudaChips(options.cudaChips);
    toLlvm = cudaKernelsToLlvmPipeline(toolkit, dumpDir, chips);
  } else {
    return fail("unknown target '" + target +
                "' (expected cpu, cuda or cuda-emulated)");
  }
  if (failed(runPipeline(toKernels, "lower")))
    return fail("compilation failed (lowering to loop kernels)");
  KernelCounts kernels = countKernels(*module);
  const int64_t deviceKernels = countDeviceKernels(*module);
  if (failed(runPipeline(toLlvm, "lower")))
    return fail("compilation failed (lowering to LLVM)");
  if (!dumpDir.empty())
    writeFile(dumpDir, "999-llvm.mlir", *module);

  // LLVM IR for this host's CPU, optimised, as a shared object.
  auto machine = createHostTargetMachine();
  if (!machine)
    return fail("cannot create a target machine for this host: " +
                llvm::toString(machine.takeError()));
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext, "disc");
  if (!llvmModule)
    return fail("translation to LLVM IR failed");
  llvmModule->setDataLayout((*machine)->createDataLayout());
  llvmModule->setTargetTriple((*machine)->getTargetTriple());
  if (llvm::Error error = addPackedEntry(*llvmModule, entryName))
    return fail(llvm::toString(std::move(error)));
  timer.phase("llvm-ir");
  auto sharedObject =
      compileLlvmModule(*llvmModule, **machine, dumpDir, timer,
                        /*hostCodeOnly=*/target == "cuda");
  if (!sharedObject)
    return fail("LLVM optimisation or code generation failed: " +
                llvm::toString(sharedObject.takeError()));
  if (!dumpDir.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream out(dumpDir + "/1002-module.so", ec);
    if (!ec)
      out << *sharedObject;
  }
  artifact.sharedObject = std::move(*sharedObject);
  artifact.metadata["format"] = "1";
  artifact.metadata["target"] = target == "cuda" ? "cuda" : "cpu";
  artifact.metadata["compile.target"] = target;
  artifact.metadata["entry"] = entryName;
  artifact.metadata["cpu.features"] = ral::hostCpuFeatures();
  artifact.metadata["cpu.name"] = (*machine)->getTargetCPU().str();
  artifact.metadata["compiler.version"] = DISC_VERSION_STRING;
  artifact.metadata["kernels.loops"] = std::to_string(kernels.loopKernels);
  artifact.metadata["kernels.library_calls"] =
      std::to_string(kernels.libraryCalls);
  artifact.metadata["kernels.copies"] = std::to_string(kernels.copies);
  if (target == "cuda") {
    artifact.metadata["cuda.device_kernels"] = std::to_string(deviceKernels);
    artifact.metadata["cuda.chips"] = llvm::join(chips, ",");
  }
  artifact.metadata["compile.seconds"] = std::to_string(timer.total());
  timer.report(target == "cuda" ? "cuda " + artifact.metadata["cuda.chips"]
                                : "");
  ++numCompilations;
  return artifact;
}

std::unique_ptr<Executable> Executable::load(ral::Artifact artifact) {
  auto result = std::unique_ptr<Executable>(new Executable());
  auto number = [&](const char *key) -> int64_t {
    const std::string &value = artifact.meta(key);
    return value.empty() ? 0 : std::strtoll(value.c_str(), nullptr, 10);
  };
  result->impl->kernels.loopKernels = number("kernels.loops");
  result->impl->kernels.libraryCalls = number("kernels.library_calls");
  result->impl->kernels.copies = number("kernels.copies");
  const std::string &seconds = artifact.meta("compile.seconds");
  result->impl->compileSeconds =
      seconds.empty() ? 0 : std::strtod(seconds.c_str(), nullptr);
  result->impl->program =
      ral::Program::load(std::move(artifact), ral::defaultContext());
  return result;
}

std::unique_ptr<Executable> Executable::compile(const std::string &mlirText,
                                                const CompileOptions &options) {
  auto start = std::chrono::steady_clock::now();
  auto result = load(compileArtifact(mlirText, options));
  // Compile time includes loading the shared object.
  result->impl->compileSeconds = std::chrono::duration<double>(
                                     std::chrono::steady_clock::now() - start)
                                     .count();
  return result;
}

} // namespace disc
