//===- Artifact.cpp - the artifact file format ----------------------------===//
//
// Layout (docs/artifacts.md), little-endian:
//
//   header   "DISCARTF"  u32 formatVersion  u32 numSections  u64 totalSize
//   table    numSections x { char tag[4]; u32 zero; u64 offset; u64 size;
//                            u64 checksum }
//            u64 checksum of header + table
//   payloads at their offsets (64-byte aligned), each checksummed (FNV-1a)
//
// Sections: META (metadata), SIGN (signature), CODE (the shared object),
// WGHT (stored tensors). Every read is bounds-checked: a truncated or
// corrupted artifact is an ArtifactError, never a crash.
//
//===----------------------------------------------------------------------===//
#include "disc/Runtime/Artifact.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace disc {
namespace ral {

namespace {

constexpr char kMagic[8] = {'D', 'I', 'S', 'C', 'A', 'R', 'T', 'F'};
// 2: results carry the argument the code writes them into (intoArg).
constexpr uint32_t kFormatVersion = 2;
constexpr size_t kAlign = 64;
constexpr size_t kHeaderSize = 8 + 4 + 4 + 8;
constexpr size_t kEntrySize = 4 + 4 + 8 + 8 + 8;
constexpr uint32_t kMaxSections = 64;
constexpr uint64_t kMaxCount = 1u << 24; // any count field, a sanity bound

uint64_t fnv1a(const char *data, size_t size) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) {
    hash ^= static_cast<unsigned char>(data[i]);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

class Writer {
public:
  void u8(uint8_t v) { out.push_back(static_cast<char>(v)); }
  void u32(uint32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void i64(int64_t v) { raw(&v, 8); }
  void str(const std::string &s) {
    u64(s.size());
    out += s;
  }
  void raw(const void *p, size_t n) {
    out.append(static_cast<const char *>(p), n);
  }
  std::string out;
};

class Reader {
public:
  Reader(const char *data, size_t size, std::string what)
      : data(data), size(size), what(std::move(what)) {}
  uint8_t u8() {
    need(1);
    return static_cast<uint8_t>(data[pos++]);
  }
  uint32_t u32() {
    uint32_t v;
    copy(&v, 4);
    return v;
  }
  uint64_t u64() {
    uint64_t v;
    copy(&v, 8);
    return v;
  }
  int64_t i64() {
    int64_t v;
    copy(&v, 8);
    return v;
  }
  uint64_t count() {
    uint64_t n = u64();
    if (n > kMaxCount)
      fail("a count of " + std::to_string(n) + " is out of range");
    return n;
  }
  std::string str() {
    uint64_t n = u64();
    need(n);
    std::string s(data + pos, n);
    pos += n;
    return s;
  }
  bool atEnd() const { return pos == size; }
  [[noreturn]] void fail(const std::string &why) const {
    throw ArtifactError(what + ": " + why);
  }

private:
  void need(uint64_t n) {
    if (n > size - pos)
      fail("truncated (needs " + std::to_string(n) + " more bytes at offset " +
           std::to_string(pos) + " of " + std::to_string(size) + ")");
  }
  void copy(void *dst, size_t n) {
    need(n);
    std::memcpy(dst, data + pos, n);
    pos += n;
  }
  const char *data;
  size_t size;
  size_t pos = 0;
  std::string what;
};

DType readDType(Reader &r) {
  uint8_t v = r.u8();
  if (v > static_cast<uint8_t>(DType::U8))
    r.fail("unknown dtype code " + std::to_string(v));
  return static_cast<DType>(v);
}

std::string writeSignature(const Signature &sig) {
  Writer w;
  w.u64(sig.args.size());
  for (const ArgSpec &a : sig.args) {
    w.str(a.name);
    w.u8(static_cast<uint8_t>(a.dtype));
    w.u64(a.dims.size());
    for (size_t d = 0; d < a.dims.size(); ++d) {
      w.i64(a.dims[d]);
      w.i64(d < a.dimClass.size() ? a.dimClass[d] : -1);
      w.i64(d < a.minSize.size() ? a.minSize[d] : 0);
      w.i64(d < a.maxSize.size() ? a.maxSize[d] : -1);
    }
  }
  w.u64(sig.results.size());
  for (const ResultSpec &r : sig.results) {
    w.u8(static_cast<uint8_t>(r.dtype));
    w.i64(r.rank);
    w.i64(r.intoArg);
  }
  w.u64(sig.classes.size());
  for (const DimClass &c : sig.classes) {
    w.i64(c.staticSize);
    w.str(c.reason);
  }
  return w.out;
}

Signature readSignature(Reader &r) {
  Signature sig;
  uint64_t numArgs = r.count();
  for (uint64_t i = 0; i < numArgs; ++i) {
    ArgSpec a;
    a.name = r.str();
    a.dtype = readDType(r);
    uint64_t rank = r.count();
    for (uint64_t d = 0; d < rank; ++d) {
      a.dims.push_back(r.i64());
      a.dimClass.push_back(static_cast<int>(r.i64()));
      a.minSize.push_back(r.i64());
      a.maxSize.push_back(r.i64());
    }
    sig.args.push_back(std::move(a));
  }
  uint64_t numResults = r.count();
  for (uint64_t i = 0; i < numResults; ++i) {
    ResultSpec s;
    s.dtype = readDType(r);
    s.rank = r.i64();
    if (s.rank < 0 || s.rank > 64)
      r.fail("result " + std::to_string(i) + " has rank " +
             std::to_string(s.rank));
    s.intoArg = r.i64();
    sig.results.push_back(s);
  }
  uint64_t numClasses = r.count();
  for (uint64_t i = 0; i < numClasses; ++i) {
    DimClass c;
    c.staticSize = r.i64();
    c.reason = r.str();
    sig.classes.push_back(std::move(c));
  }
  // Cross-references: every class index in range, dims sane, results
  // written into arguments of their dtype and rank, one result each.
  std::vector<bool> argTaken(sig.args.size(), false);
  for (size_t i = 0; i < sig.results.size(); ++i) {
    const ResultSpec &s = sig.results[i];
    if (s.intoArg < 0)
      continue;
    if (s.intoArg >= static_cast<int64_t>(sig.args.size()))
      r.fail("result " + std::to_string(i) + " is written into argument " +
             std::to_string(s.intoArg) + " of " +
             std::to_string(sig.args.size()));
    const ArgSpec &a = sig.args[s.intoArg];
    if (a.dtype != s.dtype || static_cast<int64_t>(a.dims.size()) != s.rank)
      r.fail("result " + std::to_string(i) + " is written into argument " +
             std::to_string(s.intoArg) + " of another dtype or rank");
    if (argTaken[s.intoArg])
      r.fail("two results are written into argument " +
             std::to_string(s.intoArg));
    argTaken[s.intoArg] = true;
  }
  // Cross-references: every class index in range, dims sane.
  for (size_t i = 0; i < sig.args.size(); ++i)
    for (size_t d = 0; d < sig.args[i].dims.size(); ++d) {
      int cls = sig.args[i].dimClass[d];
      if (cls < -1 || cls >= static_cast<int>(sig.classes.size()))
        r.fail("argument " + std::to_string(i) + " names dim class " +
               std::to_string(cls) + " of " +
               std::to_string(sig.classes.size()));
      if (sig.args[i].dims[d] < -1)
        r.fail("argument " + std::to_string(i) + " has dim " +
               std::to_string(sig.args[i].dims[d]));
    }
  if (!r.atEnd())
    r.fail("trailing bytes in the signature");
  return sig;
}

std::string writeMetadata(const std::map<std::string, std::string> &meta) {
  Writer w;
  w.u64(meta.size());
  for (const auto &[key, value] : meta) {
    w.str(key);
    w.str(value);
  }
  return w.out;
}

std::string writeWeights(const std::vector<StoredTensor> &weights) {
  Writer w;
  w.u64(weights.size());
  for (const StoredTensor &t : weights) {
    w.i64(t.argIndex);
    w.str(t.name);
    w.u8(static_cast<uint8_t>(t.dtype));
    w.u64(t.shape.size());
    for (int64_t s : t.shape)
      w.i64(s);
    w.str(t.bytes);
  }
  return w.out;
}

std::vector<StoredTensor> readWeights(Reader &r, const Signature &sig) {
  std::vector<StoredTensor> weights;
  uint64_t n = r.count();
  std::vector<bool> seen(sig.args.size(), false);
  for (uint64_t i = 0; i < n; ++i) {
    StoredTensor t;
    t.argIndex = r.i64();
    t.name = r.str();
    t.dtype = readDType(r);
    uint64_t rank = r.count();
    int64_t elements = 1;
    for (uint64_t d = 0; d < rank; ++d) {
      int64_t s = r.i64();
      if (s < 0 || (s > 0 && elements > INT64_MAX / s))
        r.fail("weight '" + t.name + "' has a bad size " + std::to_string(s));
      elements *= s;
      t.shape.push_back(s);
    }
    t.bytes = r.str();
    if (t.argIndex < 0 || t.argIndex >= static_cast<int64_t>(sig.args.size()) ||
        seen[t.argIndex])
      r.fail("weight '" + t.name + "' is bound to argument " +
             std::to_string(t.argIndex) + ", which is out of range or taken");
    seen[t.argIndex] = true;
    if (t.bytes.size() != static_cast<uint64_t>(elements) * dtypeSize(t.dtype))
      r.fail("weight '" + t.name + "' holds " + std::to_string(t.bytes.size()) +
             " bytes for " + std::to_string(elements) + " elements of " +
             dtypeName(t.dtype));
    weights.push_back(std::move(t));
  }
  if (!r.atEnd())
    r.fail("trailing bytes in the weights");
  return weights;
}

} // namespace

const std::string &Artifact::meta(const std::string &key) const {
  static const std::string empty;
  auto it = metadata.find(key);
  return it == metadata.end() ? empty : it->second;
}

std::string Artifact::serialize() const {
  std::vector<std::pair<const char *, std::string>> sections;
  sections.emplace_back("META", writeMetadata(metadata));
  sections.emplace_back("SIGN", writeSignature(signature));
  sections.emplace_back("CODE", sharedObject);
  sections.emplace_back("WGHT", writeWeights(weights));

  auto alignUp = [](uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; };
  uint64_t offset = alignUp(kHeaderSize + sections.size() * kEntrySize + 8);
  std::vector<uint64_t> offsets;
  for (const auto &section : sections) {
    offsets.push_back(offset);
    offset = alignUp(offset + section.second.size());
  }
  const uint64_t total = offset;
  Writer w;
  w.raw(kMagic, 8);
  w.u32(kFormatVersion);
  w.u32(static_cast<uint32_t>(sections.size()));
  w.u64(total);
  for (size_t i = 0; i < sections.size(); ++i) {
    w.raw(sections[i].first, 4);
    w.u32(0);
    w.u64(offsets[i]);
    w.u64(sections[i].second.size());
    w.u64(fnv1a(sections[i].second.data(), sections[i].second.size()));
  }
  w.u64(fnv1a(w.out.data(), w.out.size()));
  for (size_t i = 0; i < sections.size(); ++i) {
    w.out.resize(offsets[i], '\0');
    w.out += sections[i].second;
  }
  w.out.resize(total, '\0');
  return w.out;
}

Artifact Artifact::parse(const std::string &bytes, const std::string &origin) {
  Reader header(bytes.data(), bytes.size(), origin);
  char magic[8];
  for (char &c : magic)
    c = static_cast<char>(header.u8());
  if (std::memcmp(magic, kMagic, 8) != 0)
    throw ArtifactError(origin + ": not a DISC artifact (bad magic)");
  uint32_t version = header.u32();
  if (version != kFormatVersion)
    throw ArtifactError(origin + ": artifact format version " +
                        std::to_string(version) + ", this runtime reads " +
                        std::to_string(kFormatVersion));
  uint32_t numSections = header.u32();
  if (numSections > kMaxSections)
    header.fail(std::to_string(numSections) + " sections");
  uint64_t total = header.u64();
  if (total != bytes.size())
    throw ArtifactError(origin + ": truncated or extended: the header says " +
                        std::to_string(total) + " bytes, the file has " +
                        std::to_string(bytes.size()));
  struct Entry {
    std::string tag;
    uint64_t offset, size, checksum;
  };
  std::vector<Entry> entries;
  for (uint32_t i = 0; i < numSections; ++i) {
    Entry e;
    for (int k = 0; k < 4; ++k)
      e.tag += static_cast<char>(header.u8());
    header.u32();
    e.offset = header.u64();
    e.size = header.u64();
    e.checksum = header.u64();
    entries.push_back(e);
  }
  const size_t headerBytes = kHeaderSize + numSections * kEntrySize;
  if (header.u64() != fnv1a(bytes.data(), headerBytes))
    throw ArtifactError(origin + ": corrupted (header checksum mismatch)");
  std::map<std::string, std::string> payloads;
  for (const Entry &e : entries) {
    if (e.offset > bytes.size() || e.size > bytes.size() - e.offset)
      throw ArtifactError(origin + ": section " + e.tag +
                          " lies outside the file");
    if (fnv1a(bytes.data() + e.offset, e.size) != e.checksum)
      throw ArtifactError(origin + ": corrupted (section " + e.tag +
                          " checksum mismatch)");
    payloads[e.tag] = bytes.substr(e.offset, e.size);
  }
  for (const char *tag : {"META", "SIGN", "CODE", "WGHT"})
    if (!payloads.count(tag))
      throw ArtifactError(origin + ": section " + tag + " is missing");

  Artifact artifact;
  {
    const std::string &p = payloads["META"];
    Reader r(p.data(), p.size(), origin + " (metadata)");
    uint64_t n = r.count();
    for (uint64_t i = 0; i < n; ++i) {
      std::string key = r.str();
      artifact.metadata[key] = r.str();
    }
    if (!r.atEnd())
      r.fail("trailing bytes in the metadata");
  }
  {
    const std::string &p = payloads["SIGN"];
    Reader r(p.data(), p.size(), origin + " (signature)");
    artifact.signature = readSignature(r);
  }
  artifact.sharedObject = std::move(payloads["CODE"]);
  {
    const std::string &p = payloads["WGHT"];
    Reader r(p.data(), p.size(), origin + " (weights)");
    artifact.weights = readWeights(r, artifact.signature);
  }
  return artifact;
}

Artifact Artifact::readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw ArtifactError(path + ": cannot open (" + std::strerror(errno) + ")");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad())
    throw ArtifactError(path + ": read error");
  return parse(buffer.str(), path);
}

void Artifact::writeFile(const std::string &path) const {
  std::string bytes = serialize();
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      throw ArtifactError(path + ": cannot write (" + std::strerror(errno) +
                          ")");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw ArtifactError(path + ": write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(tmp.c_str());
    throw ArtifactError(path + ": cannot rename into place (" +
                        std::strerror(err) + ")");
  }
}

std::string hostCpuFeatures() {
  std::vector<std::string> have;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
#define DISC_FEATURE(LLVM_NAME, GCC_NAME)                                      \
  if (__builtin_cpu_supports(GCC_NAME))                                        \
    have.push_back(LLVM_NAME);
  DISC_FEATURE("avx", "avx")
  DISC_FEATURE("avx2", "avx2")
  DISC_FEATURE("avx512bf16", "avx512bf16")
  DISC_FEATURE("avx512bitalg", "avx512bitalg")
  DISC_FEATURE("avx512bw", "avx512bw")
  DISC_FEATURE("avx512cd", "avx512cd")
  DISC_FEATURE("avx512dq", "avx512dq")
  DISC_FEATURE("avx512f", "avx512f")
  DISC_FEATURE("avx512fp16", "avx512fp16")
  DISC_FEATURE("avx512ifma", "avx512ifma")
  DISC_FEATURE("avx512vbmi", "avx512vbmi")
  DISC_FEATURE("avx512vbmi2", "avx512vbmi2")
  DISC_FEATURE("avx512vl", "avx512vl")
  DISC_FEATURE("avx512vnni", "avx512vnni")
  DISC_FEATURE("avx512vpopcntdq", "avx512vpopcntdq")
  DISC_FEATURE("bmi", "bmi")
  DISC_FEATURE("bmi2", "bmi2")
  DISC_FEATURE("f16c", "f16c")
  DISC_FEATURE("fma", "fma")
  DISC_FEATURE("gfni", "gfni")
  DISC_FEATURE("popcnt", "popcnt")
  DISC_FEATURE("sse3", "sse3")
  DISC_FEATURE("sse4.1", "sse4.1")
  DISC_FEATURE("sse4.2", "sse4.2")
  DISC_FEATURE("ssse3", "ssse3")
  DISC_FEATURE("vaes", "vaes")
  DISC_FEATURE("vpclmulqdq", "vpclmulqdq")
#undef DISC_FEATURE
#endif
  std::string joined;
  for (const std::string &f : have)
    joined += (joined.empty() ? "" : ",") + f;
  return joined;
}

} // namespace ral
} // namespace disc
