// Tests of the ThreadPool class and StaticChunk
// (compiler/runtime/thread_pool.h), used directly rather than through the C
// API.
#include "compiler/runtime/thread_pool.h"

#include <atomic>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "tests/compiler/runtime/runtime_test_util.h"

namespace lathe::runtime {
namespace {

TEST(StaticChunkTest, CoversTheRangeContiguouslyLargerChunksFirst) {
  for (int64_t n : {0, 1, 2, 3, 7, 8, 1000, 100003}) {
    for (int threads : {1, 2, 3, 8, 13}) {
      int64_t expected_begin = 0;
      int64_t previous_size = INT64_MAX;
      for (int t = 0; t < threads; ++t) {
        int64_t begin = -1;
        int64_t end = -1;
        StaticChunk(n, threads, t, &begin, &end);
        EXPECT_EQ(begin, expected_begin) << "n=" << n << " t=" << t;
        const int64_t size = end - begin;
        EXPECT_GE(size, n / threads);
        EXPECT_LE(size, n / threads + 1);
        EXPECT_LE(size, previous_size);
        previous_size = size;
        expected_begin = end;
      }
      EXPECT_EQ(expected_begin, n);
    }
  }
}

TEST(StaticChunkTest, DoesNotOverflowForHugeLoops) {
  int64_t begin = 0;
  int64_t end = 0;
  StaticChunk(INT64_MAX, 7, 6, &begin, &end);
  EXPECT_EQ(end, INT64_MAX);
  EXPECT_GT(begin, INT64_MAX / 7 * 5);
}

int CountTask(int64_t task, void* closure) {
  (*static_cast<std::vector<std::atomic<int>>*>(closure))[task].fetch_add(1);
  return 0;
}

TEST(ThreadPoolTest, StartsRunsAndJoinsItsWorkers) {
  const int before = testing::ThreadCount();
  PoolOptions options;
  options.num_cpus = 2;
  ThreadPool* pool = ThreadPool::Create(options);
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->num_workers(), 0);
  EXPECT_EQ(pool->Resize(3), 3);
  EXPECT_EQ(testing::ThreadCount(), before + 3);

  std::vector<std::atomic<int>> counts(1001);
  EXPECT_EQ(pool->Run(/*num_threads=*/4, 1001, &CountTask, &counts), 0);
  // More threads than workers: runs on the workers it has.
  EXPECT_EQ(pool->Run(/*num_threads=*/16, 1001, &CountTask, &counts), 0);
  for (const std::atomic<int>& count : counts) ASSERT_EQ(count.load(), 2);

  EXPECT_EQ(pool->Resize(1), 1);
  EXPECT_EQ(testing::WaitForThreadCount(before + 1), before + 1);
  ThreadPool::Destroy(pool);
  EXPECT_EQ(testing::WaitForThreadCount(before), before);
}

TEST(ThreadPoolTest, ResizeClampsToTheMaximum) {
  PoolOptions options;
  ThreadPool* pool = ThreadPool::Create(options);
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->Resize(-4), 0);
  ThreadPool::Destroy(pool);
}

TEST(ThreadPoolTest, WorkersThatSleepAreWokenForTheNextLoop) {
  // Spinning off: every hand-off goes through the futex path.
  PoolOptions options;
  options.num_cpus = 8;
  options.spin_ns = 0;
  ThreadPool* pool = ThreadPool::Create(options);
  ASSERT_NE(pool, nullptr);
  pool->Resize(3);
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::atomic<int>> counts(37);
    ASSERT_EQ(pool->Run(4, 37, &CountTask, &counts), 0);
    for (const std::atomic<int>& count : counts) ASSERT_EQ(count.load(), 1);
  }
  ThreadPool::Destroy(pool);
}

}  // namespace
}  // namespace lathe::runtime
