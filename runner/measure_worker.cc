#include "runner/measure_worker.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "compiler/codegen/llvm/jit.h"
#include "compiler/codegen/prepacked_kernel.h"
#include "compiler/measure/reference_check.h"
#include "compiler/measure/timing.h"
#include "compiler/runtime/lathe_runtime.h"
#include "runner/build_ahead.h"
#include "runner/cache_flush.h"
#include "runner/candidate_build.h"
#include "runner/worker_loop.h"

namespace lathe::runner {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

proto::MeasureResult Failed(proto::MeasureStatus status,
                            absl::string_view prefix,
                            const absl::Status& error) {
  proto::MeasureResult result;
  result.set_status(status);
  result.set_error(absl::StrCat(prefix, error.message()));
  return result;
}

// The buffers a kernel is timed on: every tensor, 64-byte aligned. Values
// do not matter for time as long as they are ordinary finite numbers
// (denormals and NaNs can be slow).
class KernelBuffers {
 public:
  explicit KernelBuffers(const Workload& workload) {
    for (const auto* list : {&workload.inputs(), &workload.outputs()}) {
      for (const te::Tensor& t : *list) {
        int64_t n = 1;
        for (int64_t d : t.shape()) n *= d;
        auto* p = static_cast<float*>(
            lathe_alloc(static_cast<uint64_t>(n) * sizeof(float), 64));
        if (p == nullptr) throw std::bad_alloc();
        std::fill(p, p + n, 0.5f);
        storage_.emplace_back(p);
        args_.push_back(p);
      }
    }
  }
  const std::vector<float*>& args() const { return args_; }

 private:
  struct Free {
    void operator()(float* p) const { lathe_free(p); }
  };
  std::vector<std::unique_ptr<float, Free>> storage_;
  std::vector<float*> args_;
};

// Warm-up before the samples of one request: at least one call, then calls
// until this much time has passed. Why so short: a tuning run spends it in
// every round of every candidate, and for kernels timed right after another
// kernel has run, longer warm-ups did not change the fastest or the median
// sample beyond the run-to-run noise (bench/README.md, "Why the code is as
// it is"). The check, when it runs, has called the kernel once already.
constexpr double kWarmupS = 0.01;

// The kernels (by their code's address: the JIT keeps a kernel loaded for
// the life of the process, and returns the same one for the same program)
// whose reference check passed in this process, with the check's seed.
class PassedChecks {
 public:
  bool Contains(const void* kernel, uint64_t seed) const {
    return passed_.contains(std::make_pair(kernel, seed));
  }
  void Add(const void* kernel, uint64_t seed) {
    passed_.insert(std::make_pair(kernel, seed));
  }

 private:
  absl::flat_hash_set<std::pair<const void*, uint64_t>> passed_;
};

// Built and run once before a confined worker takes requests: small, and
// of a form whose kernel starts the runtime's thread pool.
constexpr char kWarmUpWorkload[] = "relu:M=64,N=64";

// Tests only: what inject_fault asks for, after the build. "socket" and
// "open_file" do what a hostile kernel would, where a kernel runs: open a
// network socket, open a file (this process's /proc/self/status, read
// only); a confined worker (worker_sandbox.h) must stop both.
enum class Fault {
  kNone,
  kCrash,
  kHang,
  kWrongResult,
  kOom,
  kSocket,
  kOpenFile,
  kUnpackedWeights
};

absl::StatusOr<Fault> ParseFault(const std::string& name) {
  if (name.empty()) return Fault::kNone;
  if (name == "crash") return Fault::kCrash;
  if (name == "hang") return Fault::kHang;
  if (name == "wrong_result") return Fault::kWrongResult;
  if (name == "oom") return Fault::kOom;
  if (name == "socket") return Fault::kSocket;
  if (name == "open_file") return Fault::kOpenFile;
  if (name == "unpacked_weights") return Fault::kUnpackedWeights;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown inject_fault \"", name,
                   "\" (accepted: crash, hang, wrong_result, oom, socket, "
                   "open_file, unpacked_weights)"));
}

// What the "socket" and "open_file" faults did: an error when the call was
// refused; OK when it went through (the descriptor is closed at once).
absl::Status TryForbiddenCall(Fault fault) {
  const int fd = fault == Fault::kSocket
                     ? socket(AF_INET, SOCK_STREAM, 0)
                     : open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::PermissionDeniedError(absl::StrCat(
        "inject_fault ", fault == Fault::kSocket ? "socket" : "open_file", ": ",
        std::strerror(errno)));
  }
  close(fd);
  return absl::OkStatus();
}

// Allocates (and touches) memory until the allocator refuses: std::bad_alloc
// under a memory limit. Without one it would take the machine's memory, so
// it refuses instead.
absl::Status ExhaustMemory() {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
    return absl::FailedPreconditionError(
        "inject_fault oom: this process has no memory limit");
  }
  constexpr size_t kChunk = size_t{64} << 20;
  std::vector<std::unique_ptr<char[]>> chunks;
  chunks.reserve(static_cast<size_t>(limit.rlim_cur / kChunk) + 1);
  for (;;) {
    chunks.emplace_back(new char[kChunk]);
    std::memset(chunks.back().get(), 1, kChunk);
  }
}

[[noreturn]] void Crash() {
  // The default action, whatever handlers a library installed.
  signal(SIGSEGV, SIG_DFL);
  raise(SIGSEGV);
  std::abort();
}

[[noreturn]] void Hang() {
  for (;;) sleep(1);
}

proto::MeasureResult MeasureUnguarded(const proto::MeasureRequest& request,
                                      BuildAhead* ahead) {
  proto::MeasureResult result;
  absl::StatusOr<Fault> fault = ParseFault(request.inject_fault());
  if (!fault.ok()) return Failed(proto::MEASURE_RUN_ERROR, "", fault.status());

  // A build-only request: built and kept for the requests that follow, on
  // every CPU; without a BuildAhead nothing can be kept, and only its own
  // trace is built, for its status.
  if (request.build_only()) {
    if (ahead != nullptr) return ahead->BuildAll(request);
    CandidateBuild build = BuildForMeasurement(request);
    if (!build.ok()) return build.failure;
    result.set_status(proto::MEASURE_OK);
    result.set_structural_hash(build.structural_hash);
    result.set_build_ms(build.build_ms);
    return result;
  }

  // 1. Build (or take the build done ahead).
  CandidateBuild build =
      ahead != nullptr ? ahead->Take(request) : BuildForMeasurement(request);
  if (!build.ok()) return build.failure;
  const Workload& workload = *build.workload;
  const CompiledKernel& kernel = *build.kernel;
  result.set_structural_hash(build.structural_hash);
  result.set_build_ms(build.build_ms);
  result.set_built_ahead(build.built_ahead);

  Clock::time_point run_start = Clock::now();
  switch (*fault) {
    case Fault::kCrash:
      Crash();
    case Fault::kHang:
      Hang();
    case Fault::kOom:
      if (absl::Status st = ExhaustMemory(); !st.ok()) {
        proto::MeasureResult failed = Failed(proto::MEASURE_RUN_ERROR, "", st);
        failed.set_structural_hash(build.structural_hash);
        return failed;
      }
      break;
    case Fault::kSocket:
    case Fault::kOpenFile:
      if (absl::Status st = TryForbiddenCall(*fault); !st.ok()) {
        proto::MeasureResult failed = Failed(proto::MEASURE_RUN_ERROR, "", st);
        failed.set_structural_hash(build.structural_hash);
        return failed;
      }
      break;
    case Fault::kNone:
    case Fault::kWrongResult:
    case Fault::kUnpackedWeights:
      break;
  }

  // 2. Check. The kernel's own failure is told apart from a wrong result.
  //    A kernel already checked in this worker on the same inputs is not
  //    checked again: a batch measured in rounds asks for each candidate
  //    several times, and its code (the JIT cache returns the very same
  //    function) and the check's inputs are what they were.
  Clock::time_point check_start = Clock::now();
  static PassedChecks* passed_checks = new PassedChecks();
  const bool check_reused =
      *fault == Fault::kNone &&
      passed_checks->Contains(kernel.function(), request.check_seed());
  absl::Status kernel_status;
  PackedArguments packed(build.prepacks);
  KernelCall call = [&](const std::vector<float*>& args) {
    absl::StatusOr<std::vector<float*>> kernel_args =
        packed.Pack(args, *fault == Fault::kUnpackedWeights);
    kernel_status =
        kernel_args.ok() ? kernel.Run(*kernel_args) : kernel_args.status();
    if (kernel_status.ok() && *fault == Fault::kWrongResult) {
      float* out = args.back();
      out[0] = out[0] * 2 + 1000;
    }
    return kernel_status;
  };
  // Candidates of one workload share the check's seed: its reference
  // outputs are computed once per worker.
  static ReferenceCache* reference_cache = new ReferenceCache();
  if (absl::Status st = check_reused ? absl::OkStatus()
                                     : CheckAgainstReference(
                                           workload, call, request.check_seed(),
                                           reference_cache);
      !st.ok()) {
    proto::MeasureStatus status =
        !kernel_status.ok() ? proto::MEASURE_RUN_ERROR
        : st.code() == absl::StatusCode::kFailedPrecondition
            ? proto::MEASURE_WRONG_RESULT
            : proto::MEASURE_RUN_ERROR;
    result.set_status(status);
    result.set_error(absl::StrCat(
        status == proto::MEASURE_WRONG_RESULT ? "reference check: " : "",
        st.message()));
    result.set_check_ms(MsSince(check_start));
    result.set_run_ms(MsSince(run_start));
    return result;
  }

  if (*fault == Fault::kNone)
    passed_checks->Add(kernel.function(), request.check_seed());
  result.set_check_reused(check_reused);
  result.set_check_ms(MsSince(check_start));

  // 3. Time.
  TimingOptions timing;
  timing.warmup_s = kWarmupS;
  timing.min_time_s = std::max(0.0, request.min_time_s());
  timing.min_samples = std::max(1, request.min_repeats());
  timing.max_samples =
      std::max(timing.min_samples,
               request.max_repeats() > 0 ? request.max_repeats() : 100000);
  KernelBuffers buffers(workload);
  // The prepacks run once, before the samples: only the kernel is timed.
  absl::StatusOr<std::vector<float*>> timed_args =
      packed.Pack(buffers.args(), /*unpacked=*/false);
  if (!timed_args.ok()) {
    result.set_status(proto::MEASURE_RUN_ERROR);
    result.set_error(absl::StrCat("prepack: ", timed_args.status().message()));
    result.set_run_ms(MsSince(run_start));
    return result;
  }
  auto run = [&] { return kernel.Run(*timed_args); };
  absl::StatusOr<TimingStats> stats;
  if (request.flush_cache()) {
    // Made per request: 2x the cache is tens of MiB the worker need not keep.
    CacheFlusher flusher = CacheFlusher::ForThisMachine();
    stats = TimeWithCacheFlush(run, timing, flusher);
  } else {
    stats = TimeRepeatedly(run, timing);
  }
  result.set_run_ms(MsSince(run_start));
  if (!stats.ok()) {
    result.set_status(proto::MEASURE_RUN_ERROR);
    result.set_error(absl::StrCat("timing: ", stats.status().message()));
    return result;
  }
  for (double t : stats->samples_s) result.add_times_s(t);
  result.set_status(proto::MEASURE_OK);
  return result;
}

// The CPUs this process may run on, in ascending order: the order in which
// the runtime pins a kernel's threads to them.
std::vector<int> AllowedCpus() {
  std::vector<int> cpus;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  }
  return cpus;
}

}  // namespace

proto::MeasureResult MeasureCandidate(const proto::MeasureRequest& request,
                                      BuildAhead* ahead) {
  try {
    return MeasureUnguarded(request, ahead);
  } catch (const std::bad_alloc&) {
    proto::MeasureResult result;
    result.set_status(proto::MEASURE_RUN_ERROR);
    result.set_error(MemoryLimitText());
    result.set_over_limit(true);
    return result;
  } catch (const std::exception& e) {
    proto::MeasureResult result;
    result.set_status(proto::MEASURE_RUN_ERROR);
    result.set_error(absl::StrCat("exception: ", e.what()));
    return result;
  }
}

void PrepareMeasurementProcess() {
  // 1. The runtime reads these when its pool starts: pin every thread. The
  //    thread count is each target's (CompiledKernel::Call sets it), never
  //    the environment's.
  setenv("LATHE_PIN_THREADS", "1", /*overwrite=*/1);
  unsetenv("LATHE_NUM_THREADS");
  // 2. Let the runtime see every allowed CPU before this thread is pinned
  //    (it remembers them; the pool pins its workers to that list).
  lathe_set_num_threads(0);
  // 3. The calling thread on the first allowed CPU, where the pool would put
  //    it too; also for one-thread kernels, which never start the pool.
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (!CPU_ISSET(cpu, &allowed)) continue;
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      sched_setaffinity(0, sizeof one,
                        &one);  // best effort: pinning is not correctness
      break;
    }
  }
}

int RunMeasureWorker(int in_fd, int out_fd,
                     const WorkerConfinement& confinement) {
  // Before PrepareMeasurementProcess pins this thread to the first of them.
  const std::vector<int> cpus = AllowedCpus();
  PrepareMeasurementProcess();
  std::optional<BuildAhead> ahead;
  return ServeMeasureRequests(
      in_fd, out_fd, confinement, [&]() -> absl::StatusOr<MeasureFunction> {
        ahead.emplace(cpus);
        if (confinement.before_requests) {
          // What the first build loads (LLVM's JIT session, the runtime's
          // pool on every allowed CPU), loaded now, before the filter closes
          // the door.
          CandidateBuild warm_up =
              BuildForMeasurement(kWarmUpWorkload, nullptr, "host");
          if (warm_up.ok()) {
            KernelBuffers buffers(*warm_up.workload);
            [[maybe_unused]] const absl::Status ran =
                warm_up.kernel->Run(buffers.args());
          }
        }
        return [&](const proto::MeasureRequest& request) {
          if (!request.build_only()) ahead->Add(request);
          return MeasureCandidate(request, &*ahead);
        };
      });
}

}  // namespace lathe::runner
