#include "database/database.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <sqlite3.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "database/file_check.h"
#include "database/fnv128.h"
#include "database/record_codec.h"
#include "database/schema.h"
#include "database/sqlite_connection.h"
#include "database/target_match.h"

namespace lathe::db {
namespace {

bool PathExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

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
constexpr char kRecordColumns[] = LATHE_DB_RECORD_COLUMNS LATHE_DB_RECORD_FROM;

absl::Status Prefixed(const absl::Status& status, absl::string_view prefix) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(prefix, status.message()));
}

void TargetFromRow(const Statement& row, int first, proto::TargetInfo& target) {
  target.set_canonical(row.ColumnText(first));
  target.set_kind(row.ColumnText(first + 1));
  target.set_cpu(row.ColumnText(first + 2));
  for (absl::string_view feature :
       absl::StrSplit(row.ColumnText(first + 3), ',', absl::SkipEmpty())) {
    target.add_features(std::string(feature));
  }
  target.set_num_threads(static_cast<int32_t>(row.ColumnInt(first + 4)));
  target.set_device(row.ColumnText(first + 5));
}

absl::StatusOr<proto::Record> RecordFromRow(const Statement& row,
                                            const std::string& path) {
  proto::Record record;
  record.set_id(row.ColumnInt(0));
  record.set_workload_key(row.ColumnText(1));
  record.set_workload(row.ColumnText(2));
  TargetFromRow(row, 3, *record.mutable_target());
  record.set_structural_hash(row.ColumnText(9));
  if (!record.mutable_trace()->ParseFromString(row.ColumnBlob(10))) {
    return absl::DataLossError(absl::StrCat(path, ": record ", record.id(),
                                            ": its trace does not parse"));
  }
  proto::FloatList times;
  if (!times.ParseFromString(row.ColumnBlob(11))) {
    return absl::DataLossError(absl::StrCat(path, ": record ", record.id(),
                                            ": its times do not parse"));
  }
  *record.mutable_times_s() = times.values();
  if (!row.ColumnIsNull(12)) record.set_median_s(row.ColumnDouble(12));
  if (!row.ColumnIsNull(13)) record.set_spread(row.ColumnDouble(13));
  record.set_status(static_cast<proto::MeasureStatus>(row.ColumnInt(14)));
  record.set_error(row.ColumnText(15));
  record.set_runner(row.ColumnText(16));
  record.set_lathe_version(row.ColumnText(17));
  record.set_measured_at_unix_ms(row.ColumnInt(18));
  record.set_job(row.ColumnText(19));
  return record;
}

// Runs a prepared record query and collects its rows.
absl::StatusOr<std::vector<proto::Record>> CollectRecords(
    Statement& statement, const std::string& path) {
  std::vector<proto::Record> records;
  while (true) {
    absl::StatusOr<bool> row = statement.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    absl::StatusOr<proto::Record> record = RecordFromRow(statement, path);
    if (!record.ok()) {
      // A cached statement left mid-way would hold its read snapshot, and
      // the connection's next queries would see nothing committed since.
      statement.Reset();
      return record.status();
    }
    records.push_back(*std::move(record));
  }
  statement.Reset();
  return records;
}

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

absl::Status NewerSchemaError(const std::string& path, int64_t version) {
  return absl::FailedPreconditionError(absl::StrCat(
      path, ": schema version ", version, " is newer than this Lathe's (",
      LatestSchemaVersion(), "); use a newer Lathe"));
}

absl::Status NotLatheError(const std::string& path, int64_t application_id,
                           absl::string_view contents) {
  return absl::FailedPreconditionError(absl::StrCat(
      path, ": a SQLite file but not a Lathe database (application_id ",
      application_id, ", ", contents, "); refusing to touch it"));
}

int64_t FileBytes(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 ? static_cast<int64_t>(info.st_size)
                                        : 0;
}

}  // namespace

int Database::CurrentSchemaVersion() { return LatestSchemaVersion(); }

Database::Database(std::string path, std::unique_ptr<Connection> connection,
                   OpenOptions options, int schema_version)
    : path_(std::move(path)),
      connection_(std::move(connection)),
      options_(options),
      schema_version_(schema_version) {}

Database::~Database() = default;

absl::StatusOr<std::unique_ptr<Database>> Database::Open(
    const std::string& path, const OpenOptions& options) {
  const bool writable = options.mode != OpenOptions::Mode::kReadOnly;
  DatabaseFileHeader header;
  absl::StatusOr<FileState> state = InspectDatabaseFile(path, &header);
  if (!state.ok()) return state.status();
  // Refuse what the file's own header shows is not ours before SQLite opens
  // it: to read a WAL-mode file SQLite creates -wal and -shm beside it, and a
  // read-only connection leaves them behind. (Without the header to go by,
  // the same checks run on what SQLite reads below.)
  if (*state == FileState::kSqlite && header.authoritative) {
    if (header.application_id == static_cast<uint32_t>(kApplicationId)) {
      if (header.user_version > static_cast<uint32_t>(LatestSchemaVersion())) {
        return NewerSchemaError(path, header.user_version);
      }
    } else if (header.application_id != 0 || header.has_schema ||
               header.user_version != 0) {
      return NotLatheError(path, header.application_id,
                           header.has_schema ? "with tables" : "no tables");
    } else if (!writable) {
      return absl::NotFoundError(
          absl::StrCat(path, ": empty, not a Lathe database"));
    }
  }
  bool is_new = false;
  if (*state == FileState::kAbsent || *state == FileState::kEmpty) {
    if (options.mode != OpenOptions::Mode::kCreate) {
      return absl::NotFoundError(
          absl::StrCat(path, *state == FileState::kAbsent
                                 ? ": no such database"
                                 : ": empty file, not a Lathe database"));
    }
    is_new = true;
  }

  const int flags = writable ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
                             : SQLITE_OPEN_READONLY;
  absl::StatusOr<std::unique_ptr<Connection>> connection =
      Connection::Open(path, flags);
  if (!connection.ok()) return connection.status();
  if (writable && sqlite3_db_readonly((*connection)->raw(), "main") == 1) {
    return absl::PermissionDeniedError(absl::StrCat(
        path, ": the file is read-only; it can be opened for lookups only"));
  }

  // Reading the header is the first access to the file: a file that is not
  // SQLite fails here, before anything could be written.
  absl::StatusOr<int64_t> application_id =
      (*connection)->QueryInt("PRAGMA application_id");
  const bool ours =
      *state == FileState::kSqlite && header.authoritative &&
      header.application_id == static_cast<uint32_t>(kApplicationId);
  if (!application_id.ok() && !writable && ours && !PathExists(path + "-wal")) {
    // Ours by its header, yet unreadable: a WAL-mode file in a folder this
    // process cannot write, where SQLite cannot create the -shm a reader
    // needs. With no -wal beside it, the file holds every committed write:
    // it is read as it is.
    connection = Connection::OpenImmutable(path);
    if (!connection.ok()) return connection.status();
    application_id = (*connection)->QueryInt("PRAGMA application_id");
  }
  if (!application_id.ok()) {
    if (ours) return application_id.status();
    return Prefixed(application_id.status(), "not a Lathe database: ");
  }
  Connection& c = **connection;
  sqlite3_busy_timeout(c.raw(), options.busy_timeout_ms);
  absl::StatusOr<int64_t> version = c.QueryInt("PRAGMA user_version");
  if (!version.ok()) return version.status();
  if (*application_id != kApplicationId) {
    absl::StatusOr<int64_t> objects =
        c.QueryInt("SELECT COUNT(*) FROM sqlite_master");
    if (!objects.ok())
      return Prefixed(objects.status(), "not a Lathe database: ");
    if (*application_id != 0 || *objects != 0 || *version != 0) {
      return NotLatheError(path, *application_id,
                           absl::StrCat(*objects, " tables and indexes"));
    }
    is_new = true;
  }
  if (is_new && !writable) {
    return absl::NotFoundError(
        absl::StrCat(path, ": empty, not a Lathe database"));
  }
  if (is_new && options.mode != OpenOptions::Mode::kCreate) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": empty SQLite file, not a Lathe database"));
  }
  const int latest = LatestSchemaVersion();
  if (*version > latest) return NewerSchemaError(path, *version);
  if (!is_new && *version < 1) {
    return absl::DataLossError(
        absl::StrCat(path, ": Lathe database without a schema version"));
  }

  if (writable) {
    // WAL: readers in other processes see the last committed batch while a
    // writer works. The mode is stored in the file, so an existing database
    // is not written to by this.
    absl::StatusOr<Statement*> journal = c.Prepare("PRAGMA journal_mode = WAL");
    if (!journal.ok()) return journal.status();
    absl::StatusOr<bool> row = (*journal)->Step();
    if (!row.ok()) return row.status();
    const std::string mode = *row ? (*journal)->ColumnText(0) : "";
    (*journal)->Reset();
    if (mode != "wal") {
      return absl::FailedPreconditionError(absl::StrCat(
          path, ": cannot use WAL mode (journal mode is '", mode, "')"));
    }
    LATHE_RETURN_IF_ERROR(
        c.Exec(absl::StrCat("PRAGMA foreign_keys = ON; PRAGMA synchronous = ",
                            options.durable ? "FULL" : "NORMAL")));
    // Checkpoint every 10,000 WAL pages (~40 MiB), not SQLite's 1,000: a
    // batch of 1,000 records dirties ~1,000 pages (its fingerprints land on
    // random index pages), so the default checkpointed after every batch,
    // with two more fsyncs and a re-read of the frames each time.
    LATHE_RETURN_IF_ERROR(c.Exec("PRAGMA wal_autocheckpoint = 10000"));
    if (options.max_size_bytes > 0) {
      absl::StatusOr<int64_t> page_size = c.QueryInt("PRAGMA page_size");
      if (!page_size.ok()) return page_size.status();
      const int64_t pages =
          std::max<int64_t>(1, options.max_size_bytes / *page_size);
      LATHE_RETURN_IF_ERROR(
          c.Exec(absl::StrCat("PRAGMA max_page_count = ", pages)));
    }
    if (*version < latest)
      LATHE_RETURN_IF_ERROR(Migrate(c, static_cast<int>(*version)));
  }
  // 64 MiB of page cache (SQLite's default is 2 MiB), allocated as pages are
  // read: repeated lookups and a large batch's index pages stay in memory.
  // Set last: it reads the schema, which the checks above must do first.
  LATHE_RETURN_IF_ERROR(c.Exec("PRAGMA cache_size = -65536"));
  const int schema_version = writable ? latest : static_cast<int>(*version);
  return std::unique_ptr<Database>(
      new Database(path, *std::move(connection), options, schema_version));
}

absl::StatusOr<int64_t> Database::WorkloadId(const proto::Record& record) {
  absl::StatusOr<Statement*> insert = connection_->Prepare(
      "INSERT INTO workloads(key, canonical) VALUES(?1, ?2) ON CONFLICT(key) "
      "DO NOTHING");
  if (!insert.ok()) return insert.status();
  (*insert)->BindText(1, record.workload_key());
  (*insert)->BindText(2, record.workload());
  LATHE_RETURN_IF_ERROR((*insert)->Run());
  absl::StatusOr<Statement*> select = connection_->Prepare(
      "SELECT id, canonical FROM workloads WHERE key = ?1");
  if (!select.ok()) return select.status();
  (*select)->BindText(1, record.workload_key());
  absl::StatusOr<bool> row = (*select)->Step();
  if (!row.ok()) return row.status();
  if (!*row) return absl::InternalError("workload row vanished");
  const int64_t id = (*select)->ColumnInt(0);
  const std::string stored = (*select)->ColumnText(1);
  (*select)->Reset();
  if (stored != record.workload()) {
    return absl::InvalidArgumentError(
        absl::StrCat("workload key ", record.workload_key(), " is stored for '",
                     stored, "', the record says '", record.workload(), "'"));
  }
  return id;
}

absl::StatusOr<int64_t> Database::TargetId(const proto::TargetInfo& target) {
  absl::StatusOr<Statement*> insert = connection_->Prepare(
      "INSERT INTO targets(canonical, kind, cpu, features, num_threads, "
      "device) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(canonical) DO NOTHING");
  if (!insert.ok()) return insert.status();
  std::vector<std::string> features(target.features().begin(),
                                    target.features().end());
  std::sort(features.begin(), features.end());
  (*insert)->BindText(1, target.canonical());
  (*insert)->BindText(2, target.kind());
  (*insert)->BindText(3, target.cpu());
  (*insert)->BindText(4, absl::StrJoin(features, ","));
  (*insert)->BindInt(5, target.num_threads());
  (*insert)->BindText(6, target.device());
  LATHE_RETURN_IF_ERROR((*insert)->Run());
  absl::StatusOr<Statement*> select =
      connection_->Prepare("SELECT id FROM targets WHERE canonical = ?1");
  if (!select.ok()) return select.status();
  (*select)->BindText(1, target.canonical());
  absl::StatusOr<bool> row = (*select)->Step();
  if (!row.ok()) return row.status();
  if (!*row) return absl::InternalError("target row vanished");
  const int64_t id = (*select)->ColumnInt(0);
  (*select)->Reset();
  return id;
}

// A batch's records mostly share their workload, target and job: their rows
// are looked up (or created) once per batch, not per record. For one
// transaction only (CommitFrom).
struct Database::BatchIds {
  std::unordered_map<std::string, std::pair<int64_t, std::string>>
      workloads;                                     // key: id, form
  std::unordered_map<std::string, int64_t> targets;  // canonical: id
  std::unordered_set<std::string> jobs;
  std::set<std::pair<int64_t, int64_t>>
      tasks;  // (workload id, target id) given records
};

absl::Status Database::Insert(const proto::Record& record, CommitResult& result,
                              BatchIds& ids) {
  LATHE_RETURN_IF_ERROR(ValidateRecord(record));
  absl::StatusOr<int64_t> workload_id;
  auto workload = ids.workloads.find(record.workload_key());
  if (workload != ids.workloads.end() &&
      workload->second.second == record.workload()) {
    workload_id = workload->second.first;
  } else {
    workload_id = WorkloadId(record);  // another form for the key: its error
    if (!workload_id.ok()) return workload_id.status();
    ids.workloads[record.workload_key()] = {*workload_id, record.workload()};
  }
  absl::StatusOr<int64_t> target_id;
  auto target = ids.targets.find(record.target().canonical());
  if (target != ids.targets.end()) {
    target_id = target->second;
  } else {
    target_id = TargetId(record.target());
    if (!target_id.ok()) return target_id.status();
    ids.targets.emplace(record.target().canonical(), *target_id);
  }
  if (!record.job().empty() && ids.jobs.count(record.job()) == 0) {
    absl::StatusOr<Statement*> job = connection_->Prepare(
        "INSERT INTO jobs(id, description, created_ms, state) VALUES(?1, '', "
        "?2, 'unknown') "
        "ON CONFLICT(id) DO NOTHING");
    if (!job.ok()) return job.status();
    (*job)->BindText(1, record.job());
    (*job)->BindInt(2, record.measured_at_unix_ms());
    LATHE_RETURN_IF_ERROR((*job)->Run());
    ids.jobs.insert(record.job());
  }
  absl::StatusOr<Statement*> insert = connection_->Prepare(
      "INSERT INTO records(workload_id, target_id, structural_hash, trace, "
      "times, median_s, "
      "spread, status, error, runner, lathe_version, measured_ms, job_id, "
      "fingerprint) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) "
      "ON CONFLICT(fingerprint) DO NOTHING");
  if (!insert.ok()) return insert.status();
  Statement& s = **insert;
  s.BindInt(1, *workload_id);
  s.BindInt(2, *target_id);
  s.BindText(3, record.structural_hash());
  const std::string trace_bytes = SerializeTrace(record.trace());
  s.BindBlob(4, trace_bytes);
  proto::FloatList times;
  *times.mutable_values() = record.times_s();
  s.BindBlob(5, times.SerializeAsString());
  // Stored for every status (a wrong result has a time too): reading back a
  // NULL as 0 would change the record's content, and so its fingerprint.
  s.BindDouble(6, record.median_s());
  s.BindDouble(7, record.spread());
  s.BindInt(8, record.status());
  s.BindText(9, record.error());
  s.BindText(10, record.runner());
  s.BindText(11, record.lathe_version());
  s.BindInt(12, record.measured_at_unix_ms());
  if (record.job().empty()) {
    s.BindNull(13);
  } else {
    s.BindText(13, record.job());
  }
  s.BindText(14, Fingerprint(record, trace_bytes));
  LATHE_RETURN_IF_ERROR(s.Run());
  if (sqlite3_changes(connection_->raw()) > 0) {
    ++result.added;
    ids.tasks.emplace(*workload_id, *target_id);
  } else {
    ++result.duplicates;
  }
  return absl::OkStatus();
}

absl::StatusOr<CommitResult> Database::CommitFrom(const RecordSource& source) {
  if (options_.mode == OpenOptions::Mode::kReadOnly) {
    return absl::FailedPreconditionError(
        absl::StrCat(path_, ": opened for lookups only; cannot commit"));
  }
  absl::StatusOr<std::unique_ptr<WriteTransaction>> transaction =
      WriteTransaction::Begin(*connection_);
  if (!transaction.ok())
    return Prefixed(transaction.status(), "cannot start a batch: ");
  CommitResult result;
  BatchIds ids;
  int64_t index = 0;
  absl::Status produced =
      source([&](const proto::Record& record) -> absl::Status {
        absl::Status inserted = Insert(record, result, ids);
        if (inserted.code() == absl::StatusCode::kResourceExhausted) {
          // A full disk or size limit: the batch as a whole did not fit, and
          // the record it had reached is no more at fault than the others.
          return absl::ResourceExhaustedError(absl::StrCat(
              path_, ": batch not committed",
              options_.max_size_bytes > 0
                  ? absl::StrCat(" (the database's size limit is ",
                                 options_.max_size_bytes, " bytes)")
                  : "",
              ": ", absl::StripPrefix(inserted.message(), path_ + ": ")));
        }
        if (!inserted.ok()) {
          // Store errors already name the file; validation errors do not.
          const bool names_file = absl::StartsWith(inserted.message(), path_);
          return absl::Status(
              inserted.code(),
              absl::StrCat(names_file ? "" : path_ + ": ", "record ", index,
                           " of the batch: ", inserted.message()));
        }
        ++index;
        return absl::OkStatus();
      });
  if (!produced.ok()) return produced;  // the transaction rolls back
  if (schema_version_ >= 3) {
    for (const auto& [workload_id, target_id] : ids.tasks) {
      absl::Status refreshed = RefreshBest(workload_id, target_id);
      if (!refreshed.ok()) return Prefixed(refreshed, "batch not committed: ");
    }
  }
  absl::Status committed = (*transaction)->Commit();
  if (!committed.ok()) return Prefixed(committed, "batch not committed: ");
  return result;
}

absl::StatusOr<CommitResult> Database::Commit(
    const std::vector<proto::Record>& batch) {
  return CommitFrom([&](const RecordSink& sink) -> absl::Status {
    for (const proto::Record& record : batch)
      LATHE_RETURN_IF_ERROR(sink(record));
    return absl::OkStatus();
  });
}

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
  (*put)->BindText(4, job.state().empty() ? "running" : job.state());
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

absl::StatusOr<std::vector<TaskSummary>> Database::Tasks() {
  absl::StatusOr<Statement*> select = connection_->Prepare(
      "SELECT w.key, w.canonical, t.canonical, COUNT(*), SUM(r.status = 1), "
      "MIN(CASE WHEN r.status = 1 THEN r.median_s END) "
      "FROM records r JOIN workloads w ON w.id = r.workload_id "
      "JOIN targets t ON t.id = r.target_id "
      "GROUP BY r.workload_id, r.target_id ORDER BY w.canonical, t.canonical");
  if (!select.ok()) return select.status();
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

absl::Status Database::PutCostModel(const proto::TargetInfo& target,
                                    const std::string& name,
                                    const std::string& model,
                                    int64_t trained_on_records) {
  absl::StatusOr<std::unique_ptr<WriteTransaction>> transaction =
      WriteTransaction::Begin(*connection_);
  if (!transaction.ok()) return transaction.status();
  absl::StatusOr<int64_t> target_id = TargetId(target);
  if (!target_id.ok()) return target_id.status();
  absl::StatusOr<Statement*> put = connection_->Prepare(
      "INSERT OR REPLACE INTO cost_models(target_id, name, model, records, "
      "saved_ms) "
      "VALUES(?1, ?2, ?3, ?4, ?5)");
  if (!put.ok()) return put.status();
  (*put)->BindInt(1, *target_id);
  (*put)->BindText(2, name);
  (*put)->BindBlob(3, model);
  (*put)->BindInt(4, trained_on_records);
  (*put)->BindInt(5, NowUnixMs());
  LATHE_RETURN_IF_ERROR((*put)->Run());
  return (*transaction)->Commit();
}

absl::StatusOr<std::optional<std::string>> Database::GetCostModel(
    const std::string& target, const std::string& name) {
  absl::StatusOr<Statement*> get = connection_->Prepare(
      "SELECT m.model FROM cost_models m JOIN targets t ON t.id = m.target_id "
      "WHERE t.canonical = ?1 AND m.name = ?2");
  if (!get.ok()) return get.status();
  (*get)->BindText(1, target);
  (*get)->BindText(2, name);
  absl::StatusOr<bool> row = (*get)->Step();
  if (!row.ok()) return row.status();
  std::optional<std::string> model;
  if (*row) model = (*get)->ColumnBlob(0);
  (*get)->Reset();
  return model;
}

absl::Status Database::RefreshBest(int64_t workload_id, int64_t target_id) {
  // Which record wins, and which one table best holds: usually the same, and
  // then nothing is written.
  auto single_id =
      [&](const char* sql) -> absl::StatusOr<std::optional<int64_t>> {
    absl::StatusOr<Statement*> select = connection_->Prepare(sql);
    if (!select.ok()) return select.status();
    (*select)->BindInt(1, workload_id);
    (*select)->BindInt(2, target_id);
    absl::StatusOr<bool> row = (*select)->Step();
    if (!row.ok()) return row.status();
    std::optional<int64_t> id;
    if (*row) id = (*select)->ColumnInt(0);
    (*select)->Reset();
    return id;
  };
  absl::StatusOr<std::optional<int64_t>> winner = single_id(
      "SELECT r.id FROM records r WHERE r.workload_id = ?1 AND r.target_id = "
      "?2 AND " LATHE_DB_COUNTING_RECORD " ORDER BY r.median_s, r.id LIMIT 1");
  if (!winner.ok()) return winner.status();
  absl::StatusOr<std::optional<int64_t>> held = single_id(
      "SELECT id FROM best WHERE workload_id = ?1 AND target_id = ?2");
  if (!held.ok()) return held.status();
  if (*winner == *held) return absl::OkStatus();
  absl::StatusOr<Statement*> remove = connection_->Prepare(
      "DELETE FROM best WHERE workload_id = ?1 AND target_id = ?2");
  if (!remove.ok()) return remove.status();
  (*remove)->BindInt(1, workload_id);
  (*remove)->BindInt(2, target_id);
  LATHE_RETURN_IF_ERROR((*remove)->Run());
  if (!winner->has_value()) return absl::OkStatus();
  absl::StatusOr<Statement*> copy = connection_->Prepare(
      "INSERT INTO best(" LATHE_DB_BEST_COLUMNS
      ") SELECT " LATHE_DB_BEST_COLUMNS " FROM records WHERE id = ?1");
  if (!copy.ok()) return copy.status();
  (*copy)->BindInt(1, **winner);
  return (*copy)->Run();
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

void RemoveDatabaseFiles(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"})
    std::remove(absl::StrCat(path, suffix).c_str());
}

}  // namespace lathe::db
