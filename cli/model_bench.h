// `lathe bench MODEL.onnx`: a model's end-to-end latency on Lathe's kernels
// and where its time goes.
//
//   lathe bench resnet18.onnx --db tuned.db --threads 1 --runs 50 [--json]
//
// Loads the model for the target (kernels from the database where it has a
// record, default schedules otherwise; api/model.h), feeds every input
// deterministic random data (compiler/interp/random_fill.h, seeds 1, 2, ...
// in input order), runs it kWarmupRuns times, then alternates R timed runs
// with R runs that time each step (api::Model's step_seconds), so that both
// see the same state of the machine. Reports the timed runs' median, min,
// p90, max, mean and stddev; per distinct kernel workload (in the order of
// `lathe tasks`) its count, its time per run (the sum over its calls of each
// call's median), its share of the steps' total and whether it is tuned;
// host steps and views together as one row. The shares sum to 100% of the
// steps' total. The time between steps (argument checks, the workspace,
// output copies) is the median over the profiled runs of each run's wall
// time less its steps' times.
// Errors: those of the model's import and load (naming the file, node or
// input), a bad --shape (quoting it), a target that cannot run here, a
// kernel that fails.
// Tests: tests/cli/bench_model_test.sh.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "cli/model_args.h"

namespace lathe::cli {

inline constexpr int kWarmupRuns = 3;

struct ModelBenchOptions {
  ModelArgs model;
  std::string db_path;  // empty: default schedules
  std::string target = "host";
  int threads = 0;  // 0: the target's
  int runs = 20;
  bool compatible = false;
  bool json = false;
};

// Benches the model and prints the report (text, or one JSON object).
absl::Status RunModelBench(const ModelBenchOptions& options);

}  // namespace lathe::cli
