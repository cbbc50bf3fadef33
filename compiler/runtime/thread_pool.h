// The thread pool behind lathe_parallel_for: persistent workers, one mailbox
// each, static contiguous chunking.
//
// Why this shape (the per-call overhead is paid on every kernel invocation,
// so it must stay in the microseconds):
//  - Each worker owns a cache-line-sized mailbox (a sequence number and its
//    task range). A call writes the ranges, bumps the sequence numbers of the
//    workers it needs and enters the kernel (futex wake) only for workers that
//    said they were asleep. Workers that a small loop does not need are not
//    touched at all.
//  - An idle worker spins for a short while (LATHE_SPIN_US, 100 us by
//    default) before sleeping on its sequence number, so back-to-back kernel
//    calls hand off in well under a microsecond. With more threads than
//    allowed CPUs nobody spins: a spinning thread would steal the CPU from a
//    thread that has work.
//  - The caller is thread 0 and runs the first chunk itself, then waits for a
//    single counter of unfinished workers (spin, then futex).
//
// The class is not reentrant: one Run at a time (the C API serializes callers
// with a mutex). It uses no libstdc++ (pthreads, malloc, atomics only) so
// that the runtime links into C programs; see compiler/runtime/CMakeLists.txt.
// Private to compiler/runtime/. Tests: tests/compiler/runtime/.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>

#include "compiler/runtime/lathe_runtime.h"

namespace lathe::runtime {

// The range [*begin, *end) of tasks that thread `thread` of `num_threads`
// runs in a loop of num_tasks tasks: contiguous, in thread order, sizes
// differing by at most one (the first num_tasks % num_threads are longer).
// Requires 0 <= thread < num_threads and num_tasks >= 0.
inline void StaticChunk(int64_t num_tasks, int num_threads, int thread,
                        int64_t* begin, int64_t* end) {
  // q and r, not num_tasks * thread / num_threads: the product could
  // overflow for huge loops.
  const int64_t q = num_tasks / num_threads;
  const int64_t r = num_tasks % num_threads;
  *begin = thread * q + (thread < r ? thread : r);
  *end = *begin + q + (thread < r ? 1 : 0);
}

// True while the calling thread is running tasks of a parallel loop (always
// true on pool workers). A parallel loop started there runs serially.
bool InParallelRegion();

// Runs tasks [0, num_tasks) in order in the calling thread, stopping at the
// first failure and returning its code (0 if none). Marks the thread as in a
// parallel region meanwhile, so nesting behaves as with a pool.
int RunSerially(int64_t num_tasks, lathe_task_fn fn, void* closure);

struct PoolOptions {
  // The CPUs threads may be pinned to (thread i to cpus[i % num_cpus]);
  // num_cpus also decides whether idle threads spin. Copied by Create.
  const int* cpus = nullptr;
  int num_cpus = 1;
  bool pin = false;
  int64_t spin_ns = 100 * 1000;
};

class ThreadPool {
 public:
  // Pool threads besides the caller; LATHE_RUNTIME_MAX_THREADS in all.
  static constexpr int kMaxWorkers = LATHE_RUNTIME_MAX_THREADS - 1;

  // A pool with no workers yet (Resize starts them). nullptr if out of
  // memory.
  static ThreadPool* Create(const PoolOptions& options);
  // Stops and joins every worker, then frees the pool. Must not be called
  // from a pool worker or while Run is in progress.
  static void Destroy(ThreadPool* pool);

  // Starts or stops (joins) workers until there are num_workers (clamped to
  // [0, kMaxWorkers]). Returns the number running, which is lower if the
  // system refused to create a thread. Not concurrently with Run.
  int Resize(int num_workers);
  int num_workers() const { return num_workers_; }

  // Runs fn over [0, num_tasks) on min(num_threads, num_workers() + 1,
  // num_tasks) threads, the caller being thread 0, with the chunking and
  // error rules of lathe_parallel_for. Requires num_tasks >= 1 and fn.
  int Run(int num_threads, int64_t num_tasks, lathe_task_fn fn, void* closure);

  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

 private:
  // What every thread of the current loop reads; written by the caller before
  // it publishes work (the mailbox's release store orders it).
  struct alignas(128) Job {
    lathe_task_fn fn = nullptr;
    void* closure = nullptr;
    // The lowest task index that failed so far; tasks above it are skipped.
    std::atomic<int64_t> first_failed_task{INT64_MAX};
  };

  // One worker's mailbox. 128-byte aligned: two lines, because adjacent-line
  // prefetchers make 64-byte neighbours interfere.
  struct alignas(128) Worker {
    // Bumped by the caller to hand out work (or to stop); the worker sleeps
    // on it.
    std::atomic<uint32_t> seq{0};
    // Non-zero while the worker is (about to be) asleep on seq.
    std::atomic<uint32_t> sleeping{0};
    // Written by the caller before bumping seq.
    int64_t begin = 0;
    int64_t end = 0;
    bool stop = false;
    // Written by the worker before it counts itself done.
    int64_t failed_task = INT64_MAX;
    int failed_code = 0;
    // Fixed at start.
    ThreadPool* pool = nullptr;
    int thread_index = 0;  // in the loop: workers are threads 1, 2, ...
    pthread_t thread{};
  };

  explicit ThreadPool(const PoolOptions& options, int* cpus, Worker* workers);
  ~ThreadPool() = default;

  static void* WorkerMain(void* arg);
  // Returns the new seq once it differs from `seen`.
  uint32_t WaitForWork(Worker* worker, uint32_t seen);
  void Publish(Worker* worker);
  void WaitForWorkers();
  void StopWorker(Worker* worker);
  void UpdateSpin();

  int* cpus_;  // owned (malloc)
  int num_cpus_;
  bool pin_;
  int64_t spin_ns_option_;
  Worker* workers_;  // owned, kMaxWorkers slots; [0, num_workers_) running
  int num_workers_ = 0;
  // spin_ns_option_, or 0 while the pool oversubscribes the CPUs.
  std::atomic<int64_t> spin_ns_{0};

  Job job_;
  // Workers of the current loop that have not finished their chunk.
  alignas(128) std::atomic<uint32_t> pending_{0};
  // Non-zero while the caller is (about to be) asleep on pending_.
  std::atomic<uint32_t> caller_sleeping_{0};
};

}  // namespace lathe::runtime
