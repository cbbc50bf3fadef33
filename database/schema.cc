#include "database/schema.h"

#include "absl/strings/str_cat.h"

namespace lathe::db {

const std::vector<std::string>& Migrations() {
  static const std::vector<std::string>* migrations = new std::vector<
      std::string>{
      // Version 1: workloads, targets, jobs, records.
      R"sql(
CREATE TABLE workloads(
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,
  canonical TEXT NOT NULL);
CREATE TABLE targets(
  id INTEGER PRIMARY KEY,
  canonical TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  cpu TEXT NOT NULL,
  features TEXT NOT NULL,   -- every enabled feature, sorted, comma-separated
  num_threads INTEGER NOT NULL,
  device TEXT NOT NULL);
CREATE TABLE jobs(
  id TEXT PRIMARY KEY,
  description TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  state TEXT NOT NULL);
CREATE TABLE records(
  id INTEGER PRIMARY KEY,
  workload_id INTEGER NOT NULL REFERENCES workloads(id),
  target_id INTEGER NOT NULL REFERENCES targets(id),
  structural_hash TEXT NOT NULL,
  trace BLOB NOT NULL,       -- serialized lathe.proto.Trace
  times BLOB NOT NULL,       -- serialized lathe.proto.FloatList, seconds
  median_s REAL,             -- as measured; only OK records rank
  spread REAL,
  status INTEGER NOT NULL,   -- lathe.proto.MeasureStatus
  error TEXT NOT NULL,
  runner TEXT NOT NULL,
  lathe_version TEXT NOT NULL,
  measured_ms INTEGER NOT NULL,
  job_id TEXT REFERENCES jobs(id),
  fingerprint TEXT NOT NULL UNIQUE);  -- hash of the content: exact duplicates
-- best-by-(workload, target) is a walk down this index
CREATE INDEX records_best ON records(workload_id, target_id, status, median_s, id);
CREATE INDEX records_program ON records(workload_id, target_id, structural_hash);
CREATE INDEX records_job ON records(job_id);
)sql",
      // Version 2: the cost models saved per target.
      R"sql(
CREATE TABLE cost_models(
  target_id INTEGER NOT NULL REFERENCES targets(id),
  name TEXT NOT NULL,
  model BLOB NOT NULL,
  records INTEGER NOT NULL,  -- how many records it was trained on
  saved_ms INTEGER NOT NULL,
  PRIMARY KEY(target_id, name));
)sql",
      // Version 3: the winner of each (workload, target), copied out of
      // records. A build's lookup then reads a few pages of a table the size
      // of the task count (~1 KB per task) instead of walking an index of a
      // table the size of the whole tuning history and reading a random page
      // of it: with 10^6 records, that page was often not in memory.
      // Kept by Database::CommitFrom and Prune in the same transaction as
      // the records; Check compares it with the ranking of records. No
      // foreign key to records(id): deleting records would then scan this
      // table for every row deleted.
      absl::StrCat(R"sql(
CREATE TABLE best(
  workload_id INTEGER NOT NULL REFERENCES workloads(id),
  target_id INTEGER NOT NULL REFERENCES targets(id),
  id INTEGER NOT NULL,        -- the record's id in records
  structural_hash TEXT NOT NULL,
  trace BLOB NOT NULL,
  times BLOB NOT NULL,
  median_s REAL,
  spread REAL,
  status INTEGER NOT NULL,
  error TEXT NOT NULL,
  runner TEXT NOT NULL,
  lathe_version TEXT NOT NULL,
  measured_ms INTEGER NOT NULL,
  job_id TEXT,
  PRIMARY KEY(workload_id, target_id));
)sql",
                   kRebuildBestSql),
      // Version 4: the batches of tuning runs, with the cost model's
      // accuracy on each (what `lathe report` draws besides the records).
      // job_id has no foreign key: Prune deletes the jobs left without
      // records, and a batch's history outlives its records.
      R"sql(
CREATE TABLE batches(
  id INTEGER PRIMARY KEY,
  job_id TEXT,                -- NULL: a run without a job
  workload_id INTEGER NOT NULL REFERENCES workloads(id),
  target_id INTEGER NOT NULL REFERENCES targets(id),
  batch_index INTEGER NOT NULL,  -- the job's batches in order, from 0
  finished_ms INTEGER NOT NULL,
  trials INTEGER NOT NULL,
  accuracy REAL,              -- pairwise, before training on it; NULL: untrained
  trained_on INTEGER NOT NULL);  -- rows the model had trained on
CREATE INDEX batches_task ON batches(workload_id, target_id, id);
CREATE INDEX batches_job ON batches(job_id, batch_index);
)sql",
  };
  return *migrations;
}

absl::Status Migrate(Connection& connection, int from) {
  const std::vector<std::string>& migrations = Migrations();
  for (int version = from; version < static_cast<int>(migrations.size());
       ++version) {
    absl::StatusOr<std::unique_ptr<WriteTransaction>> transaction =
        WriteTransaction::Begin(connection);
    if (!transaction.ok()) return transaction.status();
    absl::Status applied = connection.Exec(migrations[version]);
    if (applied.ok()) {
      applied = connection.Exec(
          absl::StrCat("PRAGMA application_id = ", kApplicationId,
                       "; PRAGMA user_version = ", version + 1));
    }
    if (applied.ok()) applied = (*transaction)->Commit();
    if (!applied.ok()) {
      return absl::Status(
          applied.code(),
          absl::StrCat("migrating schema from version ", version, " to ",
                       version + 1, ": ", applied.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace lathe::db
