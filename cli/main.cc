// The `lathe` command: every user entry point (docs/architecture.md,
// "The command line"). Each command lives in its own cli/NAME_command.{h,cc};
// see cli/command.h for how to add one.
#include <grpc/support/log.h>

#include <cstdlib>

#include <CLI/CLI.hpp>

#include "cli/bench_command.h"
#include "cli/command.h"
#include "cli/compile_command.h"
#include "cli/db_command.h"
#include "cli/demo_command.h"
#include "cli/graph_command.h"
#include "cli/lower_command.h"
#include "cli/report_command.h"
#include "cli/run_command.h"
#include "cli/runner_command.h"
#include "cli/runner_worker_command.h"
#include "cli/serve_command.h"
#include "cli/service_client_commands.h"
#include "cli/tasks_command.h"
#include "cli/tune_command.h"
#include "cli/workloads_command.h"

int main(int argc, char** argv) {
  // gRPC's own log lines ("E1123 ... chttp2_server.cc:1045] UNKNOWN:Name or
  // service not known") came before a command's one-line error, which says
  // what failed; they are shown when asked for with GRPC_VERBOSITY.
  if (std::getenv("GRPC_VERBOSITY") == nullptr)
    gpr_set_log_function([](gpr_log_func_args*) {});
  CLI::App app{"Lathe: an auto-tuner for tensor programs", "lathe"};
  lathe::cli::ConfigureApp(app);
  // One line per command.
  lathe::cli::AddWorkloadsCommand(app);
  lathe::cli::AddLowerCommand(app);
  lathe::cli::AddDemoCommand(app);
  lathe::cli::AddCompileCommand(app);
  lathe::cli::AddBenchCommand(app);
  lathe::cli::AddDbCommand(app);
  lathe::cli::AddTuneCommand(app);
  lathe::cli::AddRunnerWorkerCommand(app);
  lathe::cli::AddServeCommand(app);
  lathe::cli::AddRunnerCommand(app);
  lathe::cli::AddServiceClientCommands(app);
  lathe::cli::AddGraphCommand(app);
  lathe::cli::AddTasksCommand(app);
  lathe::cli::AddRunCommand(app);
  lathe::cli::AddReportCommand(app);
  return lathe::cli::RunApp(app, argc, argv);
}
