// Database's jobs: the rows of table jobs (see database.h).
#include "database/database.h"
#include "database/database_internal.h"
#include "database/job_state.h"
#include "database/sqlite_connection.h"

namespace lathe::db {

absl::Status Database::PutJob(const proto::Job& job) {
  if (job.id().empty()) return absl::InvalidArgumentError("job id is empty");
  absl::StatusOr<Statement*> put = connection_->Prepare(
      "INSERT INTO jobs(id, description, created_ms, state) VALUES(?1, ?2, ?3, "
      "?4) "
      "ON CONFLICT(id) DO UPDATE SET description = excluded.description, "
      "state = excluded.state");
  if (!put.ok()) return put.status();
  (*put)->BindText(1, job.id());
  (*put)->BindText(2, job.description());
  (*put)->BindInt(
      3, job.created_at_unix_ms() ? job.created_at_unix_ms() : NowUnixMs());
  (*put)->BindText(
      4, job.state().empty() ? JobStateName(JobState::kRunning) : job.state());
  return (*put)->Run();
}

absl::StatusOr<std::vector<proto::Job>> Database::Jobs() {
  absl::StatusOr<Statement*> select = connection_->Prepare(
      "SELECT id, description, created_ms, state FROM jobs ORDER BY "
      "created_ms, id");
  if (!select.ok()) return select.status();
  std::vector<proto::Job> jobs;
  while (true) {
    absl::StatusOr<bool> row = (*select)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    proto::Job& job = jobs.emplace_back();
    job.set_id((*select)->ColumnText(0));
    job.set_description((*select)->ColumnText(1));
    job.set_created_at_unix_ms((*select)->ColumnInt(2));
    job.set_state((*select)->ColumnText(3));
  }
  (*select)->Reset();
  return jobs;
}

}  // namespace lathe::db
