//===- Program.cpp - load an artifact's shared object and run it ----------===//
//
// The shared object is written to a uniquely named temporary file (TMPDIR,
// else /tmp), opened with dlopen and unlinked at once; where that directory
// cannot hold executable mappings, an anonymous memory file (memfd) serves.
// Its undefined symbols are the runtime's entry points (disc_ral_*), which
// the dynamic loader resolves against this library (the shared object
// names libdisc_runtime.so as a dependency; the copy already loaded in the
// process is the one it gets), and libc/libm/libgcc functions.
//
//===----------------------------------------------------------------------===//
#include "disc/Runtime/Artifact.h"

#include "Cuda/CudaRal.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace disc {
namespace ral {

/// The packed entry every artifact's shared object defines (the compiler
/// emits it: void disc_entry(void **args), the convention of Runtime.h).
static constexpr const char *kEntrySymbol = "disc_entry";

std::shared_ptr<Context> defaultContext() {
  static std::shared_ptr<Context> context = Context::create();
  return context;
}

namespace {

bool writeAll(int fd, const std::string &bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

/// dlopen of `bytes` as a shared object. Returns the handle, or null with
/// `error` set. `keepFd` is an fd that must stay open while the handle
/// lives (memfd), or -1.
void *openSharedObject(const std::string &bytes, std::string &error,
                       int &keepFd) {
  static std::atomic<uint64_t> counter{0};
  keepFd = -1;
  const char *tmpdir = std::getenv("TMPDIR");
  std::string dir = tmpdir && *tmpdir ? tmpdir : "/tmp";
  // A name unique in this process for its whole life: the dynamic loader
  // reuses a loaded object whose name matches.
  std::string path = dir + "/disc-" + std::to_string(getpid()) + "-" +
                     std::to_string(counter++) + "-XXXXXX";
  std::vector<char> name(path.begin(), path.end());
  name.push_back('\0');
  int fd = mkstemp(name.data());
  if (fd >= 0) {
    bool written = writeAll(fd, bytes);
    ::close(fd);
    void *handle = written ? dlopen(name.data(), RTLD_NOW | RTLD_LOCAL)
                           : nullptr;
    std::string why = written ? (handle ? "" : dlerror()) : "write failed";
    // DISC_PERF=1 keeps the file, so that `perf report` can read the
    // kernels' symbols (docs/debugging.md).
    static const bool keep = std::getenv("DISC_PERF") != nullptr;
    if (!keep || !handle)
      ::unlink(name.data());
    if (handle)
      return handle;
    error = why;
  } else {
    error = "cannot create a file in " + dir + ": " + std::strerror(errno);
  }
  // No file (or a noexec directory): an anonymous memory file.
  int mfd = memfd_create("disc-artifact", MFD_CLOEXEC);
  if (mfd < 0)
    return nullptr;
  if (!writeAll(mfd, bytes)) {
    ::close(mfd);
    return nullptr;
  }
  std::string procPath = "/proc/self/fd/" + std::to_string(mfd);
  void *handle = dlopen(procPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    error += std::string("; from memory: ") + dlerror();
    ::close(mfd);
    return nullptr;
  }
  keepFd = mfd;
  return handle;
}

std::vector<std::string> splitList(const std::string &s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos)
      end = s.size();
    if (end > start)
      out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

} // namespace

struct Program::Impl {
  Artifact artifact;
  std::shared_ptr<Context> context;
  void *handle = nullptr;
  int memfd = -1;
  PackedFunction function = nullptr;
  Device device = Device::Cpu;
  std::shared_ptr<CudaModuleCache> cudaModules;
  Signature callerSignature;
  /// Per argument of the full signature: the stored weight's index, or -1.
  std::vector<int64_t> weightOf;
  /// Weights copied into 64-byte aligned memory (the artifact's bytes are
  /// not aligned).
  std::vector<std::shared_ptr<void>> weightData;
  double loadSeconds = 0;

  ~Impl() {
    // Kernel modules first: they reference the images in the object.
    cudaModules.reset();
    if (handle)
      dlclose(handle);
    if (memfd >= 0)
      ::close(memfd);
  }
};

Program::Program() : impl(std::make_unique<Impl>()) {}
Program::~Program() = default;

std::shared_ptr<Program> Program::load(Artifact artifact,
                                       std::shared_ptr<Context> context) {
  auto start = std::chrono::steady_clock::now();
  auto program = std::shared_ptr<Program>(new Program());
  Impl &p = *program->impl;
  const std::string &target = artifact.meta("target");
  if (target == "cpu") {
    p.device = Device::Cpu;
  } else if (target == "cuda") {
    p.device = Device::Cuda;
    p.cudaModules = makeCudaModuleCache();
  } else {
    throw ArtifactError("the artifact's target is '" + target +
                        "'; this runtime runs cpu and cuda artifacts");
  }
  std::vector<std::string> missing;
  std::vector<std::string> have = splitList(hostCpuFeatures());
  for (const std::string &feature : splitList(artifact.meta("cpu.features")))
    if (std::find(have.begin(), have.end(), feature) == have.end())
      missing.push_back(feature);
  if (!missing.empty()) {
    std::string list;
    for (const std::string &f : missing)
      list += (list.empty() ? "" : ", ") + f;
    throw ArtifactError("this CPU lacks features the artifact's code uses (" +
                        list + "): export it on (or for) a machine like this "
                        "one");
  }
  if (artifact.sharedObject.empty())
    throw ArtifactError("the artifact holds no code");
  std::string error;
  p.handle = openSharedObject(artifact.sharedObject, error, p.memfd);
  if (!p.handle)
    throw ArtifactError("cannot load the artifact's shared object: " + error);
  p.function =
      reinterpret_cast<PackedFunction>(dlsym(p.handle, kEntrySymbol));
  if (!p.function)
    throw ArtifactError(std::string("the artifact's shared object has no ") +
                        kEntrySymbol);

  const Signature &full = artifact.signature;
  p.weightOf.assign(full.args.size(), -1);
  for (size_t w = 0; w < artifact.weights.size(); ++w)
    p.weightOf[artifact.weights[w].argIndex] = static_cast<int64_t>(w);
  p.callerSignature.results = full.results;
  p.callerSignature.classes = full.classes;
  std::vector<int64_t> callerIndexOf(full.args.size(), -1);
  for (size_t i = 0; i < full.args.size(); ++i)
    if (p.weightOf[i] < 0) {
      callerIndexOf[i] =
          static_cast<int64_t>(p.callerSignature.args.size());
      p.callerSignature.args.push_back(full.args[i]);
    }
  // Results written into arguments, numbered as the caller numbers them.
  // Stored weights are shared by every call: never written.
  for (size_t r = 0; r < full.results.size(); ++r) {
    const int64_t k = full.results[r].intoArg;
    if (k < 0)
      continue;
    if (callerIndexOf[k] < 0)
      throw ArtifactError("result " + std::to_string(r) +
                          " is written into a stored weight (argument " +
                          std::to_string(k) + "), which is not supported");
    p.callerSignature.results[r].intoArg = callerIndexOf[k];
  }
  for (StoredTensor &weight : artifact.weights) {
    void *data = context->allocator().allocate(weight.bytes.size());
    std::memcpy(data, weight.bytes.data(), weight.bytes.size());
    p.weightData.emplace_back(data, [context](void *ptr) {
      context->allocator().deallocate(ptr);
    });
    weight.bytes.clear();
    weight.bytes.shrink_to_fit();
  }
  if (p.device == Device::Cuda && !artifact.weights.empty())
    throw ArtifactError("stored weights are not supported for cuda "
                        "artifacts yet");
  artifact.sharedObject.clear(); // mapped now; the bytes are not needed
  artifact.sharedObject.shrink_to_fit();
  p.artifact = std::move(artifact);
  p.context = std::move(context);
  p.loadSeconds = std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  return program;
}

std::vector<OutputTensor> Program::run(const std::vector<TensorView> &inputs,
                                       void *cudaStream,
                                       const std::vector<int64_t> &resultsInto,
                                       const std::vector<int64_t> &shareGroups,
                                       Float32Math float32Math,
                                       std::shared_ptr<DeviceAllocator>
                                           deviceAllocator) const {
  InvokeOptions options;
  options.deviceAllocator = std::move(deviceAllocator);
  options.device = impl->device;
  options.cudaStream = cudaStream;
  options.float32Math = float32Math;
  options.cudaModules = impl->cudaModules.get();
  options.resultsInto = resultsInto;
  options.resultShareGroups = shareGroups;
  if (impl->artifact.weights.empty())
    return invoke(*impl->context, impl->function, impl->artifact.signature,
                  inputs, options);
  const Signature &full = impl->artifact.signature;
  // The caller's arguments first, so that errors number them as the
  // caller does; then the whole call (relations with the weights).
  checkInputs(impl->callerSignature, inputs);
  std::vector<TensorView> all;
  all.reserve(full.args.size());
  // resultsInto names caller arguments; invoke() numbers all of them.
  std::vector<int64_t> fullIndexOf;
  size_t next = 0;
  for (size_t i = 0; i < full.args.size(); ++i) {
    int64_t w = impl->weightOf[i];
    if (w < 0) {
      fullIndexOf.push_back(static_cast<int64_t>(i));
      all.push_back(inputs[next++]);
      continue;
    }
    const StoredTensor &weight = impl->artifact.weights[w];
    TensorView view;
    view.data = impl->weightData[w].get();
    view.dtype = weight.dtype;
    view.shape = weight.shape;
    all.push_back(std::move(view));
  }
  for (int64_t &into : options.resultsInto)
    if (into >= 0 && into < static_cast<int64_t>(fullIndexOf.size()))
      into = fullIndexOf[into];
    else if (into >= 0)
      throw InvocationError("a result is to be written into argument " +
                            std::to_string(into) + ", but the call has " +
                            std::to_string(fullIndexOf.size()) + " arguments");
  return invoke(*impl->context, impl->function, full, all, options);
}

Device Program::device() const { return impl->device; }
const Signature &Program::signature() const {
  return impl->artifact.signature;
}
const Signature &Program::callerSignature() const {
  return impl->artifact.weights.empty() ? impl->artifact.signature
                                        : impl->callerSignature;
}
const Artifact &Program::artifact() const { return impl->artifact; }
double Program::loadSeconds() const { return impl->loadSeconds; }

} // namespace ral
} // namespace disc
