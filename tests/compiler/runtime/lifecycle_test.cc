// Tests of the pool's life cycle (compiler/runtime/runtime_api.cc): fork,
// process exit, dlclose of a library that embeds the runtime, thread pinning
// and the workers' signal mask. Each scenario that ends a process runs in a
// fork()ed child.
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "compiler/runtime/lathe_runtime.h"
#include "gtest/gtest.h"
#include "tests/compiler/runtime/runtime_test_util.h"

namespace lathe::runtime {
namespace {

using testing::ExitedWith;
using testing::RunInChild;
using testing::ThreadCount;
using testing::WaitForThreadCount;

class LifecycleTest : public ::testing::Test {
 protected:
  void TearDown() override { lathe_set_num_threads(0); }
};

int SumTask(int64_t task, void* closure) {
  static_cast<std::atomic<int64_t>*>(closure)->fetch_add(task);
  return 0;
}

// Runs a 1000-task sum at `threads` threads; true if it adds up.
bool SumWorks(int threads) {
  lathe_set_num_threads(threads);
  std::atomic<int64_t> sum{0};
  return lathe_parallel_for(1000, &SumTask, &sum) == 0 &&
         sum.load() == 999 * 1000 / 2;
}

TEST_F(LifecycleTest, ForkedChildBuildsAFreshPool) {
  ASSERT_TRUE(SumWorks(4));  // the parent's pool has workers now
  const int status = RunInChild([] {
    // The child starts with one thread; its pool must not be the parent's
    // (whose threads do not exist here: waiting on them would hang).
    if (!SumWorks(4)) return 1;
    if (ThreadCount() != 4) return 2;
    return 0;
  });
  EXPECT_TRUE(ExitedWith(status, 0)) << "status " << status;
  EXPECT_TRUE(SumWorks(4)) << "the parent's pool still works";
}

TEST_F(LifecycleTest, ChildThatNeverUsesTheRuntimeExitsCleanly) {
  ASSERT_TRUE(SumWorks(4));
  // exit() runs the runtime's shutdown, which must not join the parent's
  // workers (they do not exist in the child).
  const int status = RunInChild([] { return 0; });
  EXPECT_TRUE(ExitedWith(status, 0)) << "status " << status;
}

TEST_F(LifecycleTest, ExitJoinsAPoolWithLiveWorkers) {
  const int status = RunInChild([] { return SumWorks(8) ? 0 : 1; });
  EXPECT_TRUE(ExitedWith(status, 0)) << "status " << status;
}

int SleepTask(int64_t, void* closure) {
  static_cast<std::atomic<int>*>(closure)->fetch_add(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  return 0;
}

TEST_F(LifecycleTest, ExitWaitsForALoopRunningInAnotherThread) {
  const int status = RunInChild([] {
    static std::atomic<int> started{0};
    lathe_set_num_threads(4);
    pthread_t app;
    pthread_create(
        &app, nullptr,
        [](void*) -> void* {
          lathe_parallel_for(4, &SleepTask, &started);
          return nullptr;
        },
        nullptr);
    while (started.load() < 4)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return 0;  // exit() while the loop is still running
  });
  EXPECT_TRUE(ExitedWith(status, 0)) << "status " << status;
}

struct Placement {
  std::vector<int> cpu_count;  // CPUs each task's thread may run on
  std::vector<int> cpu;        // the one it is pinned to
  explicit Placement(int n) : cpu_count(n, -1), cpu(n, -1) {}
};

int RecordAffinity(int64_t task, void* closure) {
  auto* placement = static_cast<Placement*>(closure);
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof(set), &set);
  placement->cpu_count[task] = CPU_COUNT(&set);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) {
      placement->cpu[task] = cpu;
      break;
    }
  }
  return 0;
}

TEST_F(LifecycleTest, PinnedThreadsEachRunOnTheirOwnAllowedCpu) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  }
  if (cpus.size() < 2) GTEST_SKIP() << "needs two allowed CPUs";
  const int threads = cpus.size() < 4 ? static_cast<int>(cpus.size()) : 4;
  const int status = RunInChild([&] {
    // The child's pool is created after this, so it reads the variable.
    setenv("LATHE_PIN_THREADS", "1", 1);
    lathe_set_num_threads(threads);
    Placement placement(threads);
    if (lathe_parallel_for(threads, &RecordAffinity, &placement) != 0) {
      return 1;
    }
    for (int t = 0; t < threads; ++t) {
      if (placement.cpu_count[t] != 1) return 10 + t;
      if (placement.cpu[t] != cpus[t]) return 20 + t;
    }
    // The calling thread is pinned now; the default must still count every
    // CPU of the process, not the one this thread is left with.
    unsetenv("LATHE_NUM_THREADS");
    lathe_set_num_threads(0);
    if (lathe_get_num_threads() != static_cast<int>(cpus.size())) return 30;
    // And a grandchild forked from the pinned thread pins its pool across
    // all of them again.
    const pid_t grandchild = fork();
    if (grandchild == 0) {
      lathe_set_num_threads(threads);
      Placement again(threads);
      lathe_parallel_for(threads, &RecordAffinity, &again);
      for (int t = 0; t < threads; ++t) {
        if (again.cpu[t] != cpus[t]) _exit(40 + t);
      }
      _exit(0);
    }
    int status = 0;
    waitpid(grandchild, &status, 0);
    if (!WIFEXITED(status)) return 50;
    return WEXITSTATUS(status);
  });
  EXPECT_TRUE(ExitedWith(status, 0)) << "status " << status;
}

struct Masks {
  std::vector<int> blocks_sigint;
  std::vector<int> blocks_sigsegv;
  explicit Masks(int n) : blocks_sigint(n, -1), blocks_sigsegv(n, -1) {}
};

int RecordMask(int64_t task, void* closure) {
  auto* masks = static_cast<Masks*>(closure);
  sigset_t mask;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  masks->blocks_sigint[task] = sigismember(&mask, SIGINT);
  masks->blocks_sigsegv[task] = sigismember(&mask, SIGSEGV);
  return 0;
}

TEST_F(LifecycleTest, WorkersLeaveAsyncSignalsToApplicationThreads) {
  lathe_set_num_threads(3);
  Masks masks(3);
  ASSERT_EQ(lathe_parallel_for(3, &RecordMask, &masks), 0);
  EXPECT_EQ(masks.blocks_sigint[0], 0) << "the caller's mask is untouched";
  for (int t = 1; t < 3; ++t) {
    EXPECT_EQ(masks.blocks_sigint[t], 1) << "worker " << t;
    EXPECT_EQ(masks.blocks_sigsegv[t], 0) << "worker " << t;
  }
}

using DsoSum = int64_t (*)(int threads, int64_t n);

TEST_F(LifecycleTest, DlcloseJoinsThePoolOfALibraryThatEmbedsTheRuntime) {
  lathe_set_num_threads(3);
  for (int round = 0; round < 3; ++round) {
    const int before = ThreadCount();
    void* handle = dlopen(LATHE_TEST_DSO_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << dlerror();
    auto sum = reinterpret_cast<DsoSum>(dlsym(handle, "lathe_test_dso_sum"));
    ASSERT_NE(sum, nullptr) << dlerror();
    EXPECT_EQ(sum(/*threads=*/5, /*n=*/1000), 999 * 1000 / 2);
    // The library has its own pool (its runtime symbols are hidden) ...
    EXPECT_EQ(ThreadCount(), before + 4);
    // ... and its own setting: ours is unchanged.
    EXPECT_EQ(lathe_get_num_threads(), 3);
    ASSERT_EQ(dlclose(handle), 0);
    EXPECT_EQ(dlopen(LATHE_TEST_DSO_PATH, RTLD_NOW | RTLD_NOLOAD), nullptr)
        << "the library was really unmapped";
    EXPECT_EQ(WaitForThreadCount(before), before)
        << "its workers were joined before the unmap";
  }
}

}  // namespace
}  // namespace lathe::runtime
