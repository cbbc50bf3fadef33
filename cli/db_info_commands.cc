// `lathe db list`, `lathe db stats`, `lathe db stamp`, `lathe db check`.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/bounded_read.h"
#include "cli/command.h"
#include "cli/db_command.h"
#include "cli/db_common.h"
#include "cli/json_text.h"
#include "cli/output_paths.h"
#include "cli/shown_text.h"
#include "cli/time_text.h"

namespace lathe::cli {
namespace {

absl::Status RunList(const DbArgs& args) {
  absl::StatusOr<std::unique_ptr<db::Database>> db =
      args.Open(db::OpenOptions::Mode::kReadOnly);
  if (!db.ok()) return db.status();
  absl::StatusOr<std::vector<db::TaskSummary>> tasks = (*db)->Tasks();
  if (!tasks.ok()) return tasks.status();
  auto gflops = [](const db::TaskSummary& task) {
    proto::Record r;
    r.set_workload(task.workload);
    r.set_median_s(task.best_median_s.value_or(0));
    return RecordGflops(r);
  };
  if (args.json) {
    std::vector<std::string> rows;
    for (const db::TaskSummary& t : *tasks) {
      rows.push_back(absl::StrCat(
          "{\"workload\": ", JsonString(t.workload),
          ", \"workload_key\": ", JsonString(t.workload_key),
          ", \"target\": ", JsonString(t.target), ", \"records\": ", t.records,
          ", \"ok_records\": ", t.ok_records, ", \"best_median_s\": ",
          t.best_median_s ? absl::StrFormat("%.9g", *t.best_median_s) : "null",
          ", \"best_gflops\": ", absl::StrFormat("%.3f", gflops(t)), "}"));
    }
    std::printf("[%s%s%s]\n", rows.empty() ? "" : "\n  ",
                absl::StrJoin(rows, ",\n  ").c_str(), rows.empty() ? "" : "\n");
    return absl::OkStatus();
  }
  if (tasks->empty()) {
    std::printf("%s: no records\n", args.path.c_str());
    return absl::OkStatus();
  }
  for (const db::TaskSummary& t : *tasks) {
    std::printf("%s\n  on %s\n  %lld records (%lld ok)",
                Shown(t.workload).c_str(), Shown(t.target).c_str(),
                static_cast<long long>(t.records),
                static_cast<long long>(t.ok_records));
    if (t.best_median_s) {
      std::printf(", best %s = %.2f GFLOP/s",
                  TimeText(*t.best_median_s).c_str(), gflops(t));
    }
    std::printf("\n");
  }
  return absl::OkStatus();
}

absl::Status RunStats(const DbArgs& args) {
  absl::StatusOr<std::unique_ptr<db::Database>> db =
      args.Open(db::OpenOptions::Mode::kReadOnly);
  if (!db.ok()) return db.status();
  absl::StatusOr<db::Stats> stats = (*db)->GetStats();
  if (!stats.ok()) return stats.status();
  const db::Stats& s = *stats;
  std::vector<std::string> by_status;
  for (int status = 1; status < static_cast<int>(s.records_by_status.size());
       ++status) {
    const std::string name =
        StatusName(static_cast<proto::MeasureStatus>(status));
    by_status.push_back(
        args.json
            ? absl::StrCat(JsonString(name), ": ", s.records_by_status[status])
            : absl::StrCat(name, " ", s.records_by_status[status]));
  }
  if (args.json) {
    std::printf(
        "{\"path\": %s, \"schema_version\": %d, \"workloads\": %lld, "
        "\"targets\": %lld, "
        "\"tasks\": %lld, \"jobs\": %lld, \"records\": %lld, \"by_status\": "
        "{%s}, "
        "\"file_bytes\": %lld}\n",
        JsonString(args.path).c_str(), s.schema_version,
        static_cast<long long>(s.workloads), static_cast<long long>(s.targets),
        static_cast<long long>(s.tasks), static_cast<long long>(s.jobs),
        static_cast<long long>(s.records),
        absl::StrJoin(by_status, ", ").c_str(),
        static_cast<long long>(s.file_bytes));
    return absl::OkStatus();
  }
  std::printf("database  %s (schema version %d, %.1f MiB)\n", args.path.c_str(),
              s.schema_version, static_cast<double>(s.file_bytes) / (1 << 20));
  std::printf("records   %lld (%s)\n", static_cast<long long>(s.records),
              absl::StrJoin(by_status, ", ").c_str());
  std::printf("tasks     %lld (%lld workloads, %lld targets)\n",
              static_cast<long long>(s.tasks),
              static_cast<long long>(s.workloads),
              static_cast<long long>(s.targets));
  std::printf("jobs      %lld\n", static_cast<long long>(s.jobs));
  return absl::OkStatus();
}

struct StampOptions {
  DbArgs db;
  std::string output;
};

// The database's content stamp (db::Database::ContentStamp), printed, or
// written to --output only when it differs from what the file holds: the
// file's mtime then moves exactly when the records do, which is what a
// build's dependency on the database needs (cmake/package/LatheKernels.cmake).
absl::Status RunStamp(const StampOptions& options) {
  if (!options.output.empty()) {
    if (absl::Status st = CheckOutputPaths({{"--db", options.db.path}},
                                           {{"--output", options.output}});
        !st.ok()) {
      return st;
    }
  }
  absl::StatusOr<std::unique_ptr<db::Database>> db =
      options.db.Open(db::OpenOptions::Mode::kReadOnly);
  if (!db.ok()) return db.status();
  absl::StatusOr<std::string> stamp = (*db)->ContentStamp();
  if (!stamp.ok()) return stamp.status();
  if (options.output.empty()) {
    std::printf("%s\n", stamp->c_str());
    return absl::OkStatus();
  }
  const std::string line = *stamp + "\n";
  {
    // Only a file that holds the line already is left alone: no more of it
    // is read than the line.
    absl::StatusOr<std::string> held =
        ReadBoundedFile(options.output, "stamp file", line.size(), "its line");
    if (held.ok() && *held == line) return absl::OkStatus();
  }
  // Written whole, then renamed: a build never reads half a stamp.
  const std::string partial = options.output + ".partial";
  std::ofstream out(partial);
  out << line;
  out.close();
  if (!out || std::rename(partial.c_str(), options.output.c_str()) != 0) {
    std::remove(partial.c_str());
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write ", options.output));
  }
  return absl::OkStatus();
}

absl::Status RunCheck(const DbArgs& args) {
  absl::StatusOr<std::unique_ptr<db::Database>> db =
      args.Open(db::OpenOptions::Mode::kReadOnly, /*check_pages=*/false);
  if (!db.ok()) return db.status();
  absl::StatusOr<db::CheckReport> report = (*db)->Check();
  if (!report.ok()) return report.status();
  if (args.json) {
    std::vector<std::string> problems;
    for (const std::string& p : report->problems)
      problems.push_back(JsonString(p));
    std::printf("{\"ok\": %s, \"records_checked\": %lld, \"problems\": [%s]}\n",
                report->ok() ? "true" : "false",
                static_cast<long long>(report->records_checked),
                absl::StrJoin(problems, ", ").c_str());
  } else {
    for (const std::string& p : report->problems)
      std::printf("problem: %s\n", p.c_str());
    std::printf("%s: %s, %lld records checked\n", args.path.c_str(),
                report->ok() ? "ok" : "DAMAGED",
                static_cast<long long>(report->records_checked));
  }
  if (!report->ok()) {
    return absl::DataLossError(
        absl::StrCat(args.path, ": ", report->problems.size(),
                     " problems, the first: ", report->problems.front()));
  }
  return absl::OkStatus();
}

}  // namespace

void AddDbInfoCommands(CLI::App* db) {
  auto list = std::make_shared<DbArgs>();
  CLI::App* list_command = db->add_subcommand(
      "list",
      "every task (workload, target) with its record count and best time");
  list->AddTo(list_command);
  SetAction(list_command, [list] { return RunList(*list); });

  auto stats = std::make_shared<DbArgs>();
  CLI::App* stats_command =
      db->add_subcommand("stats", "counts of records, tasks and jobs");
  stats->AddTo(stats_command);
  SetAction(stats_command, [stats] { return RunStats(*stats); });

  auto stamp = std::make_shared<StampOptions>();
  CLI::App* stamp_command = db->add_subcommand(
      "stamp",
      "one line that changes when the records do (for build dependencies)");
  stamp_command->add_option("--db", stamp->db.path,
                            "the database file (default: lathe.db)");
  stamp_command->add_option(
      "-o,--output", stamp->output,
      "write the line to this file, only when it differs from its content");
  SetAction(stamp_command, [stamp] { return RunStamp(*stamp); });

  auto check = std::make_shared<DbArgs>();
  CLI::App* check_command = db->add_subcommand(
      "check",
      "check the file's integrity and every record (exit 1 when damaged)");
  check->AddTo(check_command);
  SetAction(check_command, [check] { return RunCheck(*check); });
}

}  // namespace lathe::cli
