// What the tuning report shows, read from a database: per task its records
// in commit order, the best-so-far curve, the default schedule's median and
// the batches with the cost model's accuracy; per model (a weighted set of
// tasks) the estimated end-to-end latency over time and each task's share.
// A plain struct, so that rendering (report_html.h) is tested without a
// database and the extraction without HTML.
//
// Terms. A task's records split into trials (what the search measured), the
// default schedule's records (recognized by the structural hash of the
// default schedule for the task's target, or, where the target or workload
// does not parse here, by a runner naming "(default schedule)") and
// re-measurements of near-ties (runner ending "(re-measure)"). The trial
// number of a trial is its position among the task's trials, from 1. The
// best-so-far curve steps at each trial faster than every trial before it.
// A model's latency at a moment is the sum over its tasks of weight x the
// fastest trial measured by then, or the default schedule's median before
// any; it is known from the first moment every task has one of them.
//
// Bounds: at most `max_tasks` tasks (by workload, then target), at most
// `max_records_read` records read per task (the first ones) and at most
// `max_records_drawn` candidates drawn per task (spread evenly over the
// trials; the curve uses every record read). Over all tasks, the reads and
// the points are bounded too (`max_total_read`, `max_total_drawn`: each of
// the n tasks shown gets at most a 1/n share, and never less than a floor),
// so that the page and the memory of a database of many large tasks stay
// bounded. What was left out is counted, and the page says so.
// Tests: tests/report/report_data_test.cc.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "database/database.h"

namespace lathe::report {

// A model's tasks: each workload (canonical form) with its weight (how
// often the model runs it).
struct ModelInput {
  std::string name;  // e.g. the ONNX file's path
  struct Task {
    std::string workload;
    double weight = 1;
  };
  std::vector<Task> tasks;
};

struct ReportOptions {
  std::string job;  // "": every record
  std::optional<ModelInput> model;
  int64_t max_tasks = 200;
  int64_t max_records_read = 200000;
  int64_t max_records_drawn = 2000;
  int64_t max_total_read = 2000000;
  int64_t max_total_drawn = 50000;
};

enum class RecordKind { kTrial, kDefault, kRemeasure };

struct TaskRecord {
  db::RecordSummary record;
  RecordKind kind = RecordKind::kTrial;
  int64_t trial = 0;   // from 1; trials only
  bool drawn = false;  // among the candidates drawn
};

struct CurvePoint {
  int64_t trial = 0;
  int64_t measured_ms = 0;
  double median_s = 0;
  int64_t record_id = 0;
};

struct TaskData {
  std::string workload_key;
  std::string workload;  // canonical form
  std::string target;
  int64_t flops = 0;                // 0: unknown (the form does not parse here)
  std::vector<TaskRecord> records;  // those read, in commit order
  int64_t records_total = 0;        // of the task (the job's, with a job)
  int64_t trials = 0;               // among those read
  int64_t drawn = 0;                // trials drawn
  // Records read by status, indexed by proto::MeasureStatus.
  std::array<int64_t, 6> by_status{};
  std::vector<CurvePoint> best_curve;
  std::optional<double> default_median_s;  // the latest OK default record's
  std::vector<db::TuningBatch> batches;
  // The fastest program by the database's rule (each program by its latest
  // record), among the records read; its provenance.
  std::optional<db::RecordSummary> best;
  int64_t first_ms = 0;  // the first record read (the wall-time origin)

  // GFLOP/s of a median; 0 when flops are unknown.
  double Gflops(double median_s) const;
};

struct ModelData {
  std::string name;
  std::string target;
  struct Share {
    std::string workload;
    double weight = 1;
    std::optional<double> best_s;     // the fastest trial read
    std::optional<double> default_s;  // the default schedule's median
    int task = -1;                    // index into ReportData::tasks; -1: none
  };
  std::vector<Share> shares;  // the model's tasks, in its order
  struct Point {
    int64_t at_ms = 0;
    double latency_s = 0;
  };
  std::vector<Point> latency;               // at each change once known
  std::optional<double> default_latency_s;  // every task by its default
  std::optional<double> latency_s;          // now
};

struct ReportData {
  std::string db_path;
  std::string job;
  int64_t generated_ms = 0;
  std::vector<TaskData> tasks;
  int64_t tasks_total = 0;        // before max_tasks
  std::vector<ModelData> models;  // one per target the model's tasks have
  ReportOptions options;
};

// Reads the report's data from `db`. Errors: the database's; NotFound when
// options.job names no job of the database.
absl::StatusOr<ReportData> CollectReport(db::Database& db,
                                         const ReportOptions& options);

}  // namespace lathe::report
