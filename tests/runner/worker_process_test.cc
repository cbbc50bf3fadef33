// Tests of runner/worker_process.h with ordinary programs as children: cat
// (an echo worker), sh (crashes, exits, stderr), sleep (hangs).
#include "runner/worker_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lathe::runner {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

std::unique_ptr<WorkerProcess> SpawnOrDie(std::vector<std::string> argv,
                                          int64_t memory_limit_bytes = 0,
                                          std::vector<int> cpus = {}) {
  WorkerProcessOptions options;
  options.argv = std::move(argv);
  options.memory_limit_bytes = memory_limit_bytes;
  options.cpus = std::move(cpus);
  absl::StatusOr<std::unique_ptr<WorkerProcess>> p =
      WorkerProcess::Spawn(options);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *std::move(p) : nullptr;
}

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

TEST(WorkerProcess, ExchangesFramesWithTheChild) {
  auto cat = SpawnOrDie({"/bin/cat"});
  ASSERT_NE(cat, nullptr);
  for (const std::string& payload :
       {std::string("ping"), std::string(),
        std::string(150000, 'z')}) {  // over a pipe's 64 KiB
    ASSERT_TRUE(cat->Send(payload, 5).ok());
    absl::StatusOr<std::string> echo = cat->Receive(5);
    ASSERT_TRUE(echo.ok()) << echo.status();
    EXPECT_EQ(*echo, payload);
  }
  EXPECT_TRUE(cat->Running());
}

TEST(WorkerProcess, MissingProgramIsAnErrorFromSpawn) {
  WorkerProcessOptions options;
  options.argv = {"/nonexistent/lathe-runner-worker"};
  absl::StatusOr<std::unique_ptr<WorkerProcess>> p =
      WorkerProcess::Spawn(options);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(p.status().message(),
            "cannot start worker /nonexistent/lathe-runner-worker: No such "
            "file or directory");
  options.argv = {};
  EXPECT_EQ(WorkerProcess::Spawn(options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(WorkerProcess, CrashIsNamedBySignalWithTheLastLinesOfStderr) {
  auto sh = SpawnOrDie(
      {"/bin/sh", "-c", "echo first >&2; echo 'it broke' >&2; kill -SEGV $$"});
  ASSERT_NE(sh, nullptr);
  absl::StatusOr<std::string> got = sh->Receive(5);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(got.status().message(),
            "killed by signal 11 (SIGSEGV); stderr: first / it broke");
  EXPECT_FALSE(sh->Running());
}

TEST(WorkerProcess, ExitIsNamedByStatus) {
  auto sh = SpawnOrDie({"/bin/sh", "-c", "exit 3"});
  ASSERT_NE(sh, nullptr);
  absl::StatusOr<std::string> got = sh->Receive(5);
  EXPECT_EQ(got.status().message(), "exited with status 3");
  // And a send afterwards says the worker is gone, without SIGPIPE.
  EXPECT_EQ(sh->Send("x", 1).code(), absl::StatusCode::kUnavailable);
}

TEST(WorkerProcess, TimeoutKillsTheChildOnTime) {
  auto sleeper = SpawnOrDie({"/bin/sleep", "30"});
  ASSERT_NE(sleeper, nullptr);
  pid_t pid = sleeper->pid();
  Clock::time_point start = Clock::now();
  absl::StatusOr<std::string> got = sleeper->Receive(0.3);
  double took = SecondsSince(start);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(got.status().message(), "timed out after 0.3 s");
  EXPECT_GE(took, 0.3);
  EXPECT_LT(took, 1.3);
  EXPECT_FALSE(sleeper->Running());
  // Reaped: no such process (nor zombie) any more.
  EXPECT_EQ(kill(pid, 0), -1);
}

// A stop while waiting: the child is killed within a poll interval, long
// before the timeout, and the wait says it was cancelled.
TEST(WorkerProcess, CancelEndsTheWaitAndTheChild) {
  auto sleeper = SpawnOrDie({"/bin/sleep", "30"});
  ASSERT_NE(sleeper, nullptr);
  const pid_t pid = sleeper->pid();
  std::atomic<bool> cancel{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel.store(true);
  });
  Clock::time_point start = Clock::now();
  absl::StatusOr<std::string> got = sleeper->Receive(20, &cancel);
  const double took = SecondsSince(start);
  stopper.join();
  EXPECT_EQ(got.status().code(), absl::StatusCode::kCancelled) << got.status();
  EXPECT_GE(took, 0.2);
  EXPECT_LT(took, 5);
  EXPECT_FALSE(sleeper->Running());
  EXPECT_EQ(kill(pid, 0), -1);
}

TEST(WorkerProcess, GarbageOnTheChannelIsDataLoss) {
  // printf's bytes read as a length of ~4 GiB: not a frame.
  auto sh =
      SpawnOrDie({"/bin/sh", "-c", "printf '\\377\\377\\377\\377'; sleep 30"});
  ASSERT_NE(sh, nullptr);
  absl::StatusOr<std::string> got = sh->Receive(5);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_FALSE(sh->Running());
}

TEST(WorkerProcess, AppliesTheMemoryLimitAndCpuSet) {
  // ulimit -v prints the address-space limit in KiB.
  auto sh = SpawnOrDie(
      {"/bin/sh", "-c",
       "ulimit -v >&2; grep Cpus_allowed_list /proc/self/status >&2; exit 1"},
      /*memory_limit_bytes=*/int64_t{256} << 20, /*cpus=*/{0});
  ASSERT_NE(sh, nullptr);
  absl::StatusOr<std::string> got = sh->Receive(5);
  EXPECT_THAT(got.status().message(),
              HasSubstr("stderr: 262144 / Cpus_allowed_list:"));
  EXPECT_THAT(sh->stderr_tail(), HasSubstr("Cpus_allowed_list:\t0\n"));
}

TEST(WorkerProcess, DoesNotLeakThisProcesssDescriptors) {
  // Descriptors without O_CLOEXEC, as a library might open them, at
  // numbers the child would not use by itself.
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  int fds[2] = {fcntl(pipe_fds[0], F_DUPFD, 100),
                fcntl(pipe_fds[1], F_DUPFD, 100)};
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  ASSERT_GE(fds[0], 100);
  auto sh = SpawnOrDie({"/bin/sh", "-c", "ls /proc/self/fd >&2; exit 0"});
  ASSERT_NE(sh, nullptr);
  (void)sh->Receive(5);
  std::string listed = sh->stderr_tail();
  EXPECT_EQ(listed.find(std::to_string(fds[0]) + "\n"), std::string::npos)
      << listed;
  EXPECT_EQ(listed.find(std::to_string(fds[1]) + "\n"), std::string::npos)
      << listed;
  close(fds[0]);
  close(fds[1]);
}

TEST(WorkerProcess, DestructorEndsAnIdleChildAndAHungOne) {
  pid_t cat_pid, sleep_pid;
  {
    auto cat = SpawnOrDie({"/bin/cat"});  // exits when its input closes
    auto sleeper = SpawnOrDie({"/bin/sleep", "30"});  // ignores it: killed
    ASSERT_TRUE(cat && sleeper);
    cat_pid = cat->pid();
    sleep_pid = sleeper->pid();
  }
  EXPECT_EQ(kill(cat_pid, 0), -1);
  EXPECT_EQ(kill(sleep_pid, 0), -1);
}

TEST(DescribeExitStatus, NamesStatusesAndSignals) {
  EXPECT_EQ(DescribeExitStatus(0), "exited with status 0");
  EXPECT_EQ(DescribeExitStatus(2 << 8), "exited with status 2");
  EXPECT_EQ(DescribeExitStatus(SIGKILL), "killed by signal 9 (SIGKILL)");
  EXPECT_EQ(DescribeExitStatus(SIGABRT), "killed by signal 6 (SIGABRT)");
}

}  // namespace
}  // namespace lathe::runner
