#include "cli/runner_worker_command.h"

#include <unistd.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "cli/command.h"
#include "runner/cuda/cuda_worker.h"
#include "runner/measure_worker.h"
#include "runner/worker_sandbox.h"

namespace lathe::cli {

void AddRunnerWorkerCommand(CLI::App& app) {
  // Hidden (empty group): how `lathe tune` and `lathe runner` run their
  // measurement worker (runner/measurable_target.h, WorkerFor).
  CLI::App* command = app.add_subcommand(
      "runner-worker", "serve measurement requests on stdin/stdout (internal)");
  command->group("");
  auto cuda = std::make_shared<bool>(false);
  command->add_flag("--cuda", *cuda, "measure CUDA kernels on this GPU");
  SetAction(command, [cuda] {
    const int code =
        *cuda ? runner::RunCudaMeasureWorker(
                    STDIN_FILENO, STDOUT_FILENO,
                    runner::SandboxConfinement(runner::WorkerKind::kCuda))
              : runner::RunMeasureWorker(STDIN_FILENO, STDOUT_FILENO,
                                         runner::SandboxConfinement());
    if (code != 0)
      return absl::InternalError(
          absl::StrCat("runner-worker exited with ", code));
    return absl::OkStatus();
  });
}

}  // namespace lathe::cli
