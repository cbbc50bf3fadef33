// Database's maintenance: statistics, pruning to the best k records per
// task, and the consistency check (see database.h).
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <sqlite3.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "database/database.h"
#include "database/database_internal.h"
#include "database/fnv128.h"
#include "database/record_codec.h"
#include "database/schema.h"
#include "database/sqlite_connection.h"
#include "database/target_match.h"

namespace lathe::db {
namespace {

int64_t FileBytes(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 ? static_cast<int64_t>(info.st_size)
                                        : 0;
}

}  // namespace

absl::StatusOr<Stats> Database::GetStats() {
  absl::StatusOr<std::unique_ptr<ReadTransaction>> snapshot =
      ReadTransaction::Begin(*connection_);
  if (!snapshot.ok()) return snapshot.status();
  Stats stats;
  absl::StatusOr<int64_t> value = connection_->QueryInt("PRAGMA user_version");
  if (!value.ok()) return value.status();
  stats.schema_version = static_cast<int>(*value);
  const std::pair<const char*, int64_t*> counts[] = {
      {"SELECT COUNT(*) FROM workloads", &stats.workloads},
      {"SELECT COUNT(*) FROM targets", &stats.targets},
      {"SELECT COUNT(*) FROM jobs", &stats.jobs},
      {"SELECT COUNT(*) FROM records", &stats.records},
      {"SELECT COUNT(*) FROM (SELECT DISTINCT workload_id, target_id FROM "
       "records)",
       &stats.tasks},
  };
  for (const auto& [sql, out] : counts) {
    value = connection_->QueryInt(sql);
    if (!value.ok()) return value.status();
    *out = *value;
  }
  stats.records_by_status.assign(proto::MeasureStatus_ARRAYSIZE, 0);
  absl::StatusOr<Statement*> by_status = connection_->Prepare(
      "SELECT status, COUNT(*) FROM records GROUP BY status");
  if (!by_status.ok()) return by_status.status();
  while (true) {
    absl::StatusOr<bool> row = (*by_status)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    const int64_t status = (*by_status)->ColumnInt(0);
    if (status >= 0 && status < proto::MeasureStatus_ARRAYSIZE) {
      stats.records_by_status[status] = (*by_status)->ColumnInt(1);
    }
  }
  (*by_status)->Reset();
  stats.file_bytes = FileBytes(path_) + FileBytes(path_ + "-wal");
  return stats;
}

absl::StatusOr<int64_t> Database::Prune(int k) {
  if (k < 1)
    return absl::InvalidArgumentError(
        absl::StrCat("prune keeps k >= 1 records, not ", k));
  absl::StatusOr<std::unique_ptr<WriteTransaction>> transaction =
      WriteTransaction::Begin(*connection_);
  if (!transaction.ok()) return transaction.status();
  absl::StatusOr<Statement*> prune = connection_->Prepare(
      "DELETE FROM records WHERE id NOT IN ("
      "SELECT id FROM (SELECT r.id, ROW_NUMBER() OVER ("
      "PARTITION BY r.workload_id, r.target_id ORDER BY r.median_s, r.id) AS "
      "rank "
      "FROM records r WHERE " LATHE_DB_COUNTING_RECORD ") WHERE rank <= ?1)");
  if (!prune.ok()) return prune.status();
  (*prune)->BindInt(1, k);
  LATHE_RETURN_IF_ERROR((*prune)->Run());
  const int64_t deleted = sqlite3_changes64(connection_->raw());
  LATHE_RETURN_IF_ERROR(connection_->Exec(
      "DELETE FROM jobs WHERE id NOT IN (SELECT DISTINCT job_id FROM records "
      "WHERE job_id IS NOT NULL) AND state != 'running'"));
  // The winners survive a prune (k >= 1), but rebuilding is what keeps
  // table best right without that argument.
  if (schema_version_ >= 3)
    LATHE_RETURN_IF_ERROR(connection_->Exec(kRebuildBestSql));
  LATHE_RETURN_IF_ERROR((*transaction)->Commit());
  return deleted;
}

void Database::CheckBest(CheckReport& report) {
  auto problems = [&](const char* sql) {
    absl::StatusOr<Statement*> select = connection_->Prepare(sql);
    if (!select.ok()) {
      report.problems.push_back(std::string(select.status().message()));
      return;
    }
    while (true) {
      absl::StatusOr<bool> row = (*select)->Step();
      if (!row.ok()) {
        report.problems.push_back(std::string(row.status().message()));
        break;
      }
      if (!*row) break;
      report.problems.push_back((*select)->ColumnText(0));
    }
    (*select)->Reset();
  };
  // Each task's winner by the ranking of records, beside table best's row.
  problems(
      "SELECT 'best of workload ' || w.key || ' on target ' || t.canonical || "
      "' is record ' || "
      "IFNULL(b.id, 'none') || ', but the records rank ' || IFNULL(x.id, "
      "'none') || ' first' "
      "FROM (SELECT workload_id, target_id FROM records UNION SELECT "
      "workload_id, target_id "
      "FROM best) task "
      "JOIN workloads w ON w.id = task.workload_id JOIN targets t ON t.id = "
      "task.target_id "
      "LEFT JOIN best b ON b.workload_id = task.workload_id AND b.target_id = "
      "task.target_id "
      "LEFT JOIN (SELECT r.workload_id, r.target_id, r.id, ROW_NUMBER() OVER "
      "(PARTITION BY "
      "r.workload_id, r.target_id ORDER BY r.median_s, r.id) AS rank FROM "
      "records r WHERE " LATHE_DB_COUNTING_RECORD
      ") x ON x.workload_id = task.workload_id "
      "AND x.target_id = task.target_id AND x.rank = 1 "
      "WHERE b.id IS NOT x.id");
  // And its copy of the record is the record.
  problems(
      "SELECT 'best row of record ' || b.id || ' differs from the record' FROM "
      "best b "
      "JOIN records r ON r.id = b.id WHERE b.workload_id != r.workload_id "
      "OR b.target_id != r.target_id OR b.structural_hash != r.structural_hash "
      "OR b.trace != r.trace OR b.times != r.times OR b.median_s IS NOT "
      "r.median_s "
      "OR b.spread IS NOT r.spread OR b.status != r.status OR b.error != "
      "r.error "
      "OR b.runner != r.runner OR b.lathe_version != r.lathe_version "
      "OR b.measured_ms != r.measured_ms OR b.job_id IS NOT r.job_id");
}

absl::StatusOr<CheckReport> Database::Check() {
  CheckReport report;
  absl::StatusOr<std::unique_ptr<ReadTransaction>> snapshot =
      ReadTransaction::Begin(*connection_);
  if (!snapshot.ok()) return snapshot.status();
  for (const char* pragma :
       {"PRAGMA integrity_check", "PRAGMA foreign_key_check"}) {
    absl::StatusOr<Statement*> check = connection_->Prepare(pragma);
    if (!check.ok()) return check.status();
    while (true) {
      absl::StatusOr<bool> row = (*check)->Step();
      if (!row.ok()) {
        report.problems.push_back(std::string(row.status().message()));
        break;
      }
      if (!*row) break;
      std::string line = (*check)->ColumnText(0);
      if (std::string(pragma) == "PRAGMA foreign_key_check") {
        line = absl::StrCat("table ", line, " row ", (*check)->ColumnInt(1),
                            " refers to a missing row of ",
                            (*check)->ColumnText(2));
      }
      if (line != "ok")
        report.problems.push_back(absl::StrCat(pragma + 7, ": ", line));
    }
    (*check)->Reset();
  }

  // Column 20, after those RecordFromRow reads, is the stored fingerprint.
  sqlite3_stmt* raw = nullptr;
  const char* sql = "SELECT " LATHE_DB_RECORD_COLUMNS
                    ", r.fingerprint " LATHE_DB_RECORD_FROM "ORDER BY r.id";
  int rc = sqlite3_prepare_v2(connection_->raw(), sql, -1, &raw, nullptr);
  if (rc != SQLITE_OK) return connection_->Error(rc, "checking records");
  Statement statement(raw, &path_);
  while (true) {
    absl::StatusOr<bool> row = statement.Step();
    if (!row.ok()) {
      report.problems.push_back(std::string(row.status().message()));
      break;
    }
    if (!*row) break;
    ++report.records_checked;
    absl::StatusOr<proto::Record> record = RecordFromRow(statement, path_);
    const std::string where =
        absl::StrCat("record ", statement.ColumnInt(0), ": ");
    if (!record.ok()) {
      report.problems.push_back(std::string(record.status().message()));
      continue;
    }
    if (Fingerprint(*record) != statement.ColumnText(20)) {
      report.problems.push_back(where +
                                "its content does not match its fingerprint");
    }
    if (absl::Status valid = ValidateRecord(*record); !valid.ok()) {
      report.problems.push_back(absl::StrCat(where, valid.message()));
    }
    if (record->status() == proto::MEASURE_OK && record->times_s_size() > 0) {
      proto::Record summary = *record;
      SummarizeTimes(summary);
      if (std::abs(summary.median_s() - record->median_s()) >
          1e-9 * summary.median_s()) {
        report.problems.push_back(absl::StrCat(
            where, "median_s ", record->median_s(),
            " is not the median of its times (", summary.median_s(), ")"));
      }
    }
  }
  if (schema_version_ >= 3) CheckBest(report);
  return report;
}

}  // namespace lathe::db
