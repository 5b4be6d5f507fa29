//===- SharedObject.cpp - LLVM IR to a loadable shared object -------------===//
#include "SharedObject.h"

#include "disc/Runtime/Artifact.h"

#include "lld/Common/Driver.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <cmath>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <unwind.h>

LLD_HAS_DRIVER(elf)

namespace disc {

llvm::Expected<std::unique_ptr<llvm::TargetMachine>> createHostTargetMachine() {
  auto host = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!host)
    return host.takeError();
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(host->getTargetTriple(), error);
  if (!target)
    return llvm::createStringError("no LLVM target for this host: " + error);
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      host->getTargetTriple(), host->getCPU(), host->getFeatures().getString(),
      options, llvm::Reloc::PIC_, llvm::CodeModel::Small,
      llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return llvm::createStringError("cannot create a target machine for " +
                                   host->getCPU());
  return machine;
}

namespace {

/// Moves each argument's loads (`values`: the value loads, each of a
/// pointer loaded from the packed array) from the entry block to where it
/// is used: before its first use in the block that dominates every use.
/// Loaded at the top, thousands of arguments would all be live across the
/// whole function (a register allocator's worst case, and spills on every
/// call). Nothing the function does writes the packed array or the
/// arguments before their last use: the result is stored at its end.
void sinkArgumentLoads(llvm::Function &function,
                       llvm::ArrayRef<llvm::Value *> values) {
  llvm::DominatorTree dominators(function);
  // Where each goes, found first: moving an instruction renumbers its
  // block for the next order query, which would make this quadratic.
  llvm::SmallVector<std::pair<llvm::LoadInst *, llvm::Instruction *>> moves;
  for (llvm::Value *value : values) {
    auto *load = llvm::dyn_cast<llvm::LoadInst>(value);
    if (!load)
      continue;
    auto *pointerLoad =
        llvm::dyn_cast<llvm::LoadInst>(load->getPointerOperand());
    if (load->use_empty()) {
      load->eraseFromParent();
      if (pointerLoad && pointerLoad->use_empty())
        pointerLoad->eraseFromParent();
      continue;
    }
    // The block that dominates every use (a phi's use is in the edge's
    // source block), and the first use in it.
    llvm::BasicBlock *block = nullptr;
    for (llvm::Use &use : load->uses()) {
      auto *user = llvm::cast<llvm::Instruction>(use.getUser());
      llvm::BasicBlock *useBlock = user->getParent();
      if (auto *phi = llvm::dyn_cast<llvm::PHINode>(user))
        useBlock = phi->getIncomingBlock(use);
      block = block ? dominators.findNearestCommonDominator(block, useBlock)
                    : useBlock;
    }
    llvm::Instruction *before = block->getTerminator();
    for (llvm::User *user : load->users()) {
      auto *instruction = llvm::cast<llvm::Instruction>(user);
      if (instruction->getParent() == block &&
          !llvm::isa<llvm::PHINode>(instruction) &&
          instruction->comesBefore(before))
        before = instruction;
    }
    moves.push_back({load, before});
  }
  for (auto [load, before] : moves) {
    auto *pointerLoad =
        llvm::dyn_cast<llvm::LoadInst>(load->getPointerOperand());
    if (pointerLoad && pointerLoad->hasOneUse())
      pointerLoad->moveBefore(before->getIterator());
    load->moveBefore(before->getIterator());
  }
}

} // namespace

llvm::Error addPackedEntry(llvm::Module &module, llvm::StringRef entryName) {
  if (llvm::Function *copy = module.getFunction("memrefCopy"))
    copy->setName("disc_ral_memref_copy");
  llvm::Function *entry = module.getFunction(entryName);
  if (!entry || entry->isDeclaration())
    return llvm::createStringError("the LLVM module has no entry function " +
                                   entryName.str());
  llvm::LLVMContext &context = module.getContext();
  llvm::Type *ptrType = llvm::PointerType::getUnqual(context);
  auto *wrapperType = llvm::FunctionType::get(llvm::Type::getVoidTy(context),
                                              {ptrType}, false);
  llvm::Function *wrapper = llvm::Function::Create(
      wrapperType, llvm::GlobalValue::ExternalLinkage, "disc_entry", module);
  llvm::IRBuilder<> builder(
      llvm::BasicBlock::Create(context, "entry", wrapper));
  llvm::Value *args = wrapper->getArg(0);
  llvm::SmallVector<llvm::Value *> values;
  unsigned index = 0;
  for (llvm::Type *type : entry->getFunctionType()->params()) {
    llvm::Value *slot =
        builder.CreateConstGEP1_64(ptrType, args, index++, "slot");
    llvm::Value *pointer = builder.CreateLoad(ptrType, slot, "argptr");
    values.push_back(builder.CreateLoad(type, pointer, "arg"));
  }
  llvm::CallInst *result = builder.CreateCall(entry, values);
  if (!entry->getReturnType()->isVoidTy()) {
    llvm::Value *slot = builder.CreateConstGEP1_64(ptrType, args, index,
                                                   "result.slot");
    llvm::Value *pointer = builder.CreateLoad(ptrType, slot, "result.ptr");
    builder.CreateStore(result, pointer);
  }
  builder.CreateRetVoid();
  // The entry takes every word of every memref descriptor as an argument
  // (thousands where a graph's weights are inputs): the call was that many
  // stack stores per call, and LLVM's instruction selection of it took
  // seconds (4.3 s of a yolo11n-pose partition's host code). Inlined, each
  // argument is a load where it is used. The runtime calls disc_entry only.
  if (!entry->hasOneUse())
    return llvm::Error::success();
  llvm::InlineFunctionInfo inlineInfo;
  if (!llvm::InlineFunction(*result, inlineInfo).isSuccess())
    return llvm::Error::success();
  if (entry->use_empty())
    entry->eraseFromParent();
  sinkArgumentLoads(*wrapper, values);
  return llvm::Error::success();
}

namespace {

/// The file of the shared object that defines `address`.
std::string libraryOf(const void *address) {
  Dl_info info;
  if (dladdr(address, &info) && info.dli_fname && *info.dli_fname)
    return info.dli_fname;
  return "";
}

/// The libraries an artifact links against: the runtime (disc_ral_*), libm
/// (math functions LLVM calls), libgcc_s (f16 conversion builtins), libc.
std::vector<std::string> linkLibraries(std::string &error) {
  std::vector<std::pair<const char *, const void *>> wanted = {
      {"libdisc_runtime.so",
       reinterpret_cast<const void *>(&ral::hostCpuFeatures)},
      {"libm", reinterpret_cast<const void *>(
                   static_cast<float (*)(float)>(&::expf))},
      {"libgcc_s", reinterpret_cast<const void *>(&_Unwind_GetIP)},
      {"libc", reinterpret_cast<const void *>(&::memcpy)},
  };
  std::vector<std::string> paths;
  for (auto [what, address] : wanted) {
    std::string path = libraryOf(address);
    if (path.empty() || !llvm::sys::fs::exists(path)) {
      error = std::string("cannot find the file of ") + what +
              " to link the shared object against";
      return {};
    }
    paths.push_back(path);
  }
  return paths;
}

class TempDir {
public:
  TempDir() {
    llvm::SmallString<128> path;
    if (!llvm::sys::fs::createUniqueDirectory("disc-link", path))
      dir = std::string(path);
  }
  ~TempDir() {
    if (!dir.empty())
      llvm::sys::fs::remove_directories(dir);
  }
  std::string dir;
};

} // namespace

llvm::Expected<std::string> emitObject(llvm::Module &module,
                                       llvm::TargetMachine &machine) {
  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream stream(object);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, stream, nullptr,
                                  llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError(
        "the target machine cannot emit object files");
  passes.run(module);
  return std::string(object.data(), object.size());
}

llvm::Expected<std::string> emitSharedObject(llvm::Module &module,
                                             llvm::TargetMachine &machine) {
  auto object = emitObject(module, machine);
  if (!object)
    return object.takeError();
  return linkSharedObject({*object});
}

llvm::Expected<std::string>
linkSharedObject(llvm::ArrayRef<std::string> objects) {
  std::string error;
  std::vector<std::string> libraries = linkLibraries(error);
  if (libraries.empty())
    return llvm::createStringError(error);
  TempDir temp;
  if (temp.dir.empty())
    return llvm::createStringError(
        "cannot create a temporary directory to link in");
  std::vector<std::string> objectPaths;
  for (size_t i = 0; i < objects.size(); ++i) {
    objectPaths.push_back(temp.dir + "/module" + std::to_string(i) + ".o");
    std::error_code ec;
    llvm::raw_fd_ostream out(objectPaths.back(), ec);
    if (ec)
      return llvm::createStringError("cannot write " + objectPaths.back() +
                                     ": " + ec.message());
    out.write(objects[i].data(), objects[i].size());
  }
  std::string outputPath = temp.dir + "/module.so";
  std::vector<const char *> args = {"ld.lld", "-shared", "--no-undefined",
                                    "-z", "noexecstack", "-z", "now",
                                    "--hash-style=gnu", "--build-id",
                                    "-o", outputPath.c_str()};
  for (const std::string &path : objectPaths)
    args.push_back(path.c_str());
  for (const std::string &library : libraries)
    args.push_back(library.c_str());
  std::string linkOutput;
  llvm::raw_string_ostream linkStream(linkOutput);
  lld::Result result;
  {
    // lld keeps global state: one link at a time.
    static std::mutex mutex;
    std::lock_guard<std::mutex> lock(mutex);
    result = lld::lldMain(args, linkStream, linkStream,
                          {{lld::Gnu, &lld::elf::link}});
  }
  if (result.retCode != 0)
    return llvm::createStringError("linking the shared object failed:\n" +
                                   linkOutput);
  auto buffer = llvm::MemoryBuffer::getFile(outputPath);
  if (!buffer)
    return llvm::createStringError("cannot read the linked shared object: " +
                                   buffer.getError().message());
  return std::string((*buffer)->getBuffer());
}

} // namespace disc
