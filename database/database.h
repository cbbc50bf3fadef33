// The tuning database: one SQLite file of workloads, targets, records, jobs
// and the batches of tuning runs (docs/architecture.md, "The database"; the
// format in docs/database.md).
//
// Safe with one writer and many readers in other processes at once (WAL
// mode): a reader sees every batch committed before its query began and
// nothing of a batch in progress. A batch commits in one transaction, all or
// nothing; whatever was committed survives a kill of any process (and, with
// OpenOptions::durable, of the machine).
//
// A file that is not a Lathe database (another SQLite file, a truncated or
// corrupt one, anything else) or one of a newer schema version is refused
// before anything is written to it. Every error names the file.
//
// Lookups match targets exactly by default. With TargetMatching::kCompatible
// a record measured on another target of the same kind whose features the
// asked-for target all has (any thread count) may answer; the Match says
// which target answered and how it differs.
//
// The database knows nothing of IR: it stores serialized traces and the
// structural hash the measuring side computed. Checking that a trace still
// replays to that hash is the caller's part (api/record_lookup.h).
// Tests: tests/database/.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/record.pb.h"

namespace lathe::db {

class Connection;

struct OpenOptions {
  enum class Mode {
    kReadOnly,   // lookups only; never writes, not even a WAL checkpoint
    kReadWrite,  // an existing database
    kCreate,  // an existing database, or a new one when the file is absent or
              // empty
  };
  Mode mode = Mode::kReadOnly;
  // How long a writer or reader waits for another process's lock.
  int busy_timeout_ms = 10000;
  // Sync the WAL on every commit (survives power loss). Off, a commit
  // survives any process kill but maybe not a machine crash.
  bool durable = true;
  // Refuse to grow the file past this many bytes (0: no limit); a commit
  // that would is refused with ResourceExhausted, as on a full disk.
  int64_t max_size_bytes = 0;
  // Read every page at open (SQLite's `PRAGMA quick_check`) and refuse a
  // damaged file with DataLoss before anything reads or writes its records.
  // Off only for a caller that checks the whole file itself (`lathe db
  // check`, Database::Check).
  bool check_pages = true;
};

enum class TargetMatching { kExact, kCompatible };

// A record that answered a lookup and how its target relates to the one
// asked for.
struct Match {
  proto::Record record;
  bool exact = true;
  // Empty when exact; otherwise, e.g. "measured with 2 threads, asked for 4;
  // cpu skylake-avx512, asked for znver4".
  std::string difference;
};

struct CommitResult {
  int64_t added = 0;
  int64_t duplicates = 0;  // exact copies of stored records, skipped
  // Batch rows (TuningBatch) stored, and those skipped as exact copies of
  // stored ones (import and merge: Database::BatchSink).
  int64_t batches_added = 0;
  int64_t batch_duplicates = 0;
  // The index the batch row handed to Commit was given.
  std::optional<int64_t> batch_index;
};

// One (workload, target) pair with records.
struct TaskSummary {
  std::string workload_key;
  std::string workload;
  std::string target;
  int64_t records = 0;
  int64_t ok_records = 0;
  std::optional<double> best_median_s;
};

struct Stats {
  int schema_version = 0;
  int64_t workloads = 0;
  int64_t targets = 0;
  int64_t tasks = 0;
  int64_t jobs = 0;
  int64_t records = 0;
  // Records by status, indexed by proto::MeasureStatus.
  std::vector<int64_t> records_by_status;
  int64_t file_bytes = 0;
};

// One measured batch of a tuning run (table batches, schema version 4 on):
// what the report draws the cost model's accuracy from. Stored with the
// batch's records, in their transaction (Database::Commit).
struct TuningBatch {
  std::string job;  // "": a run without a job
  std::string workload_key;
  std::string target;  // canonical string
  // The job's batches in order, from 0 (the batches of runs without a job
  // count as one job's). The database assigns it when it stores the row,
  // after the job's batches stored already: a resumed job's batches
  // continue its numbering, and an imported or merged job's batches follow
  // the destination's. What a caller sets is ignored.
  int64_t index = 0;
  int64_t finished_ms = 0;  // Unix epoch; 0: when it is stored
  int64_t trials = 0;       // candidates measured in it
  // The cost model's pairwise accuracy on the batch before it trained on
  // it; nullopt while the model was untrained.
  std::optional<double> accuracy;
  int64_t trained_on = 0;  // rows the model had trained on
};

// InvalidArgument naming the field at fault when a batch row cannot be
// stored: empty workload key or target, fewer than 1 trial, a negative
// finish time or row count, an accuracy that is not a number in [0, 1].
absl::Status ValidateBatch(const TuningBatch& batch);

// A record without its trace and times: what a history of the search
// needs (the report), read without the blobs.
struct RecordSummary {
  int64_t id = 0;
  std::string structural_hash;
  proto::MeasureStatus status = proto::MEASURE_STATUS_UNSPECIFIED;
  std::optional<double> median_s;  // OK records only
  int64_t measured_ms = 0;
  std::string runner;
  std::string lathe_version;
  std::string job;
};

struct CheckReport {
  std::vector<std::string> problems;  // empty: the database is sound
  int64_t records_checked = 0;
  bool ok() const { return problems.empty(); }
};

// Removes a database file and its -wal and -shm beside it, best effort:
// what a command that created a database and then failed leaves behind
// (none of it open any more).
void RemoveDatabaseFiles(const std::string& path);

class Database {
 public:
  // The schema version this build writes; files of newer versions are refused.
  static int CurrentSchemaVersion();

  static absl::StatusOr<std::unique_ptr<Database>> Open(
      const std::string& path, const OpenOptions& options);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  const std::string& path() const { return path_; }

  // Stores every record or none. A record is validated first (workload key
  // and form, target, trace, hash, status; an OK record needs times and a
  // positive median) and an invalid one fails the whole batch naming its
  // index. Exact duplicates of stored records are skipped and counted. The
  // records' jobs are created when unknown.
  //
  // With `batch`, the batch's row (a tuning run's batch of these records)
  // is stored in the same transaction, after the records, so that a crash
  // never leaves one without the other: ValidateBatch's errors, or NotFound
  // when its workload or target is unknown even after the records, fail
  // the whole commit. Its index (CommitResult::batch_index) is assigned
  // inside the transaction, which holds the database's write lock: runs
  // committing beside it, in this process or another, never get the same
  // index for one job.
  absl::StatusOr<CommitResult> Commit(const std::vector<proto::Record>& records,
                                      const TuningBatch* batch = nullptr);

  // One transaction for every record and batch row `source` hands to its
  // sinks (import, merge): all are stored or, when the source, a record or
  // a batch fails, none. A batch row's workload and target must be known by
  // then (stored, or of a record handed before it); it is numbered after
  // the job's batches stored (its own index is ignored), in the order
  // handed; an exact copy of a stored row (same job, task, finish time,
  // trials, accuracy and rows) is skipped and counted, so that importing or
  // merging the same file twice adds nothing. At most kMaxBatchesPerCommit
  // rows per commit (InvalidArgument beyond): what the copy check holds in
  // memory stays bounded.
  using RecordSink = std::function<absl::Status(const proto::Record&)>;
  using BatchSink = std::function<absl::Status(const TuningBatch&)>;
  using RecordSource =
      std::function<absl::Status(const RecordSink&, const BatchSink&)>;
  absl::StatusOr<CommitResult> CommitFrom(const RecordSource& source);
  static constexpr int64_t kMaxBatchesPerCommit = 1000000;

  // Creates the job, or updates its description and state.
  absl::Status PutJob(const proto::Job& job);
  absl::StatusOr<std::vector<proto::Job>> Jobs();

  // The fastest program of (workload, target) and its record; nullopt when
  // there is none. A program (structural hash) counts by its latest record:
  // when the tuner measures a near-tie again, the new measurement decides,
  // and a program whose latest measurement failed is not handed out.
  absl::StatusOr<std::optional<Match>> Best(
      const std::string& workload_key, const proto::TargetInfo& target,
      TargetMatching matching = TargetMatching::kExact);
  // The k fastest programs, by their latest records as in Best, fastest
  // first (ties: earlier record first); each program once.
  absl::StatusOr<std::vector<Match>> Top(
      const std::string& workload_key, const proto::TargetInfo& target, int k,
      TargetMatching matching = TargetMatching::kExact);

  // Every record of the task, any status, in commit order (what the cost
  // model trains on).
  absl::StatusOr<std::vector<proto::Record>> RecordsOfTask(
      const std::string& workload_key, const std::string& target);
  absl::StatusOr<std::vector<proto::Record>> RecordsOfJob(
      const std::string& job);
  // Records of every workload measured on `target` (any status), but those
  // of the workloads in `except` (keys), at most `limit` in all, newest
  // first and shared fairly among the workloads: each workload's newest
  // record, then each one's second newest, and so on, so that one workload
  // with many records does not crowd out the others (what the cost model
  // learns from other tasks of the target). Within a turn, newer records
  // come first. limit <= 0: none.
  absl::StatusOr<std::vector<proto::Record>> RecordsOfTarget(
      const std::string& target, int64_t limit,
      const std::vector<std::string>& except = {});
  // Records of `target` (any workload, any status) committed after the
  // record with id `after_id`, in commit order (their ids set), at most
  // `limit`: how a tuning run follows what others commit beside it
  // (tuner/search/concurrent_runs.h). LastRecordId: the id of the newest
  // record of any target (0 when there is none), where it starts following.
  absl::StatusOr<std::vector<proto::Record>> RecordsOfTargetAfter(
      const std::string& target, int64_t after_id, int64_t limit);
  absl::StatusOr<int64_t> LastRecordId();
  // Whether a program with this structural hash was measured for the task,
  // with any status (the search never measures a program twice).
  absl::StatusOr<bool> IsMeasured(const std::string& workload_key,
                                  const std::string& target,
                                  const std::string& structural_hash);
  // The structural hashes measured for the task (to seed a search's dedupe).
  absl::StatusOr<std::vector<std::string>> MeasuredHashes(
      const std::string& workload_key, const std::string& target);

  // Every task with records, or with `job`'s records (counts of those);
  // by workload form, then target.
  absl::StatusOr<std::vector<TaskSummary>> Tasks(const std::string& job = "");
  // The task's records in commit order, without trace and times, those of
  // `job` only unless it is empty; at most `limit` (the first ones).
  absl::StatusOr<std::vector<RecordSummary>> RecordHistory(
      const std::string& workload_key, const std::string& target,
      const std::string& job = "", int64_t limit = INT64_MAX);

  // The task's batches in the order added, `job`'s only unless it is
  // empty; none in a file older than schema version 4 opened read-only.
  absl::StatusOr<std::vector<TuningBatch>> Batches(
      const std::string& workload_key, const std::string& target,
      const std::string& job = "");
  // Calls `visit` with every batch of a task that has records, in the order
  // added, stopping at the first error it returns (export, merge: a batch
  // of a task whose records were all pruned is in no report, and could not
  // be stored without them). None in a file older than schema version 4.
  absl::Status ForEachBatch(
      const std::function<absl::Status(const TuningBatch&)>& visit);
  absl::StatusOr<Stats> GetStats();

  // One line that changes when, and only when, what lookups answer from
  // may have changed: the schema version, the number of records, the last
  // record id, and a digest of every record's id and fingerprint. Builds
  // regenerate their kernels on a change of it (`lathe db stamp`), not of
  // the file's mtime, which commits still in the WAL, a copy that keeps an
  // older mtime, or a write that changed nothing would mislead.
  absl::StatusOr<std::string> ContentStamp();

  // Calls `visit` with every record in commit order, stopping at the first
  // error it returns (export, merge, check).
  absl::Status ForEachRecord(
      const std::function<absl::Status(const proto::Record&)>& visit);

  // Keeps the latest records of the k fastest programs of every task (as
  // Top ranks them) and deletes the rest, other statuses and superseded
  // measurements included; returns how many were deleted.
  absl::StatusOr<int64_t> Prune(int k);

  // The cost model named `name` saved for the target (tuner/), replacing
  // any earlier one; nullopt from Get when none was saved.
  absl::Status PutCostModel(const proto::TargetInfo& target,
                            const std::string& name, const std::string& model,
                            int64_t trained_on_records);
  absl::StatusOr<std::optional<std::string>> GetCostModel(
      const std::string& target, const std::string& name);

  // SQLite's integrity and foreign-key checks, then Lathe's: every record
  // parses, its fingerprint matches its content, an OK record has times and
  // its median is theirs, and table best holds each task's winner.
  absl::StatusOr<CheckReport> Check();

 private:
  Database(std::string path, std::unique_ptr<Connection> connection,
           OpenOptions options, int schema_version);
  // The workloads, targets and jobs the batch being committed has met.
  struct BatchIds;
  absl::Status Insert(const proto::Record& record, CommitResult& result,
                      BatchIds& ids);
  // Stores a batch row inside the committing transaction (database_batches.cc);
  // with `skip_copies`, an exact copy of a stored row is counted instead.
  absl::Status InsertBatch(const TuningBatch& batch, bool skip_copies,
                           CommitResult& result, BatchIds& ids);
  // CommitFrom, and `batch` stored after what `source` handed (Commit).
  absl::StatusOr<CommitResult> CommitAll(const RecordSource& source,
                                         const TuningBatch* batch);
  absl::StatusOr<int64_t> WorkloadId(const proto::Record& record);
  absl::StatusOr<int64_t> TargetId(const proto::TargetInfo& target);
  absl::StatusOr<std::vector<Match>> Lookup(const std::string& workload_key,
                                            const proto::TargetInfo& target,
                                            int k, TargetMatching matching);
  // Makes table best's row of the task its fastest counting record (or
  // removes it when none counts). Inside the committing transaction.
  absl::Status RefreshBest(int64_t workload_id, int64_t target_id);
  // Check's part for table best: every task's row is its ranking's winner.
  void CheckBest(CheckReport& report);

  std::string path_;
  std::unique_ptr<Connection> connection_;
  OpenOptions options_;
  // The file's schema version: an older file opened read-only is not
  // migrated, and has no table best to look in.
  int schema_version_;
};

}  // namespace lathe::db
