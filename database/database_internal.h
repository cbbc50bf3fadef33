// What the files of the Database class (database.cc, database_lookup.cc,
// database_jobs.cc, database_batches.cc, database_cost_models.cc,
// database_maintenance.cc) share: the columns every record query selects and
// the decoding of its rows, and what one commit's transaction remembers.
// Private to database/.
// Tests: tests/database/database_test.cc.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "database/database.h"
#include "database/sqlite_connection.h"
#include "proto/record.pb.h"

namespace lathe::db {

// Every record query selects these columns, in this order (RecordFromRow).
#define LATHE_DB_RECORD_COLUMNS                                           \
  "r.id, w.key, w.canonical, t.canonical, t.kind, t.cpu, t.features, "    \
  "t.num_threads, "                                                       \
  "t.device, r.structural_hash, r.trace, r.times, r.median_s, r.spread, " \
  "r.status, r.error, "                                                   \
  "r.runner, r.lathe_version, r.measured_ms, r.job_id "
#define LATHE_DB_RECORD_FROM                                                   \
  "FROM records r JOIN workloads w ON w.id = r.workload_id JOIN targets t ON " \
  "t.id = r.target_id "
inline constexpr char kRecordColumns[] =
    LATHE_DB_RECORD_COLUMNS LATHE_DB_RECORD_FROM;

// The target columns of a row (canonical, kind, cpu, features, num_threads,
// device) from column `first` on.
void TargetFromRow(const Statement& row, int first, proto::TargetInfo& target);

// The record of a row of kRecordColumns. DataLoss (naming `path` and the
// record) when its trace or times do not parse.
absl::StatusOr<proto::Record> RecordFromRow(const Statement& row,
                                            const std::string& path);

// Runs a prepared record query and collects its rows (the statement is reset
// afterwards, also on errors).
absl::StatusOr<std::vector<proto::Record>> CollectRecords(
    Statement& statement, const std::string& path);

// A batch's records mostly share their workload, target and job: their rows
// are looked up (or created) once per batch, not per record. For one
// transaction only (CommitFrom), which holds the write lock: nothing else
// changes what it remembers.
struct Database::BatchIds {
  std::unordered_map<std::string, std::pair<int64_t, std::string>>
      workloads;                                     // key: id, form
  std::unordered_map<std::string, int64_t> targets;  // canonical: id
  std::unordered_set<std::string> jobs;
  std::set<std::pair<int64_t, int64_t>>
      tasks;  // (workload id, target id) given records
  // Batch rows (InsertBatch): each job's next index ("": runs without a
  // job), the tasks whose stored rows' copy keys have been read, the copy
  // keys of those rows and of the rows stored since, and how many rows the
  // commit was handed.
  std::unordered_map<std::string, int64_t> next_batch_index;
  std::set<std::pair<int64_t, int64_t>> batch_tasks_read;
  std::unordered_set<std::string> batch_copies;
  int64_t batches_handed = 0;
};

// Milliseconds since the Unix epoch, now.
int64_t NowUnixMs();

}  // namespace lathe::db
