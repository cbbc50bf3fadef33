// Database's batches: the measured batches of tuning runs and the cost
// model's accuracy on each (table batches, schema version 4; see
// database.h).
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "database/database.h"
#include "database/database_internal.h"
#include "database/sqlite_connection.h"

namespace lathe::db {

absl::StatusOr<int64_t> Database::AddBatch(const TuningBatch& batch) {
  absl::StatusOr<std::unique_ptr<WriteTransaction>> transaction =
      WriteTransaction::Begin(*connection_);
  if (!transaction.ok()) return transaction.status();
  absl::StatusOr<Statement*> ids = connection_->Prepare(
      "SELECT (SELECT id FROM workloads WHERE key = ?1), "
      "(SELECT id FROM targets WHERE canonical = ?2), "
      "(SELECT COALESCE(MAX(batch_index) + 1, 0) FROM batches WHERE job_id IS "
      "?3)");
  if (!ids.ok()) return ids.status();
  (*ids)->BindText(1, batch.workload_key);
  (*ids)->BindText(2, batch.target);
  if (batch.job.empty()) {
    (*ids)->BindNull(3);
  } else {
    (*ids)->BindText(3, batch.job);
  }
  absl::StatusOr<bool> row = (*ids)->Step();
  if (!row.ok()) {
    (*ids)->Reset();
    return row.status();
  }
  const bool workload_known = !(*ids)->ColumnIsNull(0);
  const bool target_known = !(*ids)->ColumnIsNull(1);
  const int64_t workload_id = (*ids)->ColumnInt(0);
  const int64_t target_id = (*ids)->ColumnInt(1);
  const int64_t index = (*ids)->ColumnInt(2);
  (*ids)->Reset();
  if (!workload_known) {
    return absl::NotFoundError(absl::StrCat(path_, ": batch of workload ",
                                            batch.workload_key,
                                            ": no such workload"));
  }
  if (!target_known) {
    return absl::NotFoundError(absl::StrCat(
        path_, ": batch on target \"", batch.target, "\": no such target"));
  }
  absl::StatusOr<Statement*> insert = connection_->Prepare(
      "INSERT INTO batches(job_id, workload_id, target_id, batch_index, "
      "finished_ms, trials, accuracy, trained_on) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  if (!insert.ok()) return insert.status();
  if (batch.job.empty()) {
    (*insert)->BindNull(1);
  } else {
    (*insert)->BindText(1, batch.job);
  }
  (*insert)->BindInt(2, workload_id);
  (*insert)->BindInt(3, target_id);
  (*insert)->BindInt(4, index);
  (*insert)->BindInt(5, batch.finished_ms ? batch.finished_ms : NowUnixMs());
  (*insert)->BindInt(6, batch.trials);
  if (batch.accuracy) {
    (*insert)->BindDouble(7, *batch.accuracy);
  } else {
    (*insert)->BindNull(7);
  }
  (*insert)->BindInt(8, batch.trained_on);
  LATHE_RETURN_IF_ERROR((*insert)->Run());
  LATHE_RETURN_IF_ERROR((*transaction)->Commit());
  return index;
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

}  // namespace lathe::db
