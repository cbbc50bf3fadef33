// Tests of lathe_set_num_threads / lathe_get_num_threads and
// LATHE_NUM_THREADS (compiler/runtime/runtime_api.cc, cpu_affinity.cc), and
// of the pool following the setting (it grows and shrinks).
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "compiler/runtime/lathe_runtime.h"
#include "gtest/gtest.h"
#include "tests/compiler/runtime/runtime_test_util.h"

namespace lathe::runtime {
namespace {

int AllowedCpusOfThisThread() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return -1;
  return CPU_COUNT(&set);
}

class ThreadCountTest : public ::testing::Test {
 protected:
  void SetUp() override { unsetenv("LATHE_NUM_THREADS"); }
  void TearDown() override {
    unsetenv("LATHE_NUM_THREADS");
    lathe_set_num_threads(0);
  }
};

TEST_F(ThreadCountTest, DefaultIsTheNumberOfAllowedCpus) {
  lathe_set_num_threads(0);
  EXPECT_EQ(lathe_get_num_threads(), AllowedCpusOfThisThread());
  lathe_set_num_threads(-3);
  EXPECT_EQ(lathe_get_num_threads(), AllowedCpusOfThisThread());
}

TEST_F(ThreadCountTest, SetThenGet) {
  for (int n : {1, 2, 3, 8, 64}) {
    lathe_set_num_threads(n);
    EXPECT_EQ(lathe_get_num_threads(), n);
  }
}

TEST_F(ThreadCountTest, ClampsToTheMaximum) {
  lathe_set_num_threads(1 << 20);
  EXPECT_EQ(lathe_get_num_threads(), LATHE_RUNTIME_MAX_THREADS);
}

TEST_F(ThreadCountTest, HonoursLatheNumThreadsForTheDefault) {
  setenv("LATHE_NUM_THREADS", "5", /*overwrite=*/1);
  lathe_set_num_threads(0);
  EXPECT_EQ(lathe_get_num_threads(), 5);
  // An explicit count wins over the environment.
  lathe_set_num_threads(2);
  EXPECT_EQ(lathe_get_num_threads(), 2);
}

TEST_F(ThreadCountTest, IgnoresMalformedLatheNumThreads) {
  for (const char* bad : {"", "0", "-4", "abc", "3x", "99999999999999999999"}) {
    setenv("LATHE_NUM_THREADS", bad, /*overwrite=*/1);
    lathe_set_num_threads(0);
    EXPECT_EQ(lathe_get_num_threads(), AllowedCpusOfThisThread())
        << "LATHE_NUM_THREADS=\"" << bad << "\"";
  }
}

int CountTask(int64_t, void* closure) {
  static_cast<std::atomic<int64_t>*>(closure)->fetch_add(1);
  return 0;
}

TEST_F(ThreadCountTest, MoreThreadsThanCpusWork) {
  const int threads = AllowedCpusOfThisThread() * 4;
  lathe_set_num_threads(threads);
  std::atomic<int64_t> count{0};
  ASSERT_EQ(lathe_parallel_for(10000, &CountTask, &count), 0);
  EXPECT_EQ(count.load(), 10000);
}

TEST_F(ThreadCountTest, PoolGrowsAndShrinksWithTheSetting) {
  // Relative counts: other tests of this process may have left workers.
  std::atomic<int64_t> count{0};
  lathe_set_num_threads(8);
  ASSERT_EQ(lathe_parallel_for(100, &CountTask, &count), 0);
  const int with_eight = testing::ThreadCount();
  lathe_set_num_threads(2);
  ASSERT_EQ(lathe_parallel_for(100, &CountTask, &count), 0);
  EXPECT_EQ(testing::WaitForThreadCount(with_eight - 6), with_eight - 6)
      << "shrinking from 8 to 2 threads joins 6 workers";
  lathe_set_num_threads(5);
  ASSERT_EQ(lathe_parallel_for(100, &CountTask, &count), 0);
  EXPECT_EQ(testing::ThreadCount(), with_eight - 3);
  EXPECT_EQ(count.load(), 300);
}

TEST_F(ThreadCountTest, SmallLoopsDoNotNeedEveryThread) {
  // Three tasks at eight threads use three threads; the result is the same.
  lathe_set_num_threads(8);
  std::atomic<int64_t> count{0};
  ASSERT_EQ(lathe_parallel_for(3, &CountTask, &count), 0);
  EXPECT_EQ(count.load(), 3);
}

}  // namespace
}  // namespace lathe::runtime
