// Tests of lathe_parallel_for (compiler/runtime/runtime_api.cc,
// thread_pool.cc): coverage, chunking, errors, nesting, concurrent callers,
// and the cost of many tiny calls.
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <thread>
#include <vector>

#include "compiler/runtime/lathe_runtime.h"
#include "compiler/runtime/thread_pool.h"
#include "gtest/gtest.h"

namespace lathe::runtime {
namespace {

// Restores the default thread count after each test.
class ParallelForTest : public ::testing::Test {
 protected:
  void TearDown() override { lathe_set_num_threads(0); }
};

struct Counts {
  std::vector<std::atomic<int>> runs;
  explicit Counts(int64_t n) : runs(n) {}
};

int CountTask(int64_t task, void* closure) {
  static_cast<Counts*>(closure)->runs[task].fetch_add(1);
  return 0;
}

TEST_F(ParallelForTest, RunsEveryTaskExactlyOnce) {
  for (int threads : {1, 2, 3, 8}) {
    lathe_set_num_threads(threads);
    for (int64_t n : {1, 2, 3, 7, 1000, 100003}) {
      Counts counts(n);
      ASSERT_EQ(lathe_parallel_for(n, &CountTask, &counts), 0);
      for (int64_t task = 0; task < n; ++task) {
        ASSERT_EQ(counts.runs[task].load(), 1)
            << "task " << task << " of " << n << " at " << threads
            << " threads";
      }
    }
  }
}

TEST_F(ParallelForTest, NoTasksReturnsZeroWithoutCalling) {
  lathe_set_num_threads(4);
  Counts counts(1);
  EXPECT_EQ(lathe_parallel_for(0, &CountTask, &counts), 0);
  EXPECT_EQ(lathe_parallel_for(-5, &CountTask, &counts), 0);
  EXPECT_EQ(counts.runs[0].load(), 0);
}

TEST_F(ParallelForTest, NullFunctionIsAnError) {
  EXPECT_EQ(lathe_parallel_for(10, nullptr, nullptr), -1);
  EXPECT_EQ(lathe_parallel_for(0, nullptr, nullptr), 0);
}

struct Trace {
  std::vector<pid_t> tid;  // which thread ran each task
  explicit Trace(int64_t n) : tid(n, 0) {}
};

int RecordThreadTask(int64_t task, void* closure) {
  static_cast<Trace*>(closure)->tid[task] = gettid();
  return 0;
}

TEST_F(ParallelForTest, ChunksAreContiguousInThreadOrderCallerFirst) {
  for (int threads : {2, 3, 8}) {
    lathe_set_num_threads(threads);
    for (int64_t n : {2, 3, 7, 1000, 100003}) {
      Trace trace(n);
      ASSERT_EQ(lathe_parallel_for(n, &RecordThreadTask, &trace), 0);
      const int used = static_cast<int>(std::min<int64_t>(threads, n));
      std::vector<pid_t> seen;
      for (int t = 0; t < used; ++t) {
        int64_t begin = 0;
        int64_t end = 0;
        StaticChunk(n, used, t, &begin, &end);
        ASSERT_LT(begin, end);
        const pid_t owner = trace.tid[begin];
        for (int64_t task = begin; task < end; ++task) {
          ASSERT_EQ(trace.tid[task], owner)
              << "task " << task << " of chunk " << t << ", n=" << n
              << ", threads=" << threads;
        }
        if (t == 0) {
          EXPECT_EQ(owner, gettid()) << "the caller is thread 0";
        }
        EXPECT_EQ(std::count(seen.begin(), seen.end(), owner), 0)
            << "one chunk per thread";
        seen.push_back(owner);
      }
    }
  }
}

TEST_F(ParallelForTest, SameTaskToThreadMapOnEveryCall) {
  lathe_set_num_threads(3);
  Trace first(1000);
  Trace second(1000);
  ASSERT_EQ(lathe_parallel_for(1000, &RecordThreadTask, &first), 0);
  ASSERT_EQ(lathe_parallel_for(1000, &RecordThreadTask, &second), 0);
  EXPECT_EQ(first.tid, second.tid);
}

TEST_F(ParallelForTest, EachThreadRunsItsTasksInIncreasingOrder) {
  lathe_set_num_threads(3);
  constexpr int64_t kTasks = 3000;
  // Each task records the task its thread ran just before it.
  struct Order {
    std::vector<int64_t> last_by_task = std::vector<int64_t>(kTasks, -2);
  } order;
  static thread_local int64_t previous = -1;
  auto task_fn = [](int64_t task, void* closure) {
    static_cast<Order*>(closure)->last_by_task[task] = previous;
    previous = task;
    return 0;
  };
  previous = -1;
  ASSERT_EQ(lathe_parallel_for(kTasks, task_fn, &order), 0);
  for (int t = 0; t < 3; ++t) {
    int64_t begin = 0;
    int64_t end = 0;
    StaticChunk(kTasks, 3, t, &begin, &end);
    for (int64_t task = begin + 1; task < end; ++task) {
      EXPECT_EQ(order.last_by_task[task], task - 1) << "task " << task;
    }
  }
}

struct Failures {
  std::map<int64_t, int> code_by_task;
  std::vector<std::atomic<int>> runs;
  explicit Failures(int64_t n) : runs(n) {}
};

int MaybeFail(int64_t task, void* closure) {
  auto* failures = static_cast<Failures*>(closure);
  failures->runs[task].fetch_add(1);
  auto it = failures->code_by_task.find(task);
  return it == failures->code_by_task.end() ? 0 : it->second;
}

TEST_F(ParallelForTest, ReturnsTheCodeOfTheLowestFailingTask) {
  for (int threads : {1, 2, 3, 8}) {
    lathe_set_num_threads(threads);
    for (int64_t n : {7, 1000, 100003}) {
      for (const std::map<int64_t, int>& failing :
           std::vector<std::map<int64_t, int>>{
               {{0, 11}},
               {{n - 1, 12}},
               {{n / 2, 13}, {n - 1, 14}},
               {{n - 2, -15}, {n / 3, 16}, {1, 17}},
           }) {
        Failures failures(n);
        failures.code_by_task = failing;
        const int64_t lowest = failing.begin()->first;
        ASSERT_EQ(lathe_parallel_for(n, &MaybeFail, &failures),
                  failing.begin()->second)
            << "n=" << n << " threads=" << threads;
        // Every task below the lowest failure ran, exactly once; none ran
        // twice.
        for (int64_t task = 0; task < n; ++task) {
          if (task <= lowest) {
            ASSERT_EQ(failures.runs[task].load(), 1) << "task " << task;
          } else {
            ASSERT_LE(failures.runs[task].load(), 1) << "task " << task;
          }
        }
      }
    }
  }
}

TEST_F(ParallelForTest, AThreadStopsAtItsFirstFailure) {
  lathe_set_num_threads(1);
  Failures failures(100);
  failures.code_by_task = {{10, 3}};
  EXPECT_EQ(lathe_parallel_for(100, &MaybeFail, &failures), 3);
  EXPECT_EQ(failures.runs[11].load(), 0);
  EXPECT_EQ(failures.runs[99].load(), 0);
}

struct Nested {
  std::vector<int64_t> sums;
  std::vector<int> same_thread;  // 1 if every inner task ran on the outer's
  std::vector<int> inner_result;
  int64_t fail_inner_of = -1;
  explicit Nested(int64_t n) : sums(n, 0), same_thread(n, 1), inner_result(n) {}
};

struct InnerClosure {
  Nested* nested;
  int64_t outer;
  pid_t tid;
};

int InnerTask(int64_t task, void* closure) {
  auto* inner = static_cast<InnerClosure*>(closure);
  if (gettid() != inner->tid) inner->nested->same_thread[inner->outer] = 0;
  inner->nested->sums[inner->outer] += task;  // serial: no race
  if (inner->outer == inner->nested->fail_inner_of && task == 50) return 42;
  return 0;
}

int OuterTask(int64_t task, void* closure) {
  auto* nested = static_cast<Nested*>(closure);
  InnerClosure inner{nested, task, gettid()};
  const int result = lathe_parallel_for(100, &InnerTask, &inner);
  nested->inner_result[task] = result;
  return result;
}

TEST_F(ParallelForTest, NestedCallsRunSeriallyInTheCallingThread) {
  for (int threads : {2, 8}) {
    lathe_set_num_threads(threads);
    Nested nested(32);
    ASSERT_EQ(lathe_parallel_for(32, &OuterTask, &nested), 0);
    for (int64_t outer = 0; outer < 32; ++outer) {
      EXPECT_EQ(nested.sums[outer], 99 * 100 / 2) << "outer " << outer;
      EXPECT_EQ(nested.same_thread[outer], 1) << "outer " << outer;
    }
  }
}

TEST_F(ParallelForTest, NestedErrorsPropagateOutward) {
  lathe_set_num_threads(4);
  Nested nested(32);
  nested.fail_inner_of = 20;
  EXPECT_EQ(lathe_parallel_for(32, &OuterTask, &nested), 42);
  EXPECT_EQ(nested.inner_result[20], 42);
  EXPECT_EQ(nested.sums[20], 50 * 51 / 2) << "the inner loop stopped at 50";
}

struct CallerState {
  int64_t id;
  std::vector<int64_t> values;
};

int FillOrFail(int64_t task, void* closure) {
  auto* state = static_cast<CallerState*>(closure);
  state->values[task] = state->id * 1000000 + task;
  return task == 777 && state->id % 2 == 1 ? static_cast<int>(state->id) : 0;
}

TEST_F(ParallelForTest, ConcurrentCallersFromFourApplicationThreads) {
  lathe_set_num_threads(3);
  constexpr int kCallers = 4;
  constexpr int kCalls = 200;
  std::atomic<int> wrong{0};
  std::vector<std::thread> callers;
  for (int id = 0; id < kCallers; ++id) {
    callers.emplace_back([id, &wrong] {
      for (int call = 0; call < kCalls; ++call) {
        CallerState state{id, std::vector<int64_t>(1000, -1)};
        const int result = lathe_parallel_for(1000, &FillOrFail, &state);
        // Odd callers fail at task 777 with their own id; even ones succeed.
        if (result != (id % 2 == 1 ? id : 0)) ++wrong;
        const int64_t checked = id % 2 == 1 ? 777 : 1000;
        for (int64_t task = 0; task < checked; ++task) {
          if (state.values[task] != id * 1000000 + task) ++wrong;
        }
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  EXPECT_EQ(wrong.load(), 0);
}

int AddTask(int64_t task, void* closure) {
  static_cast<std::atomic<int64_t>*>(closure)->fetch_add(
      task + 1, std::memory_order_relaxed);
  return 0;
}

TEST_F(ParallelForTest, TenThousandTinyCallsAreFast) {
  for (int threads : {2, 8}) {
    lathe_set_num_threads(threads);
    std::atomic<int64_t> sum{0};
    const auto start = std::chrono::steady_clock::now();
    for (int call = 0; call < 10000; ++call) {
      ASSERT_EQ(lathe_parallel_for(threads, &AddTask, &sum), 0);
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    EXPECT_EQ(sum.load(), 10000LL * threads * (threads + 1) / 2);
    // Typically well under 0.1 s (spinning hand-off); the bound is loose
    // because CI machines are shared and 8 threads may oversubscribe them,
    // where every hand-off is a futex wake.
    EXPECT_LT(secs, 5.0) << threads << " threads";
  }
}

}  // namespace
}  // namespace lathe::runtime
