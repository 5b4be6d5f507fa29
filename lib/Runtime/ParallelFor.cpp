//===- ParallelFor.cpp - the runtime's parallel loop launcher -------------===//
//
// Compiled kernels hand their outer loop to disc_ral_parallel_for (see
// disc-parallelize-loops / disc-ral-lower-parallel-for in the compiler).
// Threads come from OpenMP: the same runtime (GNU libgomp) Debian's oneDNN
// uses, so library calls and generated loops share one thread pool instead
// of two pools competing for the cores.
//
//===----------------------------------------------------------------------===//

#include "disc/Runtime/RalApi.h"
#include "disc/Runtime/Runtime.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>

#ifdef DISC_RAL_HAS_OPENMP
#include <omp.h>
#endif

namespace disc {
namespace ral {

namespace {

std::atomic<int64_t> parallelLaunches{0};
std::atomic<int64_t> serialRuns{0};
std::atomic<int64_t> rowsPerThread{0};
std::atomic<int64_t> rowsPerBlock{0};
std::atomic<int64_t> vectorGrids{0};
std::atomic<int64_t> scalarGrids{0};
std::atomic<int64_t> columnSplits{0};
std::atomic<int64_t> columnsPerThread{0};
std::atomic<int64_t> rowsPerWarp{0};
std::atomic<int64_t> index32Grids{0};
std::atomic<int64_t> index64Grids{0};
std::atomic<int64_t> vectorRows{0};
std::atomic<int64_t> scalarRows{0};
std::atomic<int64_t> cachedRows{0};
std::atomic<int64_t> uncachedRows{0};
std::atomic<int64_t> linearVectorGrids{0};

/// Threads for loops launched on this thread: set per call by
/// ThreadsForCall (the Context's numThreads), else OpenMP's default.
thread_local int callThreads = 0;

int64_t minWorkPerThread() {
  static const int64_t value = [] {
    const char *env = std::getenv("DISC_PARALLEL_MIN_WORK");
    int64_t parsed = env ? std::atoll(env) : 0;
    return parsed > 0 ? parsed : int64_t(32768);
  }();
  return value;
}

} // namespace

int currentThreadCount() {
#ifdef DISC_RAL_HAS_OPENMP
  return callThreads > 0 ? callThreads : omp_get_max_threads();
#else
  return 1; // no threads to split across: every launch is a serial run
#endif
}

ThreadsForCall::ThreadsForCall(int numThreads) : previous(callThreads) {
  if (numThreads <= 0)
    return;
  callThreads = numThreads;
#ifdef DISC_RAL_HAS_OPENMP
  const int current = omp_get_max_threads();
  if (current != numThreads) {
    previousOpenMp = current;
    omp_set_num_threads(numThreads);
  }
#endif
}

ThreadsForCall::~ThreadsForCall() {
  callThreads = previous;
#ifdef DISC_RAL_HAS_OPENMP
  if (previousOpenMp > 0)
    omp_set_num_threads(previousOpenMp);
#endif
}

int threadsForWork(int64_t units, int64_t workPerUnit, int threads) {
  if (units <= 1 || threads <= 1)
    return 1;
  const int64_t work = std::max<int64_t>(workPerUnit, 1);
  // Saturating units * work / minimum.
  const int64_t minimum = minWorkPerThread();
  int64_t byWork = units > INT64_MAX / work ? INT64_MAX / minimum
                                            : units * work / minimum;
  int64_t chosen = std::min<int64_t>({threads, units, byWork});
  return static_cast<int>(std::max<int64_t>(chosen, 1));
}

ParallelStats parallelStats() {
  return {parallelLaunches.load(), serialRuns.load()};
}

RowVariantStats rowVariantStats() {
  return {rowsPerThread.load(), rowsPerBlock.load(), vectorGrids.load(),
          scalarGrids.load(), columnSplits.load(), columnsPerThread.load(),
          rowsPerWarp.load(), index32Grids.load(), index64Grids.load(),
          vectorRows.load(), scalarRows.load(), cachedRows.load(),
          uncachedRows.load(), linearVectorGrids.load()};
}

} // namespace ral
} // namespace disc

using namespace disc::ral;

extern "C" void disc_ral_note_variant(int64_t variant) {
  if (variant == 0)
    rowsPerThread.fetch_add(1, std::memory_order_relaxed);
  else if (variant == 1)
    rowsPerBlock.fetch_add(1, std::memory_order_relaxed);
  else if (variant == 2)
    vectorGrids.fetch_add(1, std::memory_order_relaxed);
  else if (variant == 3)
    scalarGrids.fetch_add(1, std::memory_order_relaxed);
  else if (variant == 4)
    columnSplits.fetch_add(1, std::memory_order_relaxed);
  else if (variant == 5)
    columnsPerThread.fetch_add(1, std::memory_order_relaxed);
  else if (variant == 6)
    rowsPerWarp.fetch_add(1, std::memory_order_relaxed);
  else if (variant == 7)
    index32Grids.fetch_add(1, std::memory_order_relaxed);
  else if (variant == 8)
    index64Grids.fetch_add(1, std::memory_order_relaxed);
  else if (variant == 9)
    vectorRows.fetch_add(1, std::memory_order_relaxed);
  else if (variant == 10)
    scalarRows.fetch_add(1, std::memory_order_relaxed);
  else if (variant == 11)
    cachedRows.fetch_add(1, std::memory_order_relaxed);
  else if (variant == 12)
    uncachedRows.fetch_add(1, std::memory_order_relaxed);
  else if (variant == 13) { // a vector grid with linear lanes
    vectorGrids.fetch_add(1, std::memory_order_relaxed);
    linearVectorGrids.fetch_add(1, std::memory_order_relaxed);
  }
}

extern "C" void disc_ral_parallel_for(void (*fn)(void *, int64_t, int64_t),
                                      void *args, int64_t units,
                                      int64_t work) {
  if (units <= 0)
    return;
  const int threads = threadsForWork(units, work, currentThreadCount());
  if (threads <= 1) {
    serialRuns.fetch_add(1, std::memory_order_relaxed);
    fn(args, 0, units);
    return;
  }
  parallelLaunches.fetch_add(1, std::memory_order_relaxed);
#ifdef DISC_RAL_HAS_OPENMP
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
    // Units split evenly; the first units % n threads take one more.
    const int64_t base = units / n, extra = units % n;
    const int64_t lo = t * base + std::min(t, extra);
    const int64_t hi = lo + base + (t < extra ? 1 : 0);
    if (lo < hi)
      fn(args, lo, hi);
  }
#else
  fn(args, 0, units);
#endif
}
