// `lathe tune`: the embedded default (docs/architecture.md, "The embedded
// default"). The search runs in this process, candidates are measured by a
// local worker process (`lathe runner-worker`, hidden), results go to the
// database (lathe.db). Ctrl-C stops after the candidate being measured with
// everything committed; running again continues from the database. The
// progress display is in tune_progress.h, the worker's entry in
// runner_worker_command.h.
//
// The workloads are specs, or one model (MODEL.onnx [--shape ...]): its
// tasks (model_tasks.h), each weighted by how often the model calls it, so
// that the task scheduler's objective is the model's latency. A model's
// tasks and a --workloads-file's workloads that the database has tuned
// already (tuned_tasks.h) are skipped unless --retune; specs named on the
// command line are always tuned.
// Tests: tests/cli/tune_commands_test.sh, tests/cli/tune_model_test.sh.
#pragma once

#include <CLI/CLI.hpp>

namespace lathe::cli {

void AddTuneCommand(CLI::App& app);

}  // namespace lathe::cli
