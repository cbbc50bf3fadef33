// The tuning service's dispatch benchmark (bench/README.md,
// "bench_dispatch"): how fast the daemon hands candidates to runners and takes
// their results, with N simulated runners on loopback.
//
// DISPATCH BENCHMARK: the runners measure nothing. Each is the real remote
// runner (runner/remote/remote_runner.h, real gRPC over 127.0.0.1, token
// checked on every call) in `--simulate-ms` mode: it answers each candidate
// after a fixed delay with a fake time. The daemon is the real one
// (tuner/service/daemon.h + server.h); candidates are queued straight into
// its lease manager, as a job's measure function does, so the search's own
// time is not part of the figure.
//
// For each N: K = N * per_runner candidates queued at once, the wall time
// until every result is back. Ideal: K / N * delay. Reported: throughput,
// scaling against N = 1 (target >= 0.9 N), and the dispatch overhead per
// candidate, wall * N / K - delay (target <= 1 ms): the time a runner spends
// per candidate on anything but the simulated measurement (AcquireWork,
// ReportResult, the lease bookkeeping, the wake-ups).
//
// Runners fetch their next lease while they measure (the default,
// runner/remote/lease_courier.h); --no-prefetch measures the runner that
// asks only when done, one round trip per candidate.
//
// Usage: bench_dispatch [--runners 1,2,4,8,16] [--delay-ms 20] [--per-runner
// 50]
//                       [--no-prefetch] [--json FILE]
#include <grpcpp/grpcpp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/kernel_program.h"
#include "compiler/workload/spec.h"
#include "proto/service.grpc.pb.h"
#include "runner/remote/remote_runner.h"
#include "tuner/service/compiler_hooks.h"
#include "tuner/service/daemon.h"
#include "tuner/service/server.h"

namespace {

using namespace lathe;

struct Row {
  int runners = 0;
  int candidates = 0;
  double delay_ms = 0;
  double wall_s = 0;
  double throughput = 0;  // candidates per second
  double scaling = 0;     // throughput / throughput at N = 1
  double overhead_ms =
      0;                // per candidate, per runner, against the nominal delay
  double slept_ms = 0;  // the delay as it really passed, mean
  double dispatch_ms = 0;  // overhead_ms less the sleep's overshoot
  double cpu_ms =
      0;  // CPU time of the whole process (daemon, runners) per candidate
};

double ProcessCpuSeconds() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) *
             1e-6;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "bench_dispatch: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> runner_counts = {1, 2, 4, 8, 16};
  double delay_ms = 20;
  int per_runner = 50;
  std::string json_path;
  bool prefetch = true;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (arg == "--runners" && value) {
      runner_counts.clear();
      for (absl::string_view part : absl::StrSplit(value, ',')) {
        int n = 0;
        if (!absl::SimpleAtoi(part, &n) || n < 1)
          return Fail("--runners: a list of counts >= 1");
        runner_counts.push_back(n);
      }
      ++i;
    } else if (arg == "--delay-ms" && value) {
      if (!absl::SimpleAtod(value, &delay_ms) || delay_ms <= 0)
        return Fail("--delay-ms > 0");
      ++i;
    } else if (arg == "--per-runner" && value) {
      if (!absl::SimpleAtoi(value, &per_runner) || per_runner < 1)
        return Fail("--per-runner >= 1");
      ++i;
    } else if (arg == "--no-prefetch") {
      prefetch = false;
    } else if (arg == "--json" && value) {
      json_path = value;
      ++i;
    } else {
      return Fail(absl::StrCat(
          "unknown argument ", arg,
          " (--runners LIST --delay-ms MS --per-runner N --no-prefetch "
          "--json FILE)"));
    }
  }

  char pattern[] = "/tmp/lathe_dispatch_bench_XXXXXX";
  const std::string dir = mkdtemp(pattern);
  const std::string target = ParseTarget("llvm -num-threads=1")->ToString();
  // A realistic payload: the default schedule's trace of a 512^3 matmul.
  proto::MeasureRequest request;
  {
    Workload workload = ParseWorkloadSpec("matmul:M=512,N=512,K=512").value();
    absl::StatusOr<KernelProgram> kernel =
        MakeKernelProgram(workload, nullptr, *ParseTarget(target));
    if (!kernel.ok()) return Fail(std::string(kernel.status().message()));
    request.set_workload(workload.CanonicalForm());
    kernel->trace.ToProto(request.mutable_trace());
    request.set_target(target);
    request.set_min_time_s(0.1);
  }

  std::printf(
      "DISPATCH BENCHMARK: simulated runners (no measurement), %.1f ms per "
      "candidate,\n"
      "real daemon and runners over gRPC on 127.0.0.1 with token auth; %d "
      "candidates "
      "per runner; request %zu bytes; runners %s\n\n",
      delay_ms, per_runner, request.ByteSizeLong(),
      prefetch ? "fetch the next lease while measuring (prefetch)"
               : "ask for the next lease when done (--no-prefetch)");
  std::printf("%8s %11s %9s %11s %9s %7s %13s %10s %13s %8s\n", "runners",
              "candidates", "wall s", "cand/s", "scaling", "ideal",
              "overhead ms", "slept ms", "dispatch ms", "cpu ms");
  std::vector<Row> rows;
  for (int n : runner_counts) {
    service::DaemonOptions options;
    options.compiler = service::CompilerHooks();
    options.db_path = dir + "/bench.db";
    options.scratch_dir = dir;
    options.log = false;
    options.lease_time = absl::Seconds(30);
    absl::StatusOr<std::unique_ptr<service::Daemon>> daemon =
        service::Daemon::Start(options);
    if (!daemon.ok()) return Fail(std::string(daemon.status().message()));
    rpc::ServerSecurity security;
    security.token = "bench-token";
    absl::StatusOr<std::unique_ptr<service::Server>> server =
        service::Server::Start(**daemon, "127.0.0.1:0", security,
                               rpc::kMaxServiceMessageBytes);
    if (!server.ok()) return Fail(std::string(server.status().message()));

    std::atomic<bool> stop{false};
    std::vector<std::thread> runners;
    for (int r = 0; r < n; ++r) {
      runners.emplace_back([&, r] {
        runner::RemoteRunnerOptions remote;
        remote.channel.address = absl::StrCat("127.0.0.1:", (*server)->port());
        remote.channel.token = "bench-token";
        remote.name = absl::StrCat("sim-", r);
        remote.target = target;
        remote.simulate_ms = delay_ms;
        remote.acquire_wait_s = 0.5;
        remote.prefetch = prefetch;
        remote.stop = &stop;
        remote.log = false;
        absl::Status status = runner::RunRemoteRunner(remote);
        if (!status.ok())
          std::fprintf(stderr, "runner %d: %s\n", r,
                       std::string(status.message()).c_str());
      });
    }
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (static_cast<int>((*daemon)->ListRunners().size()) < n) {
      if (std::chrono::steady_clock::now() > deadline)
        return Fail("runners did not register");
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (n == runner_counts.front()) {
      // For scale: one authenticated unary round trip on this machine now.
      rpc::ChannelOptions channel;
      channel.address = absl::StrCat("127.0.0.1:", (*server)->port());
      auto stub =
          proto::TunerService::NewStub(rpc::MakeChannel(channel).value());
      constexpr int kCalls = 200;
      auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < kCalls + 20; ++i) {
        if (i == 20) start = std::chrono::steady_clock::now();  // after warm-up
        grpc::ClientContext context;
        rpc::PrepareContext(context, "bench-token", 10);
        proto::ListJobsResponse response;
        (void)stub->ListJobs(&context, proto::ListJobsRequest(), &response);
      }
      std::printf("(one unary RPC round trip: %.3f ms)\n",
                  std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - start)
                          .count() /
                      kCalls);
    }
    double slept_s = 0;  // the runners' actual delays, summed
    double cpu_s = 0;
    auto run = [&](int count) {
      std::vector<int64_t> items;
      slept_s = 0;
      const double cpu_start = ProcessCpuSeconds();
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < count; ++i) {
        items.push_back((*daemon)->leases().Enqueue(
            service::WorkItem{"bench", true, request}));
      }
      for (int64_t item : items) {
        absl::StatusOr<proto::MeasureResult> result =
            (*daemon)->leases().Wait(item);
        if (result.ok() && result->times_s_size() > 0)
          slept_s += result->times_s(0);
      }
      cpu_s = ProcessCpuSeconds() - cpu_start;
      return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                           start)
          .count();
    };
    run(n * 2);  // warm-up: connections up, every runner polling
    Row row;
    row.runners = n;
    row.candidates = n * per_runner;
    row.delay_ms = delay_ms;
    row.wall_s = run(row.candidates);
    row.throughput = row.candidates / row.wall_s;
    // Against the measured single runner when there is one, else against
    // the ideal single runner (1 / delay).
    row.scaling = !rows.empty() && rows.front().runners == 1
                      ? row.throughput / rows.front().throughput
                      : (n == 1 ? 1.0 : row.throughput / (1000.0 / delay_ms));
    row.overhead_ms = row.wall_s * 1e3 * n / row.candidates - delay_ms;
    row.slept_ms = slept_s * 1e3 / row.candidates;
    row.dispatch_ms = row.wall_s * 1e3 * n / row.candidates - row.slept_ms;
    row.cpu_ms = cpu_s * 1e3 / row.candidates;
    rows.push_back(row);
    std::printf(
        "%8d %11d %9.3f %11.1f %9.2f %7.1f %13.3f %10.3f %13.3f %8.3f\n", n,
        row.candidates, row.wall_s, row.throughput, row.scaling,
        static_cast<double>(n), row.overhead_ms, row.slept_ms, row.dispatch_ms,
        row.cpu_ms);
    std::fflush(stdout);
    stop.store(true);
    for (std::thread& t : runners) t.join();
    (*server)->Shutdown();
    (*daemon)->Shutdown();
  }
  std::system(absl::StrCat("rm -rf ", dir).c_str());
  std::printf(
      "\nscaling: throughput against 1 runner (target >= 0.9 x runners). "
      "overhead: wall x "
      "runners / candidates - delay, per candidate; slept: the delay as it "
      "really passed in the "
      "runner (sleep overshoot under load); dispatch: overhead less the "
      "overshoot (target <= 1 "
      "ms)\n");
  if (!json_path.empty()) {
    std::vector<std::string> items;
    for (const Row& r : rows) {
      items.push_back(absl::StrFormat(
          "{\"runners\": %d, \"candidates\": %d, \"delay_ms\": %.3f, "
          "\"wall_s\": %.4f, "
          "\"throughput\": %.2f, \"scaling\": %.3f, \"overhead_ms\": %.4f, "
          "\"slept_ms\": %.4f, "
          "\"dispatch_ms\": %.4f, \"cpu_ms\": %.4f}",
          r.runners, r.candidates, r.delay_ms, r.wall_s, r.throughput,
          r.scaling, r.overhead_ms, r.slept_ms, r.dispatch_ms, r.cpu_ms));
    }
    std::ofstream(json_path)
        << "{\"benchmark\": \"dispatch (simulated runners)\", \"prefetch\": "
        << (prefetch ? "true" : "false") << ", \"rows\": [\n  "
        << absl::StrJoin(items, ",\n  ") << "\n]}\n";
  }
  return 0;
}
