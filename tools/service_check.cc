// `lathe-gpu-check --service-check` (service_check.h).
#include "tools/service_check.h"

#include <stdlib.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "compiler/codegen/cuda/cuda_target.h"
#include "rpc/channel.h"
#include "runner/remote/remote_runner.h"
#include "tuner/service/daemon.h"
#include "tuner/service/server.h"
#include "tuner/service/state_names.h"

namespace lathe::tools {
namespace {

constexpr char kToken[] = "lathe-gpu-check-service";
constexpr int kTrials = 24;
constexpr absl::Duration kJobDeadline = absl::Seconds(120);

bool Fail(const std::string& what) {
  std::printf("FAIL service: %s\n", what.c_str());
  std::fflush(stdout);
  return false;
}

}  // namespace

bool CheckService(const std::string& worker_program, const Target& target,
                  const std::string& device, double simulate_ms) {
  // Loopback never goes through a proxy; gRPC would honour one from the
  // environment for the runner's channel.
  for (const char* name : {"grpc_proxy", "https_proxy", "http_proxy",
                           "GRPC_PROXY", "HTTPS_PROXY", "HTTP_PROXY"}) {
    unsetenv(name);
  }
  char dir[] = "/tmp/lathe_gpu_service_XXXXXX";
  if (mkdtemp(dir) == nullptr) return Fail("cannot make a temporary folder");
  service::DaemonOptions options;
  options.compiler.parse_target = [](const std::string& text) {
    return cuda::ParseCudaTarget(text);
  };
  options.db_path = absl::StrCat(dir, "/service.db");
  options.scratch_dir = dir;
  options.log = false;
  options.lathe_version = "lathe-gpu-check";
  absl::StatusOr<std::unique_ptr<service::Daemon>> daemon =
      service::Daemon::Start(options);
  if (!daemon.ok())
    return Fail(absl::StrCat("the daemon: ", daemon.status().message()));
  rpc::ServerSecurity security;
  security.token = kToken;
  absl::StatusOr<std::unique_ptr<service::Server>> server =
      service::Server::Start(**daemon, "127.0.0.1:0", security,
                             rpc::kMaxServiceMessageBytes);
  if (!server.ok()) {
    (*daemon)->Shutdown();
    return Fail(absl::StrCat("the server: ", server.status().message()));
  }

  std::atomic<bool> stop{false}, runner_ended{false};
  absl::Status runner_status;
  std::thread runner([&] {
    runner::RemoteRunnerOptions r;
    r.channel.address = absl::StrCat("127.0.0.1:", (*server)->port());
    r.channel.token = kToken;
    r.name = "gpu-check-runner";
    r.target = target.ToString();
    r.device = device;
    r.lathe_version = "lathe-gpu-check";
    r.local.worker_argv = {worker_program, "--worker"};
    r.local.memory_limit_bytes = 0;  // as runner::WorkerFor sets for cuda
    r.local.timeout_s = 60;
    r.simulate_ms = simulate_ms;
    r.acquire_wait_s = 0.5;
    r.stop = &stop;
    r.log = false;
    runner_status = runner::RunRemoteRunner(r);
    runner_ended.store(true);
  });

  proto::JobSpec spec;
  spec.add_workloads("softmax:M=64,N=1000");
  spec.add_workloads("matmul:M=256,N=256,K=256");
  spec.set_target(target.ToString());
  spec.set_max_trials(kTrials);
  spec.set_batch_size(8);
  spec.set_min_time_s(0.005);
  spec.set_remeasure_top(-1);
  spec.set_simulated(simulate_ms > 0);
  bool passed = false;
  absl::StatusOr<proto::JobStatus> job = (*daemon)->Submit(spec);
  if (!job.ok()) {
    Fail(absl::StrCat("submit: ", job.status().message()));
  } else {
    const absl::Time start = absl::Now();
    const std::string id = job->id();
    // Until the job ends, or the runner does (a worker that cannot start
    // ends it at once: no one would measure the job).
    while (absl::Now() - start < kJobDeadline && !runner_ended.load()) {
      job = (*daemon)->GetJob(id);
      if (!job.ok() || job->state() == proto::JOB_DONE ||
          job->state() == proto::JOB_FAILED ||
          job->state() == proto::JOB_CANCELLED) {
        break;
      }
      absl::SleepFor(absl::Milliseconds(100));
    }
    const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
    if (!job.ok()) {
      Fail(absl::StrCat("job ", id, ": ", job.status().message()));
    } else if (job->state() != proto::JOB_DONE) {
      Fail(absl::StrCat("job ", id, " is ", service::JobStateName(job->state()),
                        " after ", seconds, " s (", job->trials_done(), " of ",
                        job->trials_total(), " trials) ", job->error()));
    } else {
      std::string tasks;
      passed = job->trials_done() == job->trials_total() &&
               job->tasks_size() == spec.workloads_size();
      for (const proto::TaskStatus& task : job->tasks()) {
        passed &= task.best_s() > 0;
        absl::StrAppend(&tasks, "; ", task.workload(), ": ", task.trials(),
                        " trials, ", task.errors(), " errors, best ",
                        task.best_s() * 1e3, " ms");
      }
      std::printf(
          "%s service: job %s done in %.1f s through a %sremote runner "
          "on loopback gRPC, %lld of %lld trials%s\n",
          passed ? "PASS" : "FAIL", id.c_str(), seconds,
          simulate_ms > 0 ? "simulated " : "",
          static_cast<long long>(job->trials_done()),
          static_cast<long long>(job->trials_total()), tasks.c_str());
      std::fflush(stdout);
    }
  }
  stop.store(true);
  runner.join();
  (*server)->Shutdown();
  (*daemon)->Shutdown();
  if (!runner_status.ok()) {
    passed =
        Fail(absl::StrCat("the runner ended with: ", runner_status.message()));
  } else {
    std::printf("PASS service: the runner stopped cleanly\n");
  }
  std::error_code error;
  std::filesystem::remove_all(dir, error);
  return passed;
}

}  // namespace lathe::tools
