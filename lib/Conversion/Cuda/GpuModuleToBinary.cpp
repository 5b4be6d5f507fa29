//===- GpuModuleToBinary.cpp - gpu.module -> gpu.binary, targets at once --===//
//
// See DiscGpuModuleToBinary in include/disc/Conversion/Cuda/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "disc/Conversion/Cuda/Passes.h"

#include "GpuLoopUtils.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

namespace disc {
#define GEN_PASS_DEF_DISCGPUMODULETOBINARY
#include "disc/Conversion/Cuda/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

/// The SM number of an NVVM chip (80 for "sm_80"), -1 for anything else.
int64_t smNumber(StringRef chip) {
  FailureOr<int64_t> version = disc::cuda::smVersionOfChip(chip);
  return succeeded(version) ? *version : -1;
}

/// The NVVM target whose PTX every target of `targets` can compile: the
/// oldest chip, when all are NVVM targets that differ in their chip only
/// (same triple, features, optimisation level, flags, libraries); null
/// otherwise.
NVVM::NVVMTargetAttr sharedPtxTarget(ArrayAttr targets) {
  NVVM::NVVMTargetAttr oldest;
  for (Attribute attr : targets) {
    auto target = dyn_cast<NVVM::NVVMTargetAttr>(attr);
    if (!target || smNumber(target.getChip()) < 0)
      return {};
    if (oldest && (target.getTriple() != oldest.getTriple() ||
                   target.getFeatures() != oldest.getFeatures() ||
                   target.getO() != oldest.getO() ||
                   target.getFlags() != oldest.getFlags() ||
                   target.getLink() != oldest.getLink()))
      return {};
    if (!oldest || smNumber(target.getChip()) < smNumber(oldest.getChip()))
      oldest = target;
  }
  return oldest;
}

/// `tool` from `toolkit`/bin, else from PATH; an error naming both
/// otherwise.
FailureOr<std::string> findCudaTool(Location loc, StringRef toolkit,
                                    StringRef tool) {
  if (!toolkit.empty()) {
    SmallString<256> path(toolkit);
    llvm::sys::path::append(path, "bin", tool);
    if (llvm::sys::fs::can_execute(path))
      return path.str().str();
  }
  if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(tool))
    return *found;
  return emitError(loc) << "cannot find " << tool << " (toolkit '"
                        << toolkit << "', nor on PATH)";
}

/// Removes the files it made when it goes.
struct TempFiles {
  SmallVector<std::string> paths;
  ~TempFiles() {
    for (const std::string &path : paths)
      llvm::sys::fs::remove(path);
  }
  FailureOr<std::string> make(Location loc, StringRef prefix,
                              StringRef suffix) {
    SmallString<128> path;
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile(prefix, suffix, path))
      return emitError(loc) << "cannot create a temporary file: "
                            << ec.message();
    paths.push_back(path.str().str());
    return paths.back();
  }
};

/// Runs `args` (args[0] is the program's name); on failure an error with
/// the tool's output.
LogicalResult runTool(Location loc, StringRef program, ArrayRef<StringRef> args,
                      StringRef logPath) {
  std::optional<StringRef> redirects[] = {std::nullopt, logPath, logPath};
  std::string message;
  int status = llvm::sys::ExecuteAndWait(program, args, std::nullopt,
                                         redirects, 0, 0, &message);
  if (status == 0)
    return success();
  std::string log;
  if (auto buffer = llvm::MemoryBuffer::getFile(logPath))
    log = (*buffer)->getBuffer().str();
  return emitError(loc) << args[0] << " failed"
                        << (message.empty() ? "" : ": " + message) << "\n"
                        << log;
}

/// ptxas compiles `ptx` (written for `ptxChip`) for `chip`; with `fatbin`
/// the cubin and the PTX go into a fatbin (the driver compiles the PTX for
/// GPUs newer than every cubin), else the cubin is the object.
FailureOr<SmallVector<char, 0>>
compilePtx(Location loc, StringRef ptx, StringRef chip, StringRef ptxChip,
           int optLevel, bool fatbin, StringRef toolkit) {
  FailureOr<std::string> ptxas = findCudaTool(loc, toolkit, "ptxas");
  if (failed(ptxas))
    return failure();
  TempFiles files;
  FailureOr<std::string> ptxPath = files.make(loc, "disc-kernels", "ptx");
  FailureOr<std::string> cubinPath = files.make(loc, "disc-kernels", "cubin");
  FailureOr<std::string> logPath = files.make(loc, "disc-kernels", "log");
  if (failed(ptxPath) || failed(cubinPath) || failed(logPath))
    return failure();
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(*ptxPath, ec);
    if (ec)
      return emitError(loc) << "cannot write " << *ptxPath << ": "
                            << ec.message();
    out << ptx;
  }
  const std::string opt = std::to_string(optLevel);
  if (failed(runTool(loc, *ptxas,
                     {"ptxas", "-arch", chip, *ptxPath, "-o", *cubinPath,
                      "--opt-level", opt},
                     *logPath)))
    return failure();
  std::string objectPath = *cubinPath;
  if (fatbin) {
    FailureOr<std::string> fatbinary =
        findCudaTool(loc, toolkit, "fatbinary");
    FailureOr<std::string> outPath = files.make(loc, "disc-kernels", "fatbin");
    if (failed(fatbinary) || failed(outPath))
      return failure();
    const std::string elf = "--image3=kind=elf,sm=" +
                            std::to_string(smNumber(chip)) +
                            ",file=" + *cubinPath;
    const std::string ptxImage = "--image3=kind=ptx,sm=" +
                                 std::to_string(smNumber(ptxChip)) +
                                 ",file=" + *ptxPath;
    if (failed(runTool(loc, *fatbinary,
                       {"fatbinary", "-64", elf, ptxImage, "--create",
                        *outPath},
                       *logPath)))
      return failure();
    objectPath = *outPath;
  }
  auto buffer = llvm::MemoryBuffer::getFile(objectPath);
  if (!buffer)
    return emitError(loc) << "cannot read " << objectPath << ": "
                          << buffer.getError().message();
  StringRef bytes = (*buffer)->getBuffer();
  return SmallVector<char, 0>(bytes.begin(), bytes.end());
}

struct GpuModuleToBinaryPass
    : public disc::impl::DiscGpuModuleToBinaryBase<GpuModuleToBinaryPass> {
  using DiscGpuModuleToBinaryBase::DiscGpuModuleToBinaryBase;

  void runOnOperation() override {
    std::optional<gpu::CompilationTarget> format =
        llvm::StringSwitch<std::optional<gpu::CompilationTarget>>(
            compilationTarget)
            .Cases({"assembly", "isa"}, gpu::CompilationTarget::Assembly)
            .Cases({"binary", "bin"}, gpu::CompilationTarget::Binary)
            .Cases({"fatbinary", "fatbin"}, gpu::CompilationTarget::Fatbin)
            .Default(std::nullopt);
    if (!format) {
      getOperation().emitError()
          << "disc-gpu-module-to-binary: format must be isa, bin or fatbin, "
             "got '"
          << compilationTarget << "'";
      return signalPassFailure();
    }
    // No symbol table to link against: DISC's kernel modules are whole.
    gpu::TargetOptions options(toolkitPath, /*librariesToLink=*/{},
                               /*cmdOptions=*/"", /*elfSection=*/"",
                               *format, [] { return (SymbolTable *)nullptr; });
    SmallVector<gpu::GPUModuleOp> modules(
        getOperation().getBody()->getOps<gpu::GPUModuleOp>());
    // The jobs run on the context's threads. A compile's context is
    // single-threaded (its passes run on the calling thread, which the
    // dump-after-each-pass instrumentation needs): threads are enabled here,
    // while this module pass is the only thing running, and disabled again
    // after.
    MLIRContext &context = getContext();
    const bool wasThreaded = context.isMultithreadingEnabled();
    if (!wasThreaded && !modules.empty())
      context.enableMultithreading(true);
    llvm::scope_exit restoreThreading([&] {
      if (!wasThreaded && context.isMultithreadingEnabled())
        context.enableMultithreading(false);
    });
    // One job per (module, target). Where a module's targets differ in
    // their chip only (sm_80 and sm_90), LLVM translates and compiles it to
    // PTX once, for the oldest chip, and each job runs ptxas on that PTX
    // for its chip (the PTX is valid for every newer one): LLVM's work is
    // done once, not once per chip. Otherwise (DISC_CUDA_SHARE_PTX=0, an
    // isa request, other targets) each job serialises a clone of its own.
    // Serialising translates the module to LLVM IR, which edits it
    // (distinct successors, debug expressions), so two threads must not
    // share one. The clones are made here, on one thread.
    struct PtxJob {
      gpu::GPUModuleOp module, clone;
      NVVM::NVVMTargetAttr target;
      std::string ptx;
    };
    struct Job {
      gpu::GPUModuleOp module, clone;
      Attribute target;
      int64_t ptxJob = -1; // the PtxJob whose PTX it compiles
      std::optional<SmallVector<char, 0>> object;
    };
    const bool share =
        sharePtx && *format != gpu::CompilationTarget::Assembly;
    SmallVector<PtxJob> ptxJobs;
    SmallVector<Job> jobs;
    for (gpu::GPUModuleOp module : modules) {
      ArrayAttr targets = module.getTargetsAttr();
      if (!targets || targets.empty()) {
        module.emitError("the module has no target attributes");
        return signalPassFailure();
      }
      // One chip too (the compile for the GPU it runs on): DISC's ptxas
      // and fatbinary steps, as for several.
      NVVM::NVVMTargetAttr ptxTarget =
          share ? sharedPtxTarget(targets) : nullptr;
      if (ptxTarget) {
        ptxJobs.push_back({module, cast<gpu::GPUModuleOp>(module->clone()),
                           ptxTarget, {}});
        for (Attribute target : targets)
          jobs.push_back({module, ptxJobs.back().clone, target,
                          (int64_t)ptxJobs.size() - 1, {}});
        continue;
      }
      for (Attribute target : targets)
        jobs.push_back({module, cast<gpu::GPUModuleOp>(module->clone()),
                        target, -1, {}});
    }
    gpu::TargetOptions ptxOptions(
        toolkitPath, /*librariesToLink=*/{}, /*cmdOptions=*/"",
        /*elfSection=*/"", gpu::CompilationTarget::Assembly,
        [] { return (SymbolTable *)nullptr; });
    LogicalResult serialized = failableParallelForEachN(
        &getContext(), 0, ptxJobs.size(), [&](size_t i) -> LogicalResult {
          PtxJob &job = ptxJobs[i];
          std::optional<SmallVector<char, 0>> ptx =
              cast<gpu::TargetAttrInterface>(job.target)
                  .serializeToObject(job.clone, ptxOptions);
          if (!ptx)
            return job.module.emitError()
                   << "compiling the module to PTX for " << job.target
                   << " failed";
          job.ptx.assign(ptx->begin(), ptx->end());
          while (!job.ptx.empty() && job.ptx.back() == '\0')
            job.ptx.pop_back();
          return success();
        });
    if (succeeded(serialized))
      serialized = failableParallelForEachN(
          &getContext(), 0, jobs.size(), [&](size_t i) -> LogicalResult {
            Job &job = jobs[i];
            auto target = dyn_cast<gpu::TargetAttrInterface>(job.target);
            if (!target)
              return job.module.emitError()
                     << "target " << job.target
                     << " does not implement the target interface";
            if (job.ptxJob >= 0) {
              const PtxJob &ptx = ptxJobs[job.ptxJob];
              auto nvvm = cast<NVVM::NVVMTargetAttr>(job.target);
              FailureOr<SmallVector<char, 0>> object = compilePtx(
                  job.module.getLoc(), ptx.ptx, nvvm.getChip(),
                  ptx.target.getChip(), nvvm.getO(),
                  *format == gpu::CompilationTarget::Fatbin, toolkitPath);
              if (failed(object))
                return job.module.emitError()
                       << "compiling the module's PTX (written for "
                       << ptx.target.getChip() << ") for " << nvvm.getChip()
                       << " failed";
              job.object = std::move(*object);
              return success();
            }
            job.object = target.serializeToObject(job.clone, options);
            if (!job.object)
              return job.module.emitError()
                     << "serialising the module for " << job.target
                     << " failed";
            return success();
          });
    DenseMap<Operation *, SmallVector<Attribute>> objects;
    if (succeeded(serialized))
      for (Job &job : jobs) {
        Attribute object = cast<gpu::TargetAttrInterface>(job.target)
                               .createObject(job.clone, *job.object, options);
        if (!object) {
          serialized = job.module.emitError()
                       << "creating the object for " << job.target
                       << " failed";
          break;
        }
        objects[job.module].push_back(object);
      }
    for (Job &job : jobs)
      if (job.ptxJob < 0)
        job.clone->erase();
    for (PtxJob &job : ptxJobs)
      job.clone->erase();
    if (failed(serialized))
      return signalPassFailure();
    for (gpu::GPUModuleOp module : modules) {
      OpBuilder b(module);
      b.setInsertionPointAfter(module);
      gpu::BinaryOp::create(b, module.getLoc(), module.getName(),
                            module.getOffloadingHandlerAttr(),
                            b.getArrayAttr(objects[module]));
      module->erase();
    }
  }
};

} // namespace
