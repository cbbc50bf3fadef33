// Database's batches: the measured batches of tuning runs and the cost
// model's accuracy on each (table batches, schema version 4; see
// database.h). Rows are stored inside a commit's transaction (InsertBatch,
// called by Database::CommitAll), never on their own.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <sqlite3.h>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "database/database.h"
#include "database/database_internal.h"
#include "database/fnv128.h"
#include "database/sqlite_connection.h"

namespace lathe::db {
namespace {

// What makes two batch rows copies of each other: everything but the row
// id and the index (which a copy gets anew in its destination).
std::string CopyKey(const std::string& job, int64_t workload_id,
                    int64_t target_id, int64_t finished_ms, int64_t trials,
                    const std::optional<double>& accuracy, int64_t trained_on) {
  Fnv128 hash;
  hash.String(job);
  hash.Int(workload_id);
  hash.Int(target_id);
  hash.Int(finished_ms);
  hash.Int(trials);
  hash.Int(accuracy.has_value() ? 1 : 0);
  hash.Double(accuracy.value_or(0));
  hash.Int(trained_on);
  return hash.Hex();
}

void BindJob(Statement& statement, int index, const std::string& job) {
  if (job.empty()) {
    statement.BindNull(index);
  } else {
    statement.BindText(index, job);
  }
}

// The id `sql` (a query of one parameter) selects for `value`; nullopt when
// it selects none.
absl::StatusOr<std::optional<int64_t>> RowId(Connection& connection,
                                             const char* sql,
                                             const std::string& value) {
  absl::StatusOr<Statement*> select = connection.Prepare(sql);
  if (!select.ok()) return select.status();
  (*select)->BindText(1, value);
  absl::StatusOr<bool> row = (*select)->Step();
  std::optional<int64_t> id;
  if (row.ok() && *row) id = (*select)->ColumnInt(0);
  (*select)->Reset();
  if (!row.ok()) return row.status();
  return id;
}

}  // namespace

absl::Status ValidateBatch(const TuningBatch& batch) {
  auto invalid = [](const std::string& what) {
    return absl::InvalidArgumentError(what);
  };
  if (batch.workload_key.empty()) return invalid("workload_key is empty");
  if (batch.target.empty()) return invalid("target is empty");
  if (batch.trials < 1)
    return invalid(absl::StrCat("trials is ", batch.trials, " (at least 1)"));
  if (batch.finished_ms < 0)
    return invalid(
        absl::StrCat("finished_ms is negative (", batch.finished_ms, ")"));
  if (batch.trained_on < 0)
    return invalid(
        absl::StrCat("trained_on is negative (", batch.trained_on, ")"));
  if (batch.accuracy && !(std::isfinite(*batch.accuracy) &&
                          *batch.accuracy >= 0 && *batch.accuracy <= 1)) {
    return invalid(
        absl::StrCat("accuracy is ", *batch.accuracy, " (not in [0, 1])"));
  }
  return absl::OkStatus();
}

absl::Status Database::InsertBatch(const TuningBatch& batch, bool skip_copies,
                                   CommitResult& result, BatchIds& ids) {
  if (++ids.batches_handed > kMaxBatchesPerCommit) {
    return absl::InvalidArgumentError(
        absl::StrCat("more than ", kMaxBatchesPerCommit,
                     " batch rows in one commit (kMaxBatchesPerCommit)"));
  }
  LATHE_RETURN_IF_ERROR(ValidateBatch(batch));
  // 1. The task's rows: known by now, from the records or stored before.
  int64_t workload_id = 0;
  if (auto known = ids.workloads.find(batch.workload_key);
      known != ids.workloads.end()) {
    workload_id = known->second.first;
  } else {
    absl::StatusOr<std::optional<int64_t>> id =
        RowId(*connection_, "SELECT id FROM workloads WHERE key = ?1",
              batch.workload_key);
    if (!id.ok()) return id.status();
    if (!id->has_value()) {
      return absl::NotFoundError(
          absl::StrCat("workload ", batch.workload_key,
                       ": no such workload (no record of it is stored or "
                       "comes before the batch)"));
    }
    workload_id = **id;
  }
  int64_t target_id = 0;
  if (auto known = ids.targets.find(batch.target); known != ids.targets.end()) {
    target_id = known->second;
  } else {
    absl::StatusOr<std::optional<int64_t>> id =
        RowId(*connection_, "SELECT id FROM targets WHERE canonical = ?1",
              batch.target);
    if (!id.ok()) return id.status();
    if (!id->has_value()) {
      return absl::NotFoundError(
          absl::StrCat("target \"", batch.target,
                       "\": no such target (no record of it is stored or "
                       "comes before the batch)"));
    }
    target_id = **id;
    ids.targets.emplace(batch.target, target_id);
  }
  const int64_t finished_ms =
      batch.finished_ms != 0 ? batch.finished_ms : NowUnixMs();
  const std::string copy_key =
      CopyKey(batch.job, workload_id, target_id, finished_ms, batch.trials,
              batch.accuracy, batch.trained_on);

  // 2. A copy of a stored row is skipped. The stored rows' keys are read
  // once per task and commit; rows stored since join them (step 4).
  const std::pair<int64_t, int64_t> task(workload_id, target_id);
  if (skip_copies) {
    if (ids.batch_tasks_read.insert(task).second) {
      absl::StatusOr<Statement*> stored = connection_->Prepare(
          "SELECT job_id, finished_ms, trials, accuracy, trained_on FROM "
          "batches WHERE workload_id = ?1 AND target_id = ?2");
      if (!stored.ok()) return stored.status();
      (*stored)->BindInt(1, workload_id);
      (*stored)->BindInt(2, target_id);
      while (true) {
        absl::StatusOr<bool> row = (*stored)->Step();
        if (!row.ok()) {
          (*stored)->Reset();
          return row.status();
        }
        if (!*row) break;
        const Statement& s = **stored;
        std::optional<double> accuracy;
        if (!s.ColumnIsNull(3)) accuracy = s.ColumnDouble(3);
        ids.batch_copies.insert(CopyKey(s.ColumnText(0), workload_id, target_id,
                                        s.ColumnInt(1), s.ColumnInt(2),
                                        accuracy, s.ColumnInt(4)));
      }
      (*stored)->Reset();
    }
    if (ids.batch_copies.count(copy_key) > 0) {
      ++result.batch_duplicates;
      return absl::OkStatus();
    }
  }

  // 3. The index: after the job's stored batches. This transaction holds
  // the write lock, so no other writer can take the same one meanwhile.
  int64_t index = 0;
  if (auto next = ids.next_batch_index.find(batch.job);
      next != ids.next_batch_index.end()) {
    index = next->second;
  } else {
    absl::StatusOr<Statement*> last = connection_->Prepare(
        "SELECT MAX(batch_index) FROM batches WHERE job_id IS ?1");
    if (!last.ok()) return last.status();
    BindJob(**last, 1, batch.job);
    absl::StatusOr<bool> row = (*last)->Step();
    std::optional<int64_t> max_index;
    if (row.ok() && *row && !(*last)->ColumnIsNull(0))
      max_index = (*last)->ColumnInt(0);
    (*last)->Reset();
    if (!row.ok()) return row.status();
    if (max_index &&
        (*max_index < 0 || *max_index == std::numeric_limits<int64_t>::max())) {
      return absl::DataLossError(absl::StrCat(
          path_, ": job \"", batch.job, "\" has a batch with index ",
          *max_index, "; cannot number the next"));
    }
    index = max_index ? *max_index + 1 : 0;
  }

  // 4. The row.
  absl::StatusOr<Statement*> insert = connection_->Prepare(
      "INSERT INTO batches(job_id, workload_id, target_id, batch_index, "
      "finished_ms, trials, accuracy, trained_on) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  if (!insert.ok()) return insert.status();
  BindJob(**insert, 1, batch.job);
  (*insert)->BindInt(2, workload_id);
  (*insert)->BindInt(3, target_id);
  (*insert)->BindInt(4, index);
  (*insert)->BindInt(5, finished_ms);
  (*insert)->BindInt(6, batch.trials);
  if (batch.accuracy) {
    (*insert)->BindDouble(7, *batch.accuracy);
  } else {
    (*insert)->BindNull(7);
  }
  (*insert)->BindInt(8, batch.trained_on);
  LATHE_RETURN_IF_ERROR((*insert)->Run());
  ids.next_batch_index[batch.job] = index + 1;
  if (ids.batch_tasks_read.count(task) > 0) ids.batch_copies.insert(copy_key);
  ++result.batches_added;
  result.batch_index = index;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TuningBatch>> Database::Batches(
    const std::string& workload_key, const std::string& target,
    const std::string& job) {
  // A file of an older version opened read-only has no table batches.
  if (schema_version_ < 4) return std::vector<TuningBatch>{};
  absl::StatusOr<Statement*> select = connection_->Prepare(
      "SELECT b.job_id, b.batch_index, b.finished_ms, b.trials, b.accuracy, "
      "b.trained_on FROM batches b JOIN workloads w ON w.id = b.workload_id "
      "JOIN targets t ON t.id = b.target_id "
      "WHERE w.key = ?1 AND t.canonical = ?2 AND (?3 = '' OR b.job_id = ?3) "
      "ORDER BY b.id");
  if (!select.ok()) return select.status();
  (*select)->BindText(1, workload_key);
  (*select)->BindText(2, target);
  (*select)->BindText(3, job);
  std::vector<TuningBatch> batches;
  while (true) {
    absl::StatusOr<bool> row = (*select)->Step();
    if (!row.ok()) {
      (*select)->Reset();
      return row.status();
    }
    if (!*row) break;
    TuningBatch& batch = batches.emplace_back();
    batch.job = (*select)->ColumnText(0);
    batch.workload_key = workload_key;
    batch.target = target;
    batch.index = (*select)->ColumnInt(1);
    batch.finished_ms = (*select)->ColumnInt(2);
    batch.trials = (*select)->ColumnInt(3);
    if (!(*select)->ColumnIsNull(4))
      batch.accuracy = (*select)->ColumnDouble(4);
    batch.trained_on = (*select)->ColumnInt(5);
  }
  (*select)->Reset();
  return batches;
}

absl::Status Database::ForEachBatch(
    const std::function<absl::Status(const TuningBatch&)>& visit) {
  if (schema_version_ < 4) return absl::OkStatus();
  absl::StatusOr<std::unique_ptr<ReadTransaction>> snapshot =
      ReadTransaction::Begin(*connection_);
  if (!snapshot.ok()) return snapshot.status();
  // Not a cached statement: a visitor may run other queries.
  sqlite3_stmt* raw = nullptr;
  const char* sql =
      "SELECT b.job_id, w.key, t.canonical, b.batch_index, b.finished_ms, "
      "b.trials, b.accuracy, b.trained_on FROM batches b "
      "JOIN workloads w ON w.id = b.workload_id "
      "JOIN targets t ON t.id = b.target_id "
      "WHERE EXISTS (SELECT 1 FROM records r WHERE r.workload_id = "
      "b.workload_id AND r.target_id = b.target_id) ORDER BY b.id";
  const int rc = sqlite3_prepare_v2(connection_->raw(), sql, -1, &raw, nullptr);
  if (rc != SQLITE_OK) return connection_->Error(rc, "reading every batch");
  Statement statement(raw, &path_);
  while (true) {
    absl::StatusOr<bool> row = statement.Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();
    TuningBatch batch;
    batch.job = statement.ColumnText(0);
    batch.workload_key = statement.ColumnText(1);
    batch.target = statement.ColumnText(2);
    batch.index = statement.ColumnInt(3);
    batch.finished_ms = statement.ColumnInt(4);
    batch.trials = statement.ColumnInt(5);
    if (!statement.ColumnIsNull(6)) batch.accuracy = statement.ColumnDouble(6);
    batch.trained_on = statement.ColumnInt(7);
    LATHE_RETURN_IF_ERROR(visit(batch));
  }
}

}  // namespace lathe::db
