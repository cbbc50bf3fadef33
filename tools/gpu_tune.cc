// `lathe-gpu-check --tune` (gpu_tune.h).
#include "tools/gpu_tune.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "compiler/codegen/cuda/cuda_program.h"
#include "compiler/target/target_info.h"
#include "compiler/workload/spec.h"
#include "database/database.h"
#include "runner/cuda/cuda_measurer.h"
#include "tuner/search/measurement_record.h"
#include "tuner/search/task.h"
#include "tuner/search/tuner.h"

namespace lathe::tools {
namespace {

// `lead` and the peer's time over `best_s` ("0.812x cuDNN (algorithm 1)"),
// or "" without a peer or a best.
std::string VsPeer(const GpuTuneOptions& options, double best_s,
                   const char* lead) {
  if (options.peer_ms <= 0 || best_s <= 0) return "";
  return absl::StrFormat("%s%.3fx %s", lead, options.peer_ms / (best_s * 1e3),
                         options.peer_name);
}

}  // namespace

absl::StatusOr<GpuTuneResult> TuneOnGpu(cuda::CudaDevice* device,
                                        const Target& target,
                                        const GpuTuneOptions& options) {
  LATHE_ASSIGN_OR_RETURN(Workload workload, ParseWorkloadSpec(options.spec));
  LATHE_ASSIGN_OR_RETURN(tuner::Task task,
                         tuner::MakeTask(workload, target, 1.0));
  std::vector<tuner::Task> tasks_one;
  tasks_one.push_back(std::move(task));
  db::OpenOptions open;
  open.mode = db::OpenOptions::Mode::kCreate;
  open.durable = false;
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<db::Database> db,
                         db::Database::Open(options.db_path, open));
  runner::CudaMeasurer::Options measure_options;
  measure_options.compile_command = options.compile_command;
  measure_options.compile_timeout_s = options.compile_timeout_s;
  LATHE_ASSIGN_OR_RETURN(
      std::unique_ptr<runner::CudaMeasurer> measurer,
      runner::CudaMeasurer::Create(device, target, measure_options));

  // The default schedule first: the baseline, measured as the candidates are.
  proto::MeasureRequest baseline;
  baseline.set_workload(workload.CanonicalForm());
  baseline.set_target(target.ToString());
  baseline.set_min_time_s(0.05);
  baseline.set_min_repeats(5);
  baseline.set_check_seed(1);
  const proto::MeasureResult base = measurer->Measure(baseline);
  if (base.status() != proto::MEASURE_OK) {
    return absl::InternalError(absl::StrCat("the default GPU schedule of ",
                                            options.spec, ": ", base.error()));
  }
  std::vector<double> times(base.times_s().begin(), base.times_s().end());
  std::sort(times.begin(), times.end());
  GpuTuneResult out;
  out.default_s = times[times.size() / 2];
  // Recorded as `lathe tune` records it, so that the database's best, and
  // the comparison with the peer after tuning, is never slower than the
  // default schedule.
  LATHE_ASSIGN_OR_RETURN(cuda::CudaProgram default_program,
                         cuda::MakeCudaProgram(workload, nullptr, target));
  LATHE_RETURN_IF_ERROR(
      db->Commit({tuner::MeasurementRecord(
                     workload, TargetInfoOf(target, device->info().name),
                     default_program.trace, default_program.structural_hash,
                     base, {"lathe-gpu-check (default schedule)", "", ""})})
          .status());
  const double flops = static_cast<double>(tasks_one.front().flops);
  std::printf(
      "tune %s: default GPU schedule %.4f ms (%.0f GFLOP/s), %zu "
      "design space(s), %lld trials in batches of %d\n",
      options.spec.c_str(), out.default_s * 1e3, flops / out.default_s * 1e-9,
      tasks_one.front().spaces.size(), static_cast<long long>(options.trials),
      options.batch_size);
  std::fflush(stdout);

  absl::Mutex stats_mutex;
  double build_ms = 0;
  int64_t built = 0;
  tuner::MeasureFn measure = [&](const proto::MeasureRequest& request)
      -> absl::StatusOr<proto::MeasureResult> {
    proto::MeasureResult result = measurer->Measure(request);
    if (result.build_ms() > 0) {
      absl::MutexLock lock(&stats_mutex);
      build_ms += result.build_ms();
      ++built;
    }
    return result;
  };
  tuner::TuneOptions tune;
  tune.max_trials = options.trials;
  tune.time_budget_s = options.time_budget_s;
  tune.batch_size = options.batch_size;
  tune.overlap = true;  // the search runs on the CPU beside the GPU's work
  // Candidates built by NVRTC side by side, measured one at a time.
  tune.measure_parallelism = options.build_threads;
  tune.measure_rounds = 1;
  tune.min_time_s = 0.02;
  tune.min_repeats = 3;
  tune.runner_name = "lathe-gpu-check";
  tune.device = device->info().name;
  int64_t next_line = options.batch_size;
  tune.on_progress = [&](const tuner::TuneProgress& p) {
    if (p.trials_done < next_line && p.trials_done < p.trials_total) return;
    next_line = p.trials_done + options.batch_size;
    const tuner::TaskProgress& t = p.tasks.front();
    const std::string vs_peer =
        t.best_s ? VsPeer(options, *t.best_s, "  ") : std::string();
    std::printf(
        "  trials %5lld  errors %4lld  best %s  %.0f GFLOP/s  %6.1f s%s\n",
        static_cast<long long>(p.trials_done), static_cast<long long>(t.errors),
        t.best_s ? absl::StrCat(*t.best_s * 1e3, " ms").c_str() : "-",
        t.best_gflops, p.elapsed_s, vs_peer.c_str());
    std::fflush(stdout);
  };
  LATHE_ASSIGN_OR_RETURN(tuner::TuneReport report,
                         tuner::Tune(tasks_one, *db, measure, tune));
  LATHE_ASSIGN_OR_RETURN(std::optional<db::Match> best,
                         db->Best(tasks_one.front().key,
                                  TargetInfoOf(target, device->info().name)));
  bool best_is_default = false;
  if (best.has_value()) {
    LATHE_ASSIGN_OR_RETURN(Trace trace, Trace::FromProto(best->record.trace()));
    out.best = std::move(trace);
    out.best_s = best->record.median_s();
    best_is_default =
        best->record.structural_hash() == default_program.structural_hash;
  }
  const std::string vs_peer = VsPeer(options, out.best_s, ", ");
  std::printf(
      "tune %s: %lld trials in %.1f s (measure calls %.1f s in all), best %.4f "
      "ms (%.0f GFLOP/s)%s, %.2fx the default schedule%s; compile %.0f ms per "
      "candidate (NVRTC, mean of %lld)\n",
      options.spec.c_str(), static_cast<long long>(report.trials),
      report.wall_s, report.measure_s, out.best_s * 1e3,
      out.best_s > 0 ? flops / out.best_s * 1e-9 : 0.0,
      best_is_default ? " (the default schedule)" : "",
      out.best_s > 0 ? out.default_s / out.best_s : 0.0, vs_peer.c_str(),
      built ? build_ms / built : 0.0, static_cast<long long>(built));
  std::fflush(stdout);
  return out;
}

}  // namespace lathe::tools
