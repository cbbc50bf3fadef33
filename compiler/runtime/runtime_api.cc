// The C functions of lathe_runtime.h, and the life of the process-wide pool.
//
// Life cycle of the pool (one per copy of the runtime, i.e. per executable or
// per shared library that embeds it with hidden symbols):
//  1. Created on the first parallel loop that needs more than one thread.
//  2. Resized at the start of a loop when lathe_set_num_threads changed.
//  3. In a fork()ed child, forgotten (pthread_atfork): its threads do not
//     exist there, so joining them would hang and waking them would deadlock.
//     The child builds a fresh pool on first use; the old one is leaked.
//  4. Joined by a destructor function when the process exits or when the
//     shared library holding the runtime is dlclose'd. It is a
//     __attribute__((destructor)), not a C++ static object, because those run
//     after every C++ static destructor and atexit handler of the program:
//     user code that calls kernels from its own static destructors still
//     finds the pool. After shutdown, loops run serially. For dlclose the
//     join is what makes unloading safe: no worker may still execute code of
//     the library when it is unmapped.
//
// Tests: tests/compiler/runtime/ (parallel_for_test.cc, thread_count_test.cc,
// lifecycle_test.cc, alloc_test.cc, model_constants_test.cc, c_abi_test.c).
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>

#include "compiler/runtime/cpu_affinity.h"
#include "compiler/runtime/lathe_runtime.h"
#include "compiler/runtime/model_constants.h"
#include "compiler/runtime/scratch_cache.h"
#include "compiler/runtime/thread_pool.h"

#ifndef LATHE_RUNTIME_VERSION_STRING
#define LATHE_RUNTIME_VERSION_STRING "unknown"
#endif

namespace lathe::runtime {
namespace {

// All constant-initialized and trivially destructible, so they are valid
// before any constructor and after every destructor of the program.
pthread_mutex_t g_call_mutex = PTHREAD_MUTEX_INITIALIZER;
ThreadPool* g_pool = nullptr;  // guarded by g_call_mutex
bool g_shut_down = false;      // guarded by g_call_mutex
pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;
// The thread count of later loops; 0 until the default is first resolved.
std::atomic<int> g_num_threads{0};

// A positive integer from the environment, or 0 if unset or malformed.
long PositiveEnv(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return 0;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || value <= 0) return 0;
  return value;
}

int Clamp(long n) {
  return n > LATHE_RUNTIME_MAX_THREADS ? LATHE_RUNTIME_MAX_THREADS
                                       : static_cast<int>(n);
}

int DefaultNumThreads() {
  const long from_env = PositiveEnv("LATHE_NUM_THREADS");
  if (from_env > 0) return Clamp(from_env);
  int num_cpus = 0;
  ProcessCpus(&num_cpus);
  return num_cpus;
}

void ForgetPoolInChild() {
  // Only async-signal-safe work here. The mutex may have been held by a
  // thread that does not exist in the child: re-initialize it.
  g_pool = nullptr;
  g_call_mutex = PTHREAD_MUTEX_INITIALIZER;
  ResetScratchLockInChild();
  ResetModelConstantsLockInChild();
}

void RegisterAtFork() {
  // glibc records the calling DSO with the handler and drops it on dlclose.
  pthread_atfork(nullptr, nullptr, &ForgetPoolInChild);
}

ThreadPool* GetPoolLocked() {
  if (g_shut_down) return nullptr;
  if (g_pool == nullptr) {
    pthread_once(&g_atfork_once, &RegisterAtFork);
    PoolOptions options;
    options.cpus = ProcessCpus(&options.num_cpus);
    options.pin = PositiveEnv("LATHE_PIN_THREADS") > 0;
    // LATHE_SPIN_US=0 is meaningful (never spin), so read it by hand.
    const char* spin_us = std::getenv("LATHE_SPIN_US");
    if (spin_us != nullptr && *spin_us != '\0') {
      // At most a second, so that the product (and the deadline the pool
      // adds it to) cannot overflow; garbage and negatives mean 0.
      char* end = nullptr;
      const long long us = std::strtoll(spin_us, &end, 10);
      if (end != spin_us && *end == '\0' && us > 0) {
        options.spin_ns = std::min<long long>(us, 1000000) * 1000;
      } else {
        options.spin_ns = 0;
      }
    }
    g_pool = ThreadPool::Create(options);
  }
  return g_pool;
}

// Step 4 of the life cycle above.
__attribute__((destructor)) void ShutDownPool() {
  // exit() called from inside a task: the pool is busy with this very loop.
  // Leave it; the process ends its threads.
  if (InParallelRegion()) return;
  // Another application thread may still be in a loop; give it a second.
  // If it is stuck, leave the pool rather than hang the exit.
  timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 1;
  if (pthread_mutex_timedlock(&g_call_mutex, &deadline) != 0) return;
  ThreadPool* pool = g_pool;
  g_pool = nullptr;
  g_shut_down = true;
  ThreadPool::Destroy(pool);
  pthread_mutex_unlock(&g_call_mutex);
  // For dlclose: nothing of the library's may outlive it. (A kernel called
  // later, from a static destructor, keeps its scratch again: the exit
  // takes it.)
  ReleaseScratch();
}

}  // namespace
}  // namespace lathe::runtime

using lathe::runtime::InParallelRegion;
using lathe::runtime::RunSerially;
using lathe::runtime::ThreadPool;

extern "C" {

int lathe_parallel_for(int64_t num_tasks, lathe_task_fn fn, void* closure) {
  if (num_tasks <= 0) return 0;
  if (fn == nullptr) return -1;
  // Nested, single-task and single-thread loops never touch the pool (nor
  // its mutex): they cost a function call per task.
  if (num_tasks == 1 || InParallelRegion()) {
    return RunSerially(num_tasks, fn, closure);
  }
  const int num_threads = lathe_get_num_threads();
  if (num_threads <= 1) return RunSerially(num_tasks, fn, closure);

  pthread_mutex_lock(&lathe::runtime::g_call_mutex);
  ThreadPool* pool = lathe::runtime::GetPoolLocked();
  int result;
  if (pool == nullptr) {  // after shutdown, or out of memory
    result = RunSerially(num_tasks, fn, closure);
  } else {
    pool->Resize(num_threads - 1);
    result = pool->Run(num_threads, num_tasks, fn, closure);
  }
  pthread_mutex_unlock(&lathe::runtime::g_call_mutex);
  return result;
}

void lathe_set_num_threads(int n) {
  lathe::runtime::g_num_threads.store(
      n > 0 ? lathe::runtime::Clamp(n) : lathe::runtime::DefaultNumThreads(),
      std::memory_order_relaxed);
}

int lathe_get_num_threads(void) {
  int n = lathe::runtime::g_num_threads.load(std::memory_order_relaxed);
  if (n > 0) return n;
  int unresolved = 0;
  lathe::runtime::g_num_threads.compare_exchange_strong(
      unresolved, lathe::runtime::DefaultNumThreads(),
      std::memory_order_relaxed);
  return lathe::runtime::g_num_threads.load(std::memory_order_relaxed);
}

void* lathe_alloc(uint64_t bytes, uint64_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) return nullptr;
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  // A unique, freeable pointer even for 0 bytes (aligned_alloc may return
  // NULL for 0, which a kernel would take for out-of-memory).
  if (bytes == 0) bytes = alignment;
  if (bytes > UINT64_MAX - (alignment - 1)) return nullptr;
  const uint64_t size = (bytes + alignment - 1) & ~(alignment - 1);
  if (size > SIZE_MAX) return nullptr;
  if (void* kept = lathe::runtime::TakeScratch(size, alignment)) return kept;
  // The lock of the scratch kept is reset in a fork()ed child, like the
  // pool's.
  pthread_once(&lathe::runtime::g_atfork_once, &lathe::runtime::RegisterAtFork);
  return std::aligned_alloc(static_cast<size_t>(alignment),
                            static_cast<size_t>(size));
}

void lathe_free(void* p) {
  if (!lathe::runtime::KeepScratch(p)) std::free(p);
}

void lathe_release_scratch(void) { lathe::runtime::ReleaseScratch(); }

const void* lathe_model_constants(const void* image, void* space,
                                  uint64_t bytes, const void** where) {
  // Its lock is reset in a fork()ed child, like the pool's.
  pthread_once(&lathe::runtime::g_atfork_once, &lathe::runtime::RegisterAtFork);
  return lathe::runtime::ModelConstants(image, space, bytes, where,
                                        lathe::runtime::kThpModeFile);
}

const char* lathe_runtime_version(void) { return LATHE_RUNTIME_VERSION_STRING; }

}  // extern "C"
