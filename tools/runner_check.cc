#include "tools/runner_check.h"

#include <cstdio>
#include <functional>
#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "proto/measure.pb.h"
#include "runner/local_runner.h"

namespace lathe::tools {
namespace {

struct Step {
  const char* name;
  const char* workload;
  std::string target;
  const char* fault;  // inject_fault, "" for none
  // Whether the result is the one expected.
  std::function<bool(const proto::MeasureResult&)> expected;
};

bool Ok(const proto::MeasureResult& r) {
  return r.status() == proto::MEASURE_OK && r.times_s_size() > 0;
}

bool RunErrorWith(const proto::MeasureResult& r, const char* text) {
  return r.status() == proto::MEASURE_RUN_ERROR &&
         absl::StrContains(r.error(), text);
}

}  // namespace

bool CheckRunner(const std::string& worker_program, const Target& target) {
  runner::LocalRunnerOptions options;
  options.worker_argv = {worker_program, "--worker"};
  options.memory_limit_bytes = 0;  // as runner::WorkerFor sets for cuda
  options.timeout_s = 60;
  absl::StatusOr<std::unique_ptr<runner::LocalRunner>> local =
      runner::LocalRunner::Start(options);
  if (!local.ok()) {
    std::printf("FAIL runner: the CUDA worker did not start: %s\n",
                std::string(local.status().message()).c_str());
    return false;
  }
  const std::string other_arch =
      target.cpu == "sm_90" ? "cuda -arch=sm_80" : "cuda -arch=sm_90";
  const std::vector<Step> steps = {
      {"matmul 256^3", "matmul:M=256,N=256,K=256", target.ToString(), "", Ok},
      {"illegal address", "matmul:M=256,N=256,K=256", target.ToString(),
       "illegal_address",
       [](const proto::MeasureResult& r) {
         return r.status() == proto::MEASURE_RUN_ERROR;
       }},
      {"next candidate after the fault", "softmax:M=64,N=1000",
       target.ToString(), "", Ok},
      {"worker crash", "softmax:M=64,N=1000", target.ToString(), "crash",
       [](const proto::MeasureResult& r) {
         return RunErrorWith(r, "signal 6");
       }},
      {"next candidate after the crash",
       "conv2d_nchw:N=1,C=64,H=28,W=28,K=64,R=3,S=3,pad=1", target.ToString(),
       "", Ok},
      {"file opened for writing", "relu:M=64,N=64", target.ToString(),
       "open_file",
       [](const proto::MeasureResult& r) {
         return RunErrorWith(r, "sandbox refused: open");
       }},
      {"another architecture", "relu:M=64,N=64", other_arch, "",
       [](const proto::MeasureResult& r) {
         return r.status() == proto::MEASURE_BUILD_ERROR &&
                absl::StrContains(r.error(), "cannot be measured");
       }},
      {"after every fault", "matmul:M=256,N=256,K=256", target.ToString(), "",
       Ok},
  };
  bool all = true;
  for (const Step& step : steps) {
    proto::MeasureRequest request;
    request.set_workload(step.workload);
    request.set_target(step.target);
    request.set_inject_fault(step.fault);
    request.set_min_time_s(0.01);
    request.set_min_repeats(3);
    request.set_check_seed(1);
    absl::StatusOr<proto::MeasureResult> result = (*local)->Measure(request);
    const bool pass = result.ok() && step.expected(*result);
    all = all && pass;
    std::printf("%s runner %s: %s\n", pass ? "PASS" : "FAIL", step.name,
                !result.ok()
                    ? std::string(result.status().message()).c_str()
                    : absl::StrCat(proto::MeasureStatus_Name(result->status()),
                                   result->error().empty() ? "" : ": ",
                                   result->error().substr(0, 300))
                          .c_str());
    std::fflush(stdout);
  }
  return all;
}

}  // namespace lathe::tools
