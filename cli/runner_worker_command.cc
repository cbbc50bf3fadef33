#include "cli/runner_worker_command.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "cli/command.h"
#include "runner/measure_worker.h"
#include "runner/worker_sandbox.h"

namespace lathe::cli {

void AddRunnerWorkerCommand(CLI::App& app) {
  // Hidden (empty group): how `lathe tune` runs its measurement worker.
  CLI::App* command = app.add_subcommand(
      "runner-worker", "serve measurement requests on stdin/stdout (internal)");
  command->group("");
  SetAction(command, [] {
    const int code = runner::RunMeasureWorker(STDIN_FILENO, STDOUT_FILENO,
                                              runner::SandboxConfinement());
    if (code != 0)
      return absl::InternalError(
          absl::StrCat("runner-worker exited with ", code));
    return absl::OkStatus();
  });
}

}  // namespace lathe::cli
