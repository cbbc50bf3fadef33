#include "report/report_data.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/untrusted_text.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/kernel_program.h"
#include "compiler/workload/flop_count.h"
#include "compiler/workload/spec.h"

namespace lathe::report {
namespace {

// The structural hash of the task's default schedule; "" when the workload
// or target does not parse here (a record of another build's), in which
// case the runner's name decides.
std::string DefaultScheduleHash(const std::optional<Workload>& workload,
                                const std::string& target_text) {
  if (!workload) return "";
  absl::StatusOr<Target> target = ParseTarget(target_text);
  if (!target.ok()) return "";
  absl::StatusOr<KernelProgram> kernel =
      MakeKernelProgram(*workload, nullptr, *target);
  return kernel.ok() ? kernel->structural_hash : "";
}

RecordKind KindOf(const db::RecordSummary& record,
                  const std::string& default_hash) {
  if (absl::EndsWith(record.runner, "(re-measure)"))
    return RecordKind::kRemeasure;
  if (default_hash.empty()
          ? absl::StrContains(record.runner, "(default schedule)")
          : record.structural_hash == default_hash) {
    return RecordKind::kDefault;
  }
  return RecordKind::kTrial;
}

absl::StatusOr<TaskData> CollectTask(db::Database& db,
                                     const db::TaskSummary& summary,
                                     const ReportOptions& options) {
  TaskData task;
  task.workload_key = summary.workload_key;
  task.workload = summary.workload;
  task.target = summary.target;
  task.records_total = summary.records;
  std::optional<Workload> workload;
  if (absl::StatusOr<Workload> parsed = ParseWorkloadSpec(summary.workload);
      parsed.ok()) {
    workload = *std::move(parsed);
    if (absl::StatusOr<int64_t> flops = FlopCount(*workload); flops.ok())
      task.flops = *flops;
  }
  const std::string default_hash =
      DefaultScheduleHash(workload, summary.target);

  absl::StatusOr<std::vector<db::RecordSummary>> history =
      db.RecordHistory(summary.workload_key, summary.target, options.job,
                       options.max_records_read);
  if (!history.ok()) return history.status();
  for (db::RecordSummary& record : *history) {
    TaskRecord& r = task.records.emplace_back();
    r.kind = KindOf(record, default_hash);
    if (r.kind == RecordKind::kTrial) r.trial = ++task.trials;
    if (record.status >= 0 &&
        static_cast<size_t>(record.status) < task.by_status.size()) {
      ++task.by_status[static_cast<size_t>(record.status)];
    }
    r.record = std::move(record);
  }
  if (!task.records.empty())
    task.first_ms = task.records.front().record.measured_ms;

  // The default schedule's median: its latest OK record, of any job.
  auto take_default = [&](const db::RecordSummary& record) {
    if (KindOf(record, default_hash) == RecordKind::kDefault &&
        record.status == proto::MEASURE_OK && record.median_s) {
      task.default_median_s = record.median_s;
    }
  };
  if (options.job.empty()) {
    for (const TaskRecord& r : task.records) take_default(r.record);
  } else {
    absl::StatusOr<std::vector<db::RecordSummary>> all = db.RecordHistory(
        summary.workload_key, summary.target, "", options.max_records_read);
    if (!all.ok()) return all.status();
    for (const db::RecordSummary& record : *all) take_default(record);
  }

  // The best-so-far curve of the trials, and which trials are drawn: every
  // one up to the bound, else that many spread evenly.
  const int64_t drawn_max = std::max<int64_t>(0, options.max_records_drawn);
  std::optional<double> best;
  for (TaskRecord& r : task.records) {
    if (r.kind != RecordKind::kTrial) continue;
    if (task.trials <= drawn_max) {
      r.drawn = true;
    } else if (drawn_max > 0) {
      // Trial t (from 1) is drawn when the spread's index steps at it.
      r.drawn = (r.trial * drawn_max) / task.trials !=
                ((r.trial - 1) * drawn_max) / task.trials;
    }
    if (r.record.status == proto::MEASURE_OK && r.record.median_s &&
        (!best || *r.record.median_s < *best)) {
      best = r.record.median_s;
      task.best_curve.push_back(
          {r.trial, r.record.measured_ms, *r.record.median_s, r.record.id});
    }
  }
  for (const TaskRecord& r : task.records) task.drawn += r.drawn ? 1 : 0;

  // The best program by the database's rule: each program by its latest
  // record, fastest OK first (ties: earlier record).
  std::map<std::string, const db::RecordSummary*> latest;
  for (const TaskRecord& r : task.records)
    latest[r.record.structural_hash] = &r.record;
  for (const auto& [hash, record] : latest) {
    if (record->status != proto::MEASURE_OK || !record->median_s) continue;
    if (!task.best || *record->median_s < *task.best->median_s ||
        (*record->median_s == *task.best->median_s &&
         record->id < task.best->id)) {
      task.best = *record;
    }
  }

  absl::StatusOr<std::vector<db::TuningBatch>> batches =
      db.Batches(summary.workload_key, summary.target, options.job);
  if (!batches.ok()) return batches.status();
  task.batches = *std::move(batches);
  return task;
}

// The model's view on `target`: its tasks matched to the report's.
ModelData CollectModel(const ModelInput& model, const std::string& target,
                       const std::vector<TaskData>& tasks) {
  ModelData data;
  data.name = model.name;
  data.target = target;
  // Per task: (time, best median so far) at each step of its curve.
  std::vector<std::vector<std::pair<int64_t, double>>> steps;
  int64_t start_ms = 0;
  for (const ModelInput::Task& t : model.tasks) {
    ModelData::Share& share = data.shares.emplace_back();
    share.workload = t.workload;
    share.weight = t.weight;
    std::vector<std::pair<int64_t, double>>& task_steps = steps.emplace_back();
    for (size_t i = 0; i < tasks.size(); ++i) {
      if (tasks[i].workload != t.workload || tasks[i].target != target)
        continue;
      share.task = static_cast<int>(i);
      share.default_s = tasks[i].default_median_s;
      if (!tasks[i].best_curve.empty())
        share.best_s = tasks[i].best_curve.back().median_s;
      for (const CurvePoint& p : tasks[i].best_curve)
        task_steps.push_back({p.measured_ms, p.median_s});
      if (!tasks[i].records.empty() &&
          (start_ms == 0 || tasks[i].first_ms < start_ms)) {
        start_ms = tasks[i].first_ms;
      }
    }
  }
  auto estimate = [&](const std::vector<std::optional<double>>& now)
      -> std::optional<double> {
    double sum = 0;
    for (size_t i = 0; i < now.size(); ++i) {
      if (!now[i]) return std::nullopt;
      sum += data.shares[i].weight * *now[i];
    }
    return sum;
  };
  std::vector<std::optional<double>> now;
  for (const ModelData::Share& share : data.shares)
    now.push_back(share.default_s);
  data.default_latency_s = estimate(now);
  if (data.default_latency_s)
    data.latency.push_back({start_ms, *data.default_latency_s});
  // Every step of every task, in time order (ties: the model's order).
  std::vector<std::tuple<int64_t, size_t, double>> events;
  for (size_t i = 0; i < steps.size(); ++i) {
    for (const auto& [at_ms, median_s] : steps[i])
      events.emplace_back(at_ms, i, median_s);
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const auto& a, const auto& b) {
                     return std::get<0>(a) < std::get<0>(b);
                   });
  std::vector<bool> tuned(now.size(), false);
  for (const auto& [at_ms, i, median_s] : events) {
    // The first trial replaces the default; later ones only improve on it.
    if (!tuned[i] || median_s < *now[i]) now[i] = median_s;
    tuned[i] = true;
    if (std::optional<double> latency = estimate(now))
      data.latency.push_back({at_ms, *latency});
  }
  data.latency_s = estimate(now);
  return data;
}

}  // namespace

double TaskData::Gflops(double median_s) const {
  return flops > 0 && median_s > 0
             ? static_cast<double>(flops) / median_s * 1e-9
             : 0;
}

absl::StatusOr<ReportData> CollectReport(db::Database& db,
                                         const ReportOptions& options) {
  ReportData report;
  report.db_path = db.path();
  report.job = options.job;
  report.generated_ms = absl::ToUnixMillis(absl::Now());
  report.options = options;
  if (!options.job.empty()) {
    absl::StatusOr<std::vector<proto::Job>> jobs = db.Jobs();
    if (!jobs.ok()) return jobs.status();
    if (std::none_of(jobs->begin(), jobs->end(), [&](const proto::Job& j) {
          return j.id() == options.job;
        })) {
      return absl::NotFoundError(
          absl::StrCat(db.path(), ": no job ", EscapedPrefix(options.job)));
    }
  }
  absl::StatusOr<std::vector<db::TaskSummary>> summaries =
      db.Tasks(options.job);
  if (!summaries.ok()) return summaries.status();
  if (options.model) {
    // A model's report: its tasks only.
    std::set<std::string> forms;
    for (const ModelInput::Task& t : options.model->tasks)
      forms.insert(t.workload);
    std::vector<db::TaskSummary> kept;
    for (db::TaskSummary& s : *summaries) {
      if (forms.count(s.workload)) kept.push_back(std::move(s));
    }
    *summaries = std::move(kept);
  }
  report.tasks_total = static_cast<int64_t>(summaries->size());
  const int64_t shown = std::min<int64_t>(
      report.tasks_total, std::max<int64_t>(0, options.max_tasks));
  // Each task's share of the totals, never below a floor that keeps a
  // task's page useful.
  ReportOptions per_task = options;
  if (shown > 0) {
    per_task.max_records_read =
        std::min(options.max_records_read,
                 std::max<int64_t>(1000, options.max_total_read / shown));
    per_task.max_records_drawn =
        std::min(options.max_records_drawn,
                 std::max<int64_t>(100, options.max_total_drawn / shown));
  }
  for (const db::TaskSummary& summary : *summaries) {
    if (static_cast<int64_t>(report.tasks.size()) >= shown) break;
    absl::StatusOr<TaskData> task = CollectTask(db, summary, per_task);
    if (!task.ok()) return task.status();
    report.tasks.push_back(*std::move(task));
  }
  if (options.model) {
    std::set<std::string> targets;
    for (const TaskData& task : report.tasks) targets.insert(task.target);
    if (targets.empty()) targets.insert("");
    for (const std::string& target : targets)
      report.models.push_back(
          CollectModel(*options.model, target, report.tasks));
  }
  return report;
}

}  // namespace lathe::report
