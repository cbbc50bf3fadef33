// The thread pool behind lathe_parallel_for; see thread_pool.h for the design.
//
// Memory-ordering protocol (each hand-off is a Dekker pair: both sides store
// their flag, then load the other's, all seq_cst, so at least one of them sees
// the other and no wake-up is lost):
//   caller: write job/range -> seq.store   -> load sleeping -> wake if set
//   worker: sleeping.store(1) -> seq.load  -> futex_wait(seq, seen)
//   worker: write result -> pending.fetch_sub -> load caller_sleeping -> wake
//   caller: caller_sleeping.store(1) -> pending.load -> futex_wait(pending)
// futex_wait itself re-checks the word in the kernel, which closes the window
// between the load and going to sleep.
#include "compiler/runtime/thread_pool.h"

#include <signal.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <new>

#include "compiler/runtime/cpu_affinity.h"
#include "compiler/runtime/futex.h"

namespace lathe::runtime {
namespace {

// Trivially destructible on purpose: a thread_local with a destructor would
// register a per-thread cleanup that pins this DSO in memory past dlclose.
thread_local bool t_in_parallel_region = false;
thread_local bool t_caller_pinned = false;

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Spins until done() or spin_ns elapse; returns done()'s last value. Reads
// the clock only every 64 iterations (a vDSO call costs ~20 ns).
template <typename Done>
bool SpinUntil(int64_t spin_ns, Done done) {
  if (spin_ns <= 0) return done();
  const int64_t deadline = NowNs() + spin_ns;
  for (uint32_t i = 1;; ++i) {
    if (done()) return true;
    CpuRelax();
    if ((i & 63) == 0 && NowNs() > deadline) return done();
  }
}

void RecordFailure(std::atomic<int64_t>* first_failed_task, int64_t task) {
  int64_t seen = first_failed_task->load(std::memory_order_relaxed);
  while (task < seen && !first_failed_task->compare_exchange_weak(
                            seen, task, std::memory_order_relaxed)) {
  }
}

// Runs [begin, end) in order; stops at its first failure, or before a task
// numbered above one that already failed elsewhere (its result could not
// matter: the lowest failing task wins). The relaxed load per task hits a
// line that stays shared until a failure, so it costs about nothing.
void RunRange(lathe_task_fn fn, void* closure,
              std::atomic<int64_t>* first_failed_task, int64_t begin,
              int64_t end, int64_t* failed_task, int* failed_code) {
  for (int64_t task = begin; task < end; ++task) {
    if (first_failed_task->load(std::memory_order_relaxed) < task) return;
    const int code = fn(task, closure);
    if (code != 0) {
      *failed_task = task;
      *failed_code = code;
      RecordFailure(first_failed_task, task);
      return;
    }
  }
}

// Workers get every asynchronous signal blocked, so that process-directed
// signals (SIGINT, a runner's SIGALRM timeout, ...) go to application
// threads, which have handlers in mind for them. Faults stay unblocked: a
// blocked SIGSEGV would bypass a crash handler and kill the process.
void BlockAsyncSignals(sigset_t* old) {
  static constexpr int kFaults[] = {SIGSEGV, SIGBUS,  SIGFPE, SIGILL,
                                    SIGTRAP, SIGABRT, SIGSYS};
  sigset_t set;
  sigfillset(&set);
  for (int sig : kFaults) sigdelset(&set, sig);
  pthread_sigmask(SIG_SETMASK, &set, old);
}

}  // namespace

bool InParallelRegion() { return t_in_parallel_region; }

int RunSerially(int64_t num_tasks, lathe_task_fn fn, void* closure) {
  const bool was_in_region = t_in_parallel_region;
  t_in_parallel_region = true;
  int result = 0;
  for (int64_t task = 0; task < num_tasks; ++task) {
    result = fn(task, closure);
    if (result != 0) break;
  }
  t_in_parallel_region = was_in_region;
  return result;
}

ThreadPool::ThreadPool(const PoolOptions& options, int* cpus, Worker* workers)
    : cpus_(cpus),
      num_cpus_(options.num_cpus),
      pin_(options.pin),
      spin_ns_option_(options.spin_ns),
      workers_(workers) {
  UpdateSpin();
}

ThreadPool* ThreadPool::Create(const PoolOptions& options) {
  // malloc and placement new, not operator new: the runtime must not need
  // libstdc++ (see thread_pool.h). aligned_alloc for the 128-byte members.
  const int num_cpus = options.num_cpus > 0 ? options.num_cpus : 1;
  int* cpus = static_cast<int*>(std::malloc(sizeof(int) * num_cpus));
  void* workers_memory =
      std::aligned_alloc(alignof(Worker), sizeof(Worker) * kMaxWorkers);
  void* pool_memory =
      std::aligned_alloc(alignof(ThreadPool), sizeof(ThreadPool));
  if (cpus == nullptr || workers_memory == nullptr || pool_memory == nullptr) {
    std::free(cpus);
    std::free(workers_memory);
    std::free(pool_memory);
    return nullptr;
  }
  for (int i = 0; i < num_cpus; ++i) {
    cpus[i] =
        options.cpus != nullptr && options.num_cpus > 0 ? options.cpus[i] : i;
  }
  PoolOptions copy = options;
  copy.num_cpus = num_cpus;
  // Slots are constructed when their worker starts (Resize).
  return new (pool_memory)
      ThreadPool(copy, cpus, static_cast<Worker*>(workers_memory));
}

void ThreadPool::Destroy(ThreadPool* pool) {
  if (pool == nullptr) return;
  pool->Resize(0);
  int* cpus = pool->cpus_;
  Worker* workers = pool->workers_;
  pool->~ThreadPool();
  std::free(cpus);
  std::free(workers);
  std::free(pool);
}

void ThreadPool::UpdateSpin() {
  const bool oversubscribed = num_workers_ + 1 > num_cpus_;
  spin_ns_.store(oversubscribed ? 0 : spin_ns_option_,
                 std::memory_order_relaxed);
}

int ThreadPool::Resize(int num_workers) {
  if (num_workers < 0) num_workers = 0;
  if (num_workers > kMaxWorkers) num_workers = kMaxWorkers;
  while (num_workers_ > num_workers) {
    StopWorker(&workers_[num_workers_ - 1]);
    workers_[num_workers_ - 1].~Worker();
    --num_workers_;
  }
  if (num_workers_ < num_workers) {
    sigset_t old_mask;
    BlockAsyncSignals(&old_mask);
    while (num_workers_ < num_workers) {
      Worker* worker = new (&workers_[num_workers_]) Worker();
      worker->pool = this;
      worker->thread_index = num_workers_ + 1;
      if (pthread_create(&worker->thread, nullptr, &ThreadPool::WorkerMain,
                         worker) != 0) {
        // Out of threads (ulimit, memory): run with what we have.
        worker->~Worker();
        break;
      }
      ++num_workers_;
    }
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  }
  UpdateSpin();
  return num_workers_;
}

void ThreadPool::StopWorker(Worker* worker) {
  worker->stop = true;
  worker->seq.store(worker->seq.load(std::memory_order_relaxed) + 1,
                    std::memory_order_seq_cst);
  // Always wake: stopping is rare and this avoids reasoning about the flag.
  FutexWake(&worker->seq, 1);
  pthread_join(worker->thread, nullptr);
}

void* ThreadPool::WorkerMain(void* arg) {
  Worker* worker = static_cast<Worker*>(arg);
  ThreadPool* pool = worker->pool;
  // Anything a worker runs is a task, so any loop it starts is nested.
  t_in_parallel_region = true;
  if (pool->pin_) {
    PinCurrentThread(pool->cpus_[worker->thread_index % pool->num_cpus_]);
  }
  char name[16];
  std::snprintf(name, sizeof(name), "lathe-w%d", worker->thread_index);
  pthread_setname_np(pthread_self(), name);

  uint32_t seen = 0;
  for (;;) {
    seen = pool->WaitForWork(worker, seen);
    if (worker->stop) break;
    RunRange(pool->job_.fn, pool->job_.closure, &pool->job_.first_failed_task,
             worker->begin, worker->end, &worker->failed_task,
             &worker->failed_code);
    if (pool->pending_.fetch_sub(1, std::memory_order_seq_cst) == 1 &&
        pool->caller_sleeping_.load(std::memory_order_seq_cst) != 0) {
      FutexWake(&pool->pending_, 1);
    }
  }
  return nullptr;
}

uint32_t ThreadPool::WaitForWork(Worker* worker, uint32_t seen) {
  uint32_t now = seen;
  auto arrived = [&] {
    now = worker->seq.load(std::memory_order_acquire);
    return now != seen;
  };
  if (SpinUntil(spin_ns_.load(std::memory_order_relaxed), arrived)) return now;
  for (;;) {
    worker->sleeping.store(1, std::memory_order_seq_cst);
    now = worker->seq.load(std::memory_order_seq_cst);
    if (now == seen) FutexWait(&worker->seq, seen);
    worker->sleeping.store(0, std::memory_order_relaxed);
    if (arrived()) return now;
  }
}

void ThreadPool::Publish(Worker* worker) {
  // Only the caller (under the C API's mutex) writes seq, so load+store
  // is an increment.
  worker->seq.store(worker->seq.load(std::memory_order_relaxed) + 1,
                    std::memory_order_seq_cst);
  if (worker->sleeping.load(std::memory_order_seq_cst) != 0) {
    FutexWake(&worker->seq, 1);
  }
}

void ThreadPool::WaitForWorkers() {
  auto done = [&] { return pending_.load(std::memory_order_acquire) == 0; };
  if (SpinUntil(spin_ns_.load(std::memory_order_relaxed), done)) return;
  caller_sleeping_.store(1, std::memory_order_seq_cst);
  for (;;) {
    const uint32_t pending = pending_.load(std::memory_order_seq_cst);
    if (pending == 0) break;
    FutexWait(&pending_, pending);
  }
  caller_sleeping_.store(0, std::memory_order_relaxed);
}

int ThreadPool::Run(int num_threads, int64_t num_tasks, lathe_task_fn fn,
                    void* closure) {
  int threads = num_threads;
  if (threads > num_workers_ + 1) threads = num_workers_ + 1;
  if (threads > num_tasks) threads = static_cast<int>(num_tasks);
  if (threads <= 1) return RunSerially(num_tasks, fn, closure);

  if (pin_ && !t_caller_pinned) {
    // Once per application thread: it stays on the first allowed CPU, as
    // measurement wants. (Only with LATHE_PIN_THREADS=1.)
    PinCurrentThread(cpus_[0]);
    t_caller_pinned = true;
  }

  // 1. Describe the job, then hand each worker its range.
  job_.fn = fn;
  job_.closure = closure;
  job_.first_failed_task.store(INT64_MAX, std::memory_order_relaxed);
  pending_.store(static_cast<uint32_t>(threads - 1), std::memory_order_relaxed);
  for (int t = 1; t < threads; ++t) {
    Worker* worker = &workers_[t - 1];
    StaticChunk(num_tasks, threads, t, &worker->begin, &worker->end);
    worker->failed_task = INT64_MAX;
    worker->failed_code = 0;
    Publish(worker);
  }

  // 2. The caller is thread 0.
  int64_t begin = 0;
  int64_t end = 0;
  StaticChunk(num_tasks, threads, 0, &begin, &end);
  int64_t failed_task = INT64_MAX;
  int failed_code = 0;
  const bool was_in_region = t_in_parallel_region;
  t_in_parallel_region = true;
  RunRange(fn, closure, &job_.first_failed_task, begin, end, &failed_task,
           &failed_code);
  t_in_parallel_region = was_in_region;

  // 3. Wait for the others; the lowest failing task decides the result.
  WaitForWorkers();
  for (int t = 1; t < threads; ++t) {
    const Worker& worker = workers_[t - 1];
    if (worker.failed_task < failed_task) {
      failed_task = worker.failed_task;
      failed_code = worker.failed_code;
    }
  }
  return failed_code;
}

}  // namespace lathe::runtime
