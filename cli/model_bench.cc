#include "cli/model_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "api/gpu_model.h"
#include "api/model.h"
#include "cli/cuda_compile.h"
#include "cli/json_text.h"
#include "cli/time_text.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/graph/tasks.h"
#include "compiler/interp/random_fill.h"
#include "compiler/measure/timing.h"
#include "runner/measurable_target.h"

namespace lathe::cli {
namespace {

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The model's inputs filled at random, seeds 1, 2, ... in input order.
std::vector<TensorData> RandomModelInputs(
    const std::vector<api::ModelTensor>& inputs) {
  std::vector<TensorData> data;
  uint64_t seed = 1;
  for (const api::ModelTensor& input : inputs) {
    data.emplace_back(input.type.dtype, input.type.shape);
    FillRandom(&data.back(), seed++);
  }
  return data;
}

// The model's inputs, filled at random, and one run of it on them.
class ModelRunner {
 public:
  explicit ModelRunner(const api::Model& model)
      : model_(model), inputs_(RandomModelInputs(model.inputs())) {
    for (const api::ModelTensor& input : model.inputs()) {
      float_path_ &= input.type.dtype == DType::Float32();
    }
    for (const api::ModelTensor& output : model.outputs()) {
      float_path_ &= output.type.dtype == DType::Float32();
      outputs_.emplace_back(std::max<int64_t>(output.type.NumElements(), 0));
    }
    if (!float_path_) return;
    for (const TensorData& data : inputs_) {
      input_floats_.emplace_back(data.values.begin(), data.values.end());
    }
    for (const std::vector<float>& floats : input_floats_) {
      input_spans_.push_back(absl::MakeConstSpan(floats));
    }
    for (std::vector<float>& floats : outputs_) {
      output_spans_.push_back(absl::MakeSpan(floats));
    }
  }

  // One run (RunFloat when every tensor is float32, Run otherwise).
  absl::Status Run(std::vector<double>* step_seconds) {
    if (float_path_) {
      return model_.RunFloat(input_spans_, output_spans_, step_seconds);
    }
    return model_.Run(inputs_, step_seconds).status();
  }

 private:
  const api::Model& model_;
  bool float_path_ = true;
  std::vector<TensorData> inputs_;
  std::vector<std::vector<float>> input_floats_;
  std::vector<std::vector<float>> outputs_;
  std::vector<absl::Span<const float>> input_spans_;
  std::vector<absl::Span<float>> output_spans_;
};

// A row of the report: one distinct kernel workload, or the host steps and
// views together.
struct ShareRow {
  std::string spec;    // empty: the host row
  std::string anchor;  // as graph::ModelTask::anchor
  std::string origin;  // "tuned", "default" or "host"
  int count = 0;
  double seconds = 0;  // per run
};

std::string Percent(double part, double total) {
  return absl::StrFormat("%.1f", total > 0 ? 100 * part / total : 0.0);
}

// What the bench needs of a loaded model, on a CPU (api::Model) or a GPU
// (api::GpuModel).
struct BenchedModel {
  std::function<absl::Status(std::vector<double>*)> run;
  const graph::Graph* graph = nullptr;
  const graph::KernelPartition* partition = nullptr;
  api::ModelStats stats;
  std::function<bool(const std::string& workload)> tuned;
  std::string target;  // canonical
  int threads = 0;     // the CPU's; 0 on a GPU
};

// Benches `model` and prints the report (below the header comment).
absl::Status ReportModelBench(const ModelBenchOptions& options,
                              BenchedModel& model) {
  // 2. Warm-up, then timed runs alternating with profiled ones.
  for (int i = 0; i < kWarmupRuns; ++i) {
    if (absl::Status st = model.run(nullptr); !st.ok()) return st;
  }
  const size_t steps = model.partition->steps.size();
  std::vector<double> run_seconds;
  std::vector<std::vector<double>> step_samples(steps);
  std::vector<double> step_seconds;
  // Per profiled run: its wall time less its steps' (checks, workspace,
  // copies, the timing itself).
  std::vector<double> between_steps;
  for (int r = 0; r < options.runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    absl::Status st = model.run(nullptr);
    const auto end = std::chrono::steady_clock::now();
    if (!st.ok()) return st;
    run_seconds.push_back(std::chrono::duration<double>(end - start).count());
    const auto profiled_start = std::chrono::steady_clock::now();
    if (st = model.run(&step_seconds); !st.ok()) return st;
    double outside_steps_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                      profiled_start)
            .count();
    for (size_t s = 0; s < steps; ++s) {
      step_samples[s].push_back(step_seconds[s]);
      outside_steps_s -= step_seconds[s];
    }
    between_steps.push_back(outside_steps_s);
  }
  const TimingStats stats = SummarizeSamples(run_seconds);
  const double max_s =
      *std::max_element(run_seconds.begin(), run_seconds.end());
  const double between_steps_s = Median(between_steps);

  // 3. Each step's median, summed per task (in `lathe tasks` order) and
  //    over the host steps and views.
  std::vector<graph::ModelTask> tasks = graph::DistinctTasks(*model.partition);
  std::vector<ShareRow> rows;
  std::map<std::string, size_t> row_of;
  for (const graph::ModelTask& task : tasks) {
    row_of[task.workload] = rows.size();
    const bool tuned = model.tuned(task.workload);
    rows.push_back({task.workload, task.anchor, tuned ? "tuned" : "default",
                    task.count, 0.0});
  }
  ShareRow host{"", "", "host", 0, 0.0};
  double total_s = 0;
  std::vector<double> step_medians(steps);
  for (size_t s = 0; s < steps; ++s) {
    const graph::GraphStep& step = model.partition->steps[s];
    const double median = step_medians[s] = Median(step_samples[s]);
    total_s += median;
    if (step.kind == graph::GraphStep::Kind::kKernel) {
      rows[row_of.at(step.workload)].seconds += median;
    } else {
      host.seconds += median;
      ++host.count;
    }
  }

  const api::ModelStats& model_stats = model.stats;
  if (options.json) {
    auto ms = [](double s) { return absl::StrFormat("%.6f", s * 1e3); };
    std::vector<std::string> task_json;
    for (const ShareRow& row : rows) {
      task_json.push_back(absl::StrCat(
          "{\"spec\": ", JsonString(row.spec),
          ", \"anchor\": ", JsonString(row.anchor), ", \"count\": ", row.count,
          ", \"origin\": ", JsonString(row.origin),
          ", \"ms\": ", ms(row.seconds),
          ", \"share_pct\": ", Percent(row.seconds, total_s), "}"));
    }
    // Each step, in execution order, with the graph nodes it covers (their
    // ONNX names) and the values they produce: what
    // bench/models/per_task.py joins with ONNX Runtime's profile.
    std::vector<std::string> step_json;
    for (size_t s = 0; s < steps; ++s) {
      const graph::GraphStep& step = model.partition->steps[s];
      std::vector<std::string> names, values;
      for (int node : step.nodes) {
        const graph::Node& n = model.graph->nodes()[node];
        names.push_back(JsonString(n.name));
        for (int v : n.outputs)
          values.push_back(JsonString(model.graph->value(v).name));
      }
      const char* kind = step.kind == graph::GraphStep::Kind::kKernel ? "kernel"
                         : step.kind == graph::GraphStep::Kind::kHost ? "host"
                                                                      : "alias";
      step_json.push_back(absl::StrCat(
          "{\"kind\": \"", kind, "\", \"ms\": ", ms(step_medians[s]),
          ", \"spec\": ", JsonString(step.workload), ", \"nodes\": [",
          absl::StrJoin(names, ", "), "], \"values\": [",
          absl::StrJoin(values, ", "), "]}"));
    }
    std::printf(
        "{\"model\": %s, \"target\": %s, \"threads\": %d, \"runs\": %d, "
        "\"warmup_runs\": %d, \"median_ms\": %s, \"min_ms\": %s, "
        "\"p90_ms\": %s, \"max_ms\": %s, \"mean_ms\": %s, \"stddev_ms\": %s, "
        "\"steps_ms\": %s, \"between_steps_ms\": %s, \"kernels\": "
        "{\"distinct\": %d, \"tuned\": %d, "
        "\"default\": %d, \"steps\": %d}, \"host_steps\": %d, "
        "\"alias_steps\": %d, \"peak_intermediate_bytes\": %lld,\n"
        " \"tasks\": [\n  %s\n ],\n"
        " \"host\": {\"steps\": %d, \"ms\": %s, \"share_pct\": %s},\n"
        " \"steps\": [\n  %s\n ]}\n",
        JsonString(options.model.path).c_str(),
        JsonString(model.target).c_str(), model.threads, options.runs,
        kWarmupRuns, ms(stats.median_s).c_str(), ms(stats.min_s).c_str(),
        ms(stats.p90_s).c_str(), ms(max_s).c_str(), ms(stats.mean_s).c_str(),
        ms(stats.stddev_s).c_str(), ms(total_s).c_str(),
        ms(between_steps_s).c_str(), model_stats.distinct_kernels,
        model_stats.kernels_tuned, model_stats.kernels_default,
        model_stats.kernel_steps, model_stats.host_steps,
        model_stats.alias_steps,
        static_cast<long long>(model_stats.peak_intermediate_bytes),
        absl::StrJoin(task_json, ",\n  ").c_str(), host.count,
        ms(host.seconds).c_str(), Percent(host.seconds, total_s).c_str(),
        absl::StrJoin(step_json, ",\n  ").c_str());
    return absl::OkStatus();
  }

  const TimeUnit unit = TimeUnitFor(stats.median_s);
  std::printf("model     %s\n", options.model.path.c_str());
  std::printf("target    %s\n", model.target.c_str());
  std::printf(
      "kernels   %d calls per run, %d distinct: %d tuned, %d default "
      "schedule; %d host steps, %d views\n",
      model_stats.kernel_steps, model_stats.distinct_kernels,
      model_stats.kernels_tuned, model_stats.kernels_default,
      model_stats.host_steps, model_stats.alias_steps);
  std::printf(
      "time      median %s  min %s  p90 %s  max %s  (%d runs after %d "
      "warm-up)\n",
      TimeIn(stats.median_s, unit).c_str(), TimeIn(stats.min_s, unit).c_str(),
      TimeIn(stats.p90_s, unit).c_str(), TimeIn(max_s, unit).c_str(),
      options.runs, kWarmupRuns);
  std::printf(
      "steps     %s summed (each step's median); %s between steps "
      "per run\n",
      TimeIn(total_s, unit).c_str(), TimeIn(between_steps_s, unit).c_str());
  std::printf("# share  %s/run  count  origin  anchor  spec\n", unit.name);
  for (const ShareRow& row : rows) {
    std::printf(
        "%s%%  %s  %d  %s  %s  %s\n", Percent(row.seconds, total_s).c_str(),
        NumberIn(row.seconds, unit).c_str(), row.count, row.origin.c_str(),
        row.anchor.empty() ? "-" : row.anchor.c_str(), row.spec.c_str());
  }
  std::printf("%s%%  %s  %d  host  -  (host steps and views)\n",
              Percent(host.seconds, total_s).c_str(),
              NumberIn(host.seconds, unit).c_str(), host.count);
  return absl::OkStatus();
}

// On this machine's GPU: the inputs as ModelRunner fills them, copied to
// the device on each run (their copy is part of the run's time).
absl::Status BenchOnGpu(const ModelBenchOptions& options) {
  if (options.threads > 0) {
    return absl::InvalidArgumentError(
        "--threads sets a CPU target's threads; a cuda target has none");
  }
  absl::StatusOr<graph::Graph> graph = options.model.Import();
  if (!graph.ok()) return graph.status();
  api::GpuModelOptions model_options;
  model_options.db_path = options.db_path;
  model_options.target = options.target;
  model_options.compatible = options.compatible;
  absl::StatusOr<std::unique_ptr<api::GpuModel>> loaded =
      api::GpuModel::FromGraph(*std::move(graph), model_options);
  if (!loaded.ok()) return loaded.status();
  const api::GpuModel& gpu = **loaded;
  const std::vector<TensorData> inputs = RandomModelInputs(gpu.inputs());
  BenchedModel model;
  model.run = [&](std::vector<double>* step_seconds) {
    return gpu.Run(inputs, step_seconds).status();
  };
  model.graph = &gpu.graph();
  model.partition = &gpu.partition();
  model.stats = gpu.stats();
  model.tuned = [&](const std::string& workload) {
    return gpu.origins().at(workload).tuned();
  };
  model.target = gpu.target().ToString();
  return ReportModelBench(options, model);
}

}  // namespace

absl::Status RunModelBench(const ModelBenchOptions& options) {
  // 1. The target, and the model built for it.
  if (NamesCudaTarget(options.target)) return BenchOnGpu(options);
  absl::StatusOr<Target> target = ParseTarget(options.target);
  if (!target.ok()) return target.status();
  if (options.threads > 0) target->num_threads = options.threads;
  if (absl::Status st = runner::CheckMeasurableHere(*target); !st.ok()) {
    return st;
  }
  absl::StatusOr<graph::Graph> graph = options.model.Import();
  if (!graph.ok()) return graph.status();
  api::ModelOptions model_options;
  model_options.db_path = options.db_path;
  // The target as given unless --threads changed it, as `lathe run` and
  // `lathe tune` name it.
  model_options.target =
      options.threads > 0 ? target->ToString() : options.target;
  model_options.compatible = options.compatible;
  absl::StatusOr<std::unique_ptr<api::Model>> loaded =
      api::Model::FromGraph(*std::move(graph), model_options);
  if (!loaded.ok()) return loaded.status();
  const api::Model& cpu = **loaded;
  ModelRunner runner(cpu);
  BenchedModel model;
  model.run = [&](std::vector<double>* step_seconds) {
    return runner.Run(step_seconds);
  };
  model.graph = &cpu.graph();
  model.partition = &cpu.partition();
  model.stats = cpu.stats();
  model.tuned = [&](const std::string& workload) {
    return cpu.kernels().at(workload).origin().tuned();
  };
  model.target = target->ToString();
  model.threads = target->num_threads;
  return ReportModelBench(options, model);
}

}  // namespace lathe::cli
