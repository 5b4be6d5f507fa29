//===- Profile.cpp - per-kernel wall time (DISC_PROFILE=1) ----------------===//
//
// Compiled with DISC_PROFILE=1, the entry function brackets every kernel,
// library call and copy with disc_ral_profile_begin/end and a constant name.
// This file adds up calls and wall time per name, process-wide.
//
//===----------------------------------------------------------------------===//
#include "ExecutionContext.h"
#include "disc/Runtime/RalApi.h"
#include "disc/Runtime/Runtime.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <unordered_map>

namespace disc {
namespace ral {
namespace {

struct ProfileTable {
  std::mutex mutex;
  std::unordered_map<std::string, ProfileEntry> entries;
};

ProfileTable &profileTable() {
  static ProfileTable *table = new ProfileTable; // outlives static dtors
  return *table;
}

int64_t nowNanoseconds() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

} // namespace

std::vector<ProfileEntry> profileEntries() {
  ProfileTable &table = profileTable();
  std::vector<ProfileEntry> result;
  {
    std::lock_guard<std::mutex> lock(table.mutex);
    for (const auto &entry : table.entries)
      result.push_back(entry.second);
  }
  std::sort(result.begin(), result.end(),
            [](const ProfileEntry &a, const ProfileEntry &b) {
              return a.seconds != b.seconds ? a.seconds > b.seconds
                                            : a.name < b.name;
            });
  return result;
}

void resetProfile() {
  ProfileTable &table = profileTable();
  std::lock_guard<std::mutex> lock(table.mutex);
  table.entries.clear();
}

} // namespace ral
} // namespace disc

using disc::ral::ExecutionContext;

extern "C" {

void disc_ral_profile_begin(void *ctx, const char *name) {
  ExecutionContext *ectx = disc::ral::asExecutionContext(ctx);
  (void)name;
  ectx->profileStartNs = disc::ral::nowNanoseconds();
}

void disc_ral_profile_end(void *ctx, const char *name) {
  const int64_t end = disc::ral::nowNanoseconds();
  ExecutionContext *ectx = disc::ral::asExecutionContext(ctx);
  const double seconds = (end - ectx->profileStartNs) * 1e-9;
  disc::ral::ProfileTable &table = disc::ral::profileTable();
  std::lock_guard<std::mutex> lock(table.mutex);
  disc::ral::ProfileEntry &entry = table.entries[name ? name : "(unnamed)"];
  if (entry.calls == 0)
    entry.name = name ? name : "(unnamed)";
  ++entry.calls;
  entry.seconds += seconds;
}

} // extern "C"
