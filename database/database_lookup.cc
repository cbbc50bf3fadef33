// Database's reads: lookups of the best records of a task, the records of a
// task or job, what is measured, the task list, the content stamp and the
// walk over every record (see database.h).
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <sqlite3.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "database/database.h"
#include "database/database_internal.h"
#include "database/fnv128.h"
#include "database/schema.h"
#include "database/sqlite_connection.h"
#include "database/target_match.h"

namespace lathe::db {

absl::StatusOr<std::vector<Match>> Database::Lookup(
    const std::string& workload_key, const proto::TargetInfo& target, int k,
    TargetMatching matching) {
  if (k <= 0) return std::vector<Match>{};
  absl::StatusOr<std::unique_ptr<ReadTransaction>> snapshot =
      ReadTransaction::Begin(*connection_);
  if (!snapshot.ok()) return snapshot.status();
  absl::StatusOr<Statement*> workload =
      connection_->Prepare("SELECT id FROM workloads WHERE key = ?1");
  if (!workload.ok()) return workload.status();
  (*workload)->BindText(1, workload_key);
  absl::StatusOr<bool> found = (*workload)->Step();
  if (!found.ok()) return found.status();
  if (!*found) return std::vector<Match>{};
  const int64_t workload_id = (*workload)->ColumnInt(0);
  (*workload)->Reset();

  // The targets that may answer, closest first.
  struct Candidate {
    int64_t id;
    proto::TargetInfo info;
    std::string difference;
  };
  std::vector<Candidate> candidates;
  absl::StatusOr<Statement*> targets =
      connection_->Prepare(matching == TargetMatching::kExact
                               ? "SELECT id, canonical, kind, cpu, features, "
                                 "num_threads, device FROM targets "
                                 "WHERE canonical = ?1"
                               : "SELECT id, canonical, kind, cpu, features, "
                                 "num_threads, device FROM targets "
                                 "WHERE kind = ?2");
  if (!targets.ok()) return targets.status();
  if (matching == TargetMatching::kExact) {
    (*targets)->BindText(1, target.canonical());
  } else {
    (*targets)->BindText(2, target.kind());
  }
  while (true) {
    absl::StatusOr<bool> row = (*targets)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    Candidate candidate;
    candidate.id = (*targets)->ColumnInt(0);
    TargetFromRow(**targets, 1, candidate.info);
    if (candidate.info.canonical() == target.canonical()) {
      candidate.difference.clear();
    } else {
      std::optional<std::string> difference =
          CompatibleDifference(target, candidate.info);
      if (!difference) continue;
      candidate.difference = *difference;
    }
    candidates.push_back(std::move(candidate));
  }
  (*targets)->Reset();
  std::stable_sort(
      candidates.begin(), candidates.end(),
      [&](const Candidate& a, const Candidate& b) {
        const bool a_exact = a.info.canonical() == target.canonical();
        const bool b_exact = b.info.canonical() == target.canonical();
        if (a_exact != b_exact) return a_exact;
        return Closeness(target, a.info) < Closeness(target, b.info);
      });

  // The winner alone is table best's row (schema version 3 on); more walk
  // the ranking of records. Both take the same three parameters (?3, k, is
  // 1 in the first), so the loop below binds them one way.
  absl::StatusOr<Statement*> ranked = connection_->Prepare(
      k == 1 && schema_version_ >= 3
          ? "SELECT " LATHE_DB_RECORD_COLUMNS
            "FROM best r JOIN workloads w ON w.id = r.workload_id "
            "JOIN targets t ON t.id = r.target_id "
            "WHERE r.workload_id = ?1 AND r.target_id = ?2 AND ?3 = 1"
          : "SELECT " LATHE_DB_RECORD_COLUMNS LATHE_DB_RECORD_FROM
            "WHERE r.workload_id = ?1 AND r.target_id = ?2 "
            "AND " LATHE_DB_COUNTING_RECORD
            " ORDER BY r.median_s, r.id LIMIT ?3");
  if (!ranked.ok()) return ranked.status();
  Statement& query = **ranked;
  for (const Candidate& candidate : candidates) {
    query.BindInt(1, workload_id);
    query.BindInt(2, candidate.id);
    query.BindInt(3, k);
    absl::StatusOr<std::vector<proto::Record>> records =
        CollectRecords(query, path_);
    if (!records.ok()) return records.status();
    if (records->empty()) continue;
    std::vector<Match> matches;
    for (proto::Record& record : *records) {
      Match& match = matches.emplace_back();
      match.record = std::move(record);
      match.exact = candidate.info.canonical() == target.canonical();
      match.difference = candidate.difference;
    }
    return matches;
  }
  return std::vector<Match>{};
}

absl::StatusOr<std::optional<Match>> Database::Best(
    const std::string& workload_key, const proto::TargetInfo& target,
    TargetMatching matching) {
  absl::StatusOr<std::vector<Match>> matches =
      Lookup(workload_key, target, 1, matching);
  if (!matches.ok()) return matches.status();
  if (matches->empty()) return std::optional<Match>();
  return std::optional<Match>(std::move(matches->front()));
}

absl::StatusOr<std::vector<Match>> Database::Top(
    const std::string& workload_key, const proto::TargetInfo& target, int k,
    TargetMatching matching) {
  return Lookup(workload_key, target, k, matching);
}

absl::StatusOr<std::vector<proto::Record>> Database::RecordsOfTask(
    const std::string& workload_key, const std::string& target) {
  absl::StatusOr<Statement*> select = connection_->Prepare(
      absl::StrCat("SELECT ", kRecordColumns,
                   "WHERE w.key = ?1 AND t.canonical = ?2 ORDER BY r.id"));
  if (!select.ok()) return select.status();
  (*select)->BindText(1, workload_key);
  (*select)->BindText(2, target);
  return CollectRecords(**select, path_);
}

absl::StatusOr<std::vector<proto::Record>> Database::RecordsOfJob(
    const std::string& job) {
  absl::StatusOr<Statement*> select = connection_->Prepare(absl::StrCat(
      "SELECT ", kRecordColumns, "WHERE r.job_id = ?1 ORDER BY r.id"));
  if (!select.ok()) return select.status();
  (*select)->BindText(1, job);
  return CollectRecords(**select, path_);
}

absl::StatusOr<std::vector<proto::Record>> Database::RecordsOfTarget(
    const std::string& target, int64_t limit,
    const std::vector<std::string>& except) {
  if (limit <= 0) return std::vector<proto::Record>{};
  // A record's turn is its rank among its workload's records, newest
  // first: the first turn holds every workload's newest record.
  std::string excluded;
  for (size_t i = 0; i < except.size(); ++i) {
    absl::StrAppend(&excluded, i == 0 ? "AND w.key NOT IN (" : ", ", "?",
                    i + 3);
  }
  if (!except.empty()) excluded += ") ";
  absl::StatusOr<Statement*> select = connection_->Prepare(absl::StrCat(
      "SELECT ", LATHE_DB_RECORD_COLUMNS,
      ", ROW_NUMBER() OVER (PARTITION BY r.workload_id ORDER BY r.id DESC) "
      "AS turn ",
      LATHE_DB_RECORD_FROM, "WHERE t.canonical = ?1 ", excluded,
      "ORDER BY turn, r.id DESC LIMIT ?2"));
  if (!select.ok()) return select.status();
  (*select)->BindText(1, target);
  (*select)->BindInt(2, limit);
  for (size_t i = 0; i < except.size(); ++i) {
    (*select)->BindText(static_cast<int>(i + 3), except[i]);
  }
  return CollectRecords(**select, path_);
}

absl::StatusOr<std::vector<proto::Record>> Database::RecordsOfTargetAfter(
    const std::string& target, int64_t after_id, int64_t limit) {
  if (limit <= 0) return std::vector<proto::Record>{};
  absl::StatusOr<Statement*> select = connection_->Prepare(
      absl::StrCat("SELECT ", kRecordColumns,
                   "WHERE t.canonical = ?1 AND r.id > ?2 ORDER BY r.id "
                   "LIMIT ?3"));
  if (!select.ok()) return select.status();
  (*select)->BindText(1, target);
  (*select)->BindInt(2, after_id);
  (*select)->BindInt(3, limit);
  return CollectRecords(**select, path_);
}

absl::StatusOr<int64_t> Database::LastRecordId() {
  absl::StatusOr<Statement*> select =
      connection_->Prepare("SELECT COALESCE(MAX(id), 0) FROM records");
  if (!select.ok()) return select.status();
  absl::StatusOr<bool> row = (*select)->Step();
  if (!row.ok()) return row.status();
  const int64_t id = *row ? (*select)->ColumnInt(0) : 0;
  (*select)->Reset();
  return id;
}

absl::StatusOr<bool> Database::IsMeasured(const std::string& workload_key,
                                          const std::string& target,
                                          const std::string& structural_hash) {
  absl::StatusOr<Statement*> select = connection_->Prepare(
      "SELECT EXISTS(SELECT 1 FROM records r JOIN workloads w ON w.id = "
      "r.workload_id "
      "JOIN targets t ON t.id = r.target_id "
      "WHERE w.key = ?1 AND t.canonical = ?2 AND r.structural_hash = ?3)");
  if (!select.ok()) return select.status();
  (*select)->BindText(1, workload_key);
  (*select)->BindText(2, target);
  (*select)->BindText(3, structural_hash);
  absl::StatusOr<bool> row = (*select)->Step();
  if (!row.ok()) return row.status();
  const bool measured = *row && (*select)->ColumnInt(0) != 0;
  (*select)->Reset();
  return measured;
}

absl::StatusOr<std::vector<std::string>> Database::MeasuredHashes(
    const std::string& workload_key, const std::string& target) {
  absl::StatusOr<Statement*> select = connection_->Prepare(
      "SELECT DISTINCT r.structural_hash FROM records r JOIN workloads w ON "
      "w.id = r.workload_id "
      "JOIN targets t ON t.id = r.target_id WHERE w.key = ?1 AND t.canonical = "
      "?2");
  if (!select.ok()) return select.status();
  (*select)->BindText(1, workload_key);
  (*select)->BindText(2, target);
  std::vector<std::string> hashes;
  while (true) {
    absl::StatusOr<bool> row = (*select)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    hashes.push_back((*select)->ColumnText(0));
  }
  (*select)->Reset();
  return hashes;
}

absl::StatusOr<std::vector<TaskSummary>> Database::Tasks(
    const std::string& job) {
  absl::StatusOr<Statement*> select = connection_->Prepare(
      "SELECT w.key, w.canonical, t.canonical, COUNT(*), SUM(r.status = 1), "
      "MIN(CASE WHEN r.status = 1 THEN r.median_s END) "
      "FROM records r JOIN workloads w ON w.id = r.workload_id "
      "JOIN targets t ON t.id = r.target_id WHERE ?1 = '' OR r.job_id = ?1 "
      "GROUP BY r.workload_id, r.target_id ORDER BY w.canonical, t.canonical");
  if (!select.ok()) return select.status();
  (*select)->BindText(1, job);
  std::vector<TaskSummary> tasks;
  while (true) {
    absl::StatusOr<bool> row = (*select)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    TaskSummary& task = tasks.emplace_back();
    task.workload_key = (*select)->ColumnText(0);
    task.workload = (*select)->ColumnText(1);
    task.target = (*select)->ColumnText(2);
    task.records = (*select)->ColumnInt(3);
    task.ok_records = (*select)->ColumnInt(4);
    if (!(*select)->ColumnIsNull(5))
      task.best_median_s = (*select)->ColumnDouble(5);
  }
  (*select)->Reset();
  return tasks;
}

absl::StatusOr<std::vector<RecordSummary>> Database::RecordHistory(
    const std::string& workload_key, const std::string& target,
    const std::string& job, int64_t limit) {
  absl::StatusOr<Statement*> select = connection_->Prepare(
      "SELECT r.id, r.structural_hash, r.status, r.median_s, r.measured_ms, "
      "r.runner, r.lathe_version, r.job_id FROM records r "
      "JOIN workloads w ON w.id = r.workload_id "
      "JOIN targets t ON t.id = r.target_id "
      "WHERE w.key = ?1 AND t.canonical = ?2 AND (?3 = '' OR r.job_id = ?3) "
      "ORDER BY r.id LIMIT ?4");
  if (!select.ok()) return select.status();
  (*select)->BindText(1, workload_key);
  (*select)->BindText(2, target);
  (*select)->BindText(3, job);
  (*select)->BindInt(4, std::max<int64_t>(0, limit));
  std::vector<RecordSummary> history;
  while (true) {
    absl::StatusOr<bool> row = (*select)->Step();
    if (!row.ok()) {
      (*select)->Reset();
      return row.status();
    }
    if (!*row) break;
    RecordSummary& r = history.emplace_back();
    r.id = (*select)->ColumnInt(0);
    r.structural_hash = (*select)->ColumnText(1);
    const int64_t status = (*select)->ColumnInt(2);
    r.status = proto::MeasureStatus_IsValid(static_cast<int>(status))
                   ? static_cast<proto::MeasureStatus>(status)
                   : proto::MEASURE_STATUS_UNSPECIFIED;
    if (r.status == proto::MEASURE_OK && !(*select)->ColumnIsNull(3))
      r.median_s = (*select)->ColumnDouble(3);
    r.measured_ms = (*select)->ColumnInt(4);
    r.runner = (*select)->ColumnText(5);
    r.lathe_version = (*select)->ColumnText(6);
    r.job = (*select)->ColumnText(7);
  }
  (*select)->Reset();
  return history;
}

absl::StatusOr<std::string> Database::ContentStamp() {
  absl::StatusOr<std::unique_ptr<ReadTransaction>> snapshot =
      ReadTransaction::Begin(*connection_);
  if (!snapshot.ok()) return snapshot.status();
  absl::StatusOr<int64_t> version =
      connection_->QueryInt("PRAGMA user_version");
  if (!version.ok()) return version.status();
  absl::StatusOr<Statement*> rows =
      connection_->Prepare("SELECT id, fingerprint FROM records ORDER BY id");
  if (!rows.ok()) return rows.status();
  Fnv128 digest;
  int64_t count = 0, last_id = 0;
  while (true) {
    absl::StatusOr<bool> row = (*rows)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    ++count;
    last_id = (*rows)->ColumnInt(0);
    digest.Int(last_id);
    digest.String((*rows)->ColumnText(1));
  }
  (*rows)->Reset();
  return absl::StrCat("lathe-db-stamp schema ", *version, " records ", count,
                      " last ", last_id, " digest ", digest.Hex());
}

absl::Status Database::ForEachRecord(
    const std::function<absl::Status(const proto::Record&)>& visit) {
  absl::StatusOr<std::unique_ptr<ReadTransaction>> snapshot =
      ReadTransaction::Begin(*connection_);
  if (!snapshot.ok()) return snapshot.status();
  // Not a cached statement: a visitor may run other queries.
  sqlite3_stmt* raw = nullptr;
  const std::string sql =
      absl::StrCat("SELECT ", kRecordColumns, "ORDER BY r.id");
  int rc =
      sqlite3_prepare_v2(connection_->raw(), sql.c_str(), -1, &raw, nullptr);
  if (rc != SQLITE_OK) return connection_->Error(rc, "reading every record");
  Statement statement(raw, &path_);
  while (true) {
    absl::StatusOr<bool> row = statement.Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();
    absl::StatusOr<proto::Record> record = RecordFromRow(statement, path_);
    if (!record.ok()) return record.status();
    LATHE_RETURN_IF_ERROR(visit(*record));
  }
}

}  // namespace lathe::db
