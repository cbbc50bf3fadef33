// Tests of runner/local_runner.h with the real worker (lathe-runner-worker):
// measurements, and every fault a candidate can have, each followed by a
// candidate that must succeed on the same runner.
#include "runner/local_runner.h"

#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "compiler/codegen/cpu_target.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/trace.pb.h"
#include "tests/runner/schedule_requests.h"

#ifndef LATHE_RUNNER_WORKER
#error "LATHE_RUNNER_WORKER: the path of lathe-runner-worker"
#endif

namespace lathe::runner {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

constexpr char kSpec[] = "matmul:M=64,N=48,K=32";

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The state letter of /proc/PID/stat ('R', 'S', 'Z', ...); 0 if none.
char ProcessState(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return 0;
  size_t paren = line.rfind(')');  // the name may hold spaces
  return paren + 2 < line.size() ? line[paren + 2] : 0;
}

// The processes whose parent is this one.
std::vector<pid_t> ChildPids() {
  std::vector<pid_t> children;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    pid_t pid = 0;
    if (!absl::SimpleAtoi(entry.path().filename().string(), &pid)) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    size_t paren = line.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream rest(line.substr(paren + 2));
    char state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == getpid()) children.push_back(pid);
  }
  return children;
}

LocalRunnerOptions Options() {
  LocalRunnerOptions options;
  options.worker_argv = {LATHE_RUNNER_WORKER};
  options.timeout_s = 20;
  options.memory_limit_bytes = int64_t{2} << 30;
  return options;
}

using Candidate = test_support::ScheduleRequest;

Candidate DefaultCandidate() {
  Candidate c = test_support::DefaultScheduleRequest(kSpec);
  c.request.set_check_seed(3);
  return c;
}

std::unique_ptr<LocalRunner> StartOrDie(const LocalRunnerOptions& options) {
  absl::StatusOr<std::unique_ptr<LocalRunner>> runner =
      LocalRunner::Start(options);
  EXPECT_TRUE(runner.ok()) << runner.status();
  return runner.ok() ? *std::move(runner) : nullptr;
}

// The candidate after a fault must be measured normally by a fresh worker.
void ExpectNextCandidateSucceeds(LocalRunner& runner, const Candidate& c) {
  absl::StatusOr<proto::MeasureResult> next = runner.Measure(c.request);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->status(), proto::MEASURE_OK) << next->error();
  EXPECT_EQ(next->structural_hash(), c.structural_hash);
  EXPECT_GE(next->times_s_size(), 3);
}

proto::MeasureResult MeasureOrDie(LocalRunner& runner,
                                  const proto::MeasureRequest& request) {
  absl::StatusOr<proto::MeasureResult> r = runner.Measure(request);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : proto::MeasureResult();
}

TEST(LocalRunner, MeasuresCandidatesOneAfterAnother) {
  auto runner = StartOrDie(Options());
  ASSERT_NE(runner, nullptr);
  Candidate c = DefaultCandidate();
  for (int i = 0; i < 2; ++i) {
    proto::MeasureResult r = MeasureOrDie(*runner, c.request);
    ASSERT_EQ(r.status(), proto::MEASURE_OK) << r.error();
    EXPECT_EQ(r.structural_hash(), c.structural_hash);
    ASSERT_GE(r.times_s_size(), 3);
    for (double t : r.times_s()) {
      EXPECT_GT(t, 0);
      EXPECT_LT(t, 0.01);
    }
  }
}

TEST(LocalRunner, BadTraceIsABuildError) {
  auto runner = StartOrDie(Options());
  ASSERT_NE(runner, nullptr);
  Candidate c = DefaultCandidate();
  // A split by a factor of 0: replay refuses it (fails here if the trace has
  // no split).
  const proto::MeasureRequest bad = test_support::WithBadSplit(c.request);
  ASSERT_FALSE(::testing::Test::HasFailure());
  proto::MeasureResult r = MeasureOrDie(*runner, bad);
  EXPECT_EQ(r.status(), proto::MEASURE_BUILD_ERROR);
  EXPECT_THAT(r.error(), HasSubstr("split: "));
  EXPECT_THAT(r.error(), HasSubstr("factor 0 is not positive"));
  ExpectNextCandidateSucceeds(*runner, c);
}

TEST(LocalRunner, CrashIsARunErrorAndTuningGoesOn) {
  auto runner = StartOrDie(Options());
  ASSERT_NE(runner, nullptr);
  Candidate c = DefaultCandidate();
  proto::MeasureRequest crash = c.request;
  crash.set_inject_fault("crash");
  proto::MeasureResult r = MeasureOrDie(*runner, crash);
  EXPECT_EQ(r.status(), proto::MEASURE_RUN_ERROR);
  EXPECT_EQ(r.error(), "killed by signal 11 (SIGSEGV)");
  ExpectNextCandidateSucceeds(*runner, c);
}

// The worker is confined (runner/worker_sandbox.h): a candidate that opens
// a socket is stopped with its worker (SIGSYS), one that opens a file is
// refused, each recorded as the candidate's run error, and the next
// candidate is measured.
TEST(LocalRunner, ACandidateThatOpensASocketOrAFileIsStoppedAndRecorded) {
  auto runner = StartOrDie(Options());
  ASSERT_NE(runner, nullptr);
  Candidate c = DefaultCandidate();
  proto::MeasureRequest network = c.request;
  network.set_inject_fault("socket");
  proto::MeasureResult r = MeasureOrDie(*runner, network);
  EXPECT_EQ(r.status(), proto::MEASURE_RUN_ERROR);
  EXPECT_EQ(r.error(), "killed by signal 31 (SIGSYS)");
  EXPECT_EQ(r.times_s_size(), 0);
  ExpectNextCandidateSucceeds(*runner, c);

  proto::MeasureRequest file = c.request;
  file.set_inject_fault("open_file");
  r = MeasureOrDie(*runner, file);
  EXPECT_EQ(r.status(), proto::MEASURE_RUN_ERROR);
  EXPECT_EQ(r.error(), "inject_fault open_file: Operation not permitted");
  EXPECT_EQ(r.times_s_size(), 0);
  ExpectNextCandidateSucceeds(*runner, c);
}

TEST(LocalRunner, WrongResultIsRecordedAndTuningGoesOn) {
  auto runner = StartOrDie(Options());
  ASSERT_NE(runner, nullptr);
  Candidate c = DefaultCandidate();
  proto::MeasureRequest wrong = c.request;
  wrong.set_inject_fault("wrong_result");
  proto::MeasureResult r = MeasureOrDie(*runner, wrong);
  EXPECT_EQ(r.status(), proto::MEASURE_WRONG_RESULT);
  EXPECT_THAT(r.error(), HasSubstr("output C"));
  EXPECT_EQ(r.times_s_size(), 0);
  ExpectNextCandidateSucceeds(*runner, c);
}

TEST(LocalRunner, HangIsATimeoutWithinTheDeadline) {
  LocalRunnerOptions options = Options();
  options.timeout_s = 2;
  auto runner = StartOrDie(options);
  ASSERT_NE(runner, nullptr);
  Candidate c = DefaultCandidate();
  proto::MeasureRequest hang = c.request;
  hang.set_inject_fault("hang");
  Clock::time_point start = Clock::now();
  proto::MeasureResult r = MeasureOrDie(*runner, hang);
  double took = SecondsSince(start);
  EXPECT_EQ(r.status(), proto::MEASURE_TIMEOUT);
  EXPECT_EQ(r.error(), "timed out after 2.0 s");
  EXPECT_GE(took, 2.0);
  EXPECT_LT(took, 3.0);
  ExpectNextCandidateSucceeds(*runner, c);
}

// Stopping abandons the request in flight: a hanging candidate ends within
// a poll interval instead of its timeout, as Cancelled (nothing to record),
// and the next candidate is measured normally by a fresh worker.
TEST(LocalRunner, StopAbandonsTheCandidateInFlight) {
  std::atomic<bool> stop{false};
  LocalRunnerOptions options = Options();
  options.timeout_s = 20;
  options.stop = &stop;
  auto runner = StartOrDie(options);
  ASSERT_NE(runner, nullptr);
  Candidate c = DefaultCandidate();
  proto::MeasureRequest hang = c.request;
  hang.set_inject_fault("hang");
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop.store(true);
  });
  Clock::time_point start = Clock::now();
  absl::StatusOr<proto::MeasureResult> r = runner->Measure(hang);
  const double took = SecondsSince(start);
  stopper.join();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled) << r.status();
  EXPECT_LT(took, 10);
  stop.store(false);
  ExpectNextCandidateSucceeds(*runner, c);
}

TEST(LocalRunner, OutOfMemoryIsARunErrorNamingTheLimit) {
  LocalRunnerOptions options = Options();
  options.memory_limit_bytes = int64_t{512} << 20;
  auto runner = StartOrDie(options);
  ASSERT_NE(runner, nullptr);
  Candidate c = DefaultCandidate();
  proto::MeasureRequest oom = c.request;
  oom.set_inject_fault("oom");
  proto::MeasureResult r = MeasureOrDie(*runner, oom);
  EXPECT_EQ(r.status(), proto::MEASURE_RUN_ERROR);
  EXPECT_EQ(r.error(), "exceeded the memory limit of 512 MiB");
  // The candidate's failure, not the runner's (the daemon's quarantine).
  EXPECT_TRUE(r.over_limit());
  ExpectNextCandidateSucceeds(*runner, c);
}

TEST(LocalRunner, EveryFaultInARowThenSuccess) {
  // What a tuner sees over a batch: no fault stops the next candidate.
  LocalRunnerOptions options = Options();
  options.timeout_s = 3;
  options.memory_limit_bytes = int64_t{512} << 20;
  auto runner = StartOrDie(options);
  ASSERT_NE(runner, nullptr);
  Candidate c = DefaultCandidate();
  const std::pair<const char*, proto::MeasureStatus> faults[] = {
      {"crash", proto::MEASURE_RUN_ERROR},
      {"oom", proto::MEASURE_RUN_ERROR},
      {"wrong_result", proto::MEASURE_WRONG_RESULT},
      {"crash", proto::MEASURE_RUN_ERROR},
      {"", proto::MEASURE_OK}};
  for (const auto& [fault, status] : faults) {
    proto::MeasureRequest request = c.request;
    request.set_inject_fault(fault);
    proto::MeasureResult r = MeasureOrDie(*runner, request);
    EXPECT_EQ(r.status(), status) << fault << ": " << r.error();
  }
}

TEST(LocalRunner, WorkerKilledBetweenCandidatesIsNotTheNextCandidatesFault) {
  auto runner = StartOrDie(Options());
  ASSERT_NE(runner, nullptr);
  Candidate c = DefaultCandidate();
  ExpectNextCandidateSucceeds(*runner, c);
  // Kill the idle worker from outside (as the system's OOM killer might),
  // and wait until it is dead.
  std::vector<pid_t> children = ChildPids();
  ASSERT_EQ(children.size(), 1u);
  ASSERT_EQ(kill(children[0], SIGKILL), 0);
  for (int i = 0; i < 1000 && ProcessState(children[0]) != 'Z'; ++i)
    usleep(1000);
  ASSERT_EQ(ProcessState(children[0]), 'Z');
  ExpectNextCandidateSucceeds(*runner, c);
}

// The CPUs the thread may run on, as /proc lists them ("0", "2-3").
std::string CpusAllowed(pid_t pid, const std::string& tid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/task/" + tid +
                       "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Cpus_allowed_list:", 0) == 0)
      return line.substr(line.find('\t') + 1);
  }
  return "";
}

// The CPU of each thread of `pid`, by thread name ("lathe-w1" for pool
// workers; the main thread under "main").
std::map<std::string, std::string> ThreadCpus(pid_t pid) {
  std::map<std::string, std::string> cpus;
  for (const auto& entry : std::filesystem::directory_iterator(
           "/proc/" + std::to_string(pid) + "/task")) {
    std::string tid = entry.path().filename().string();
    std::ifstream comm(entry.path() / "comm");
    std::string name;
    std::getline(comm, name);
    cpus[tid == std::to_string(pid) ? "main" : name] = CpusAllowed(pid, tid);
  }
  return cpus;
}

TEST(LocalRunner, PinsTheKernelsThreadsToTheFirstCpus) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  }
  if (cpus.size() < 2) GTEST_SKIP() << "needs 2 CPUs";
  // The worker gets the last two CPUs, in their order: the caller on the
  // first of them, pool thread 1 on the second.
  LocalRunnerOptions options = Options();
  options.cpus = {cpus[cpus.size() - 2], cpus.back()};
  auto runner = StartOrDie(options);
  ASSERT_NE(runner, nullptr);
  Candidate c = DefaultCandidate();
  Target two_threads = HostTarget(2);
  c.request.set_target(two_threads.ToString());
  c.request
      .clear_trace();  // the default schedule for 2 threads: a parallel loop
  proto::MeasureResult r = MeasureOrDie(*runner, c.request);
  ASSERT_EQ(r.status(), proto::MEASURE_OK) << r.error();
  std::vector<pid_t> children = ChildPids();
  ASSERT_EQ(children.size(), 1u);
  std::map<std::string, std::string> threads = ThreadCpus(children[0]);
  EXPECT_EQ(threads["main"], std::to_string(options.cpus[0]));
  EXPECT_EQ(threads["lathe-w1"], std::to_string(options.cpus[1]));
}

// The worker builds the programs a request names (build_ahead) while it
// measures that request, on the CPU its 1-thread kernels leave free; each is
// then measured as without the hint, and a hinted program that fails to
// build fails the same way.
TEST(LocalRunner, BuildsTheHintedProgramsAheadBesideMeasurement) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs 2 CPUs";
  auto runner = StartOrDie(Options());
  ASSERT_NE(runner, nullptr);
  std::vector<test_support::ScheduleRequest> p =
      test_support::FourSchedules("matmul:M=36,N=28,K=20", 1);
  const proto::MeasureRequest bad = test_support::WithBadSplit(p[1].request);
  proto::MeasureRequest first = p[0].request;
  // Long enough for the builder to start, however busy the machine: what it
  // has started, this thread waits for or builds the rest beside it.
  first.set_min_time_s(0.3);
  for (const proto::MeasureRequest& next :
       {p[1].request, p[2].request, p[3].request, bad}) {
    *first.add_build_ahead() = next.trace();
  }
  proto::MeasureResult r = MeasureOrDie(*runner, first);
  ASSERT_EQ(r.status(), proto::MEASURE_OK) << r.error();
  EXPECT_FALSE(r.built_ahead());
  int built_ahead = 0;
  for (int i = 1; i < 4; ++i) {
    r = MeasureOrDie(*runner, p[i].request);
    ASSERT_EQ(r.status(), proto::MEASURE_OK) << r.error();
    EXPECT_EQ(r.structural_hash(), p[i].structural_hash);
    EXPECT_GE(r.times_s_size(), 3);
    built_ahead += r.built_ahead() ? 1 : 0;
  }
  EXPECT_GE(built_ahead, 1);
  r = MeasureOrDie(*runner, bad);
  EXPECT_EQ(r.status(), proto::MEASURE_BUILD_ERROR);
  EXPECT_THAT(r.error(), HasSubstr("factor 0 is not positive"));
}

// A kernel on every CPU the worker may use leaves none free while it runs:
// the hinted programs are built beside the first one the worker has to
// build itself, before its check and timing, and are then ready.
TEST(LocalRunner,
     BuildsTheHintedProgramsBesideItsOwnBuildWhenTheKernelUsesEveryCpu) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  const int cpus = CPU_COUNT(&allowed);
  if (cpus < 2) GTEST_SKIP() << "needs 2 CPUs, has " << cpus;
  auto runner = StartOrDie(Options());
  ASSERT_NE(runner, nullptr);
  std::vector<test_support::ScheduleRequest> p =
      test_support::FourSchedules("matmul:M=36,N=28,K=20", cpus);
  const proto::MeasureRequest bad = test_support::WithBadSplit(p[1].request);
  proto::MeasureRequest first = p[0].request;
  for (const proto::MeasureRequest& next :
       {p[1].request, p[2].request, p[3].request, bad}) {
    *first.add_build_ahead() = next.trace();
  }
  proto::MeasureResult r = MeasureOrDie(*runner, first);
  ASSERT_EQ(r.status(), proto::MEASURE_OK) << r.error();
  EXPECT_FALSE(r.built_ahead());
  for (int i = 1; i < 4; ++i) {
    r = MeasureOrDie(*runner, p[i].request);
    ASSERT_EQ(r.status(), proto::MEASURE_OK) << r.error();
    EXPECT_EQ(r.structural_hash(), p[i].structural_hash);
    EXPECT_GE(r.times_s_size(), 3);
    EXPECT_TRUE(r.built_ahead()) << "program " << i;
  }
  r = MeasureOrDie(*runner, bad);
  EXPECT_EQ(r.status(), proto::MEASURE_BUILD_ERROR);
  EXPECT_THAT(r.error(), HasSubstr("factor 0 is not positive"));
}

// A build-only request: the worker builds the program and its hints, checks
// and times nothing, and the requests that follow find them built.
TEST(LocalRunner, ABuildOnlyRequestBuildsTheProgramsOfTheRequestsThatFollow) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  const int cpus = CPU_COUNT(&allowed);
  auto runner = StartOrDie(Options());
  ASSERT_NE(runner, nullptr);
  std::vector<test_support::ScheduleRequest> p =
      test_support::FourSchedules("matmul:M=36,N=28,K=20", cpus);
  proto::MeasureRequest build_only = p[0].request;
  for (int i = 1; i < 4; ++i)
    *build_only.add_build_ahead() = p[i].request.trace();
  build_only.set_build_only(true);
  proto::MeasureResult r = MeasureOrDie(*runner, build_only);
  ASSERT_EQ(r.status(), proto::MEASURE_OK) << r.error();
  EXPECT_EQ(r.structural_hash(), p[0].structural_hash);
  EXPECT_EQ(r.times_s_size(), 0);
  EXPECT_EQ(r.run_ms(), 0);
  for (int i = 0; i < 4; ++i) {
    r = MeasureOrDie(*runner, p[i].request);
    ASSERT_EQ(r.status(), proto::MEASURE_OK) << r.error();
    EXPECT_EQ(r.structural_hash(), p[i].structural_hash);
    EXPECT_GE(r.times_s_size(), 3);
    EXPECT_TRUE(r.built_ahead()) << "program " << i;
  }
}

TEST(LocalRunner, WorkerDyingOnEveryRequestIsARunErrorAfterOneRetry) {
  // A fake worker: says hello, then dies as soon as a request arrives (before
  // its acknowledgement). Counts its starts in a file.
  std::string count = ::testing::TempDir() + "/starts";
  std::remove(count.c_str());
  LocalRunnerOptions options = Options();
  options.worker_argv = {
      "/bin/sh", "-c",
      "echo x >> " + count +
          "; printf '\\026\\000\\000\\000lathe-measure-worker 1'; "
          "head -c 1 >/dev/null; echo dying >&2; exit 5"};
  auto runner = StartOrDie(options);
  ASSERT_NE(runner, nullptr);
  proto::MeasureResult r = MeasureOrDie(*runner, DefaultCandidate().request);
  EXPECT_EQ(r.status(), proto::MEASURE_RUN_ERROR);
  EXPECT_EQ(r.error(), "exited with status 5; stderr: dying");
  std::ifstream starts(count);
  std::string all((std::istreambuf_iterator<char>(starts)),
                  std::istreambuf_iterator<char>());
  EXPECT_EQ(all, "x\nx\n");  // the worker of Start, and one replacement
}

TEST(LocalRunner, MissingWorkerIsAnErrorFromStart) {
  LocalRunnerOptions options = Options();
  options.worker_argv = {"/nonexistent/lathe-runner-worker"};
  absl::StatusOr<std::unique_ptr<LocalRunner>> runner =
      LocalRunner::Start(options);
  EXPECT_EQ(runner.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(runner.status().message(),
              HasSubstr("/nonexistent/lathe-runner-worker"));
  EXPECT_THAT(runner.status().message(),
              HasSubstr("No such file or directory"));
}

TEST(LocalRunner, ProgramThatIsNotAWorkerIsAnErrorFromStart) {
  LocalRunnerOptions options = Options();
  options.worker_argv = {"/bin/sh", "-c",
                         "echo 'unknown command runner-worker' >&2; exit 2"};
  absl::StatusOr<std::unique_ptr<LocalRunner>> runner =
      LocalRunner::Start(options);
  EXPECT_EQ(runner.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(runner.status().message(),
            "worker /bin/sh did not start: exited with status 2; stderr: "
            "unknown command "
            "runner-worker");
  options.worker_argv = {"/bin/true"};
  options.timeout_s = 0;
  EXPECT_EQ(LocalRunner::Start(options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace lathe::runner
