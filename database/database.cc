// Database's opening and commits: Open (creating, migrating or refusing a
// file), the ids of workloads and targets, and Commit with the best table
// kept current (see database.h; reads, jobs, cost models and maintenance
// are in database_lookup.cc, database_jobs.cc, database_cost_models.cc and
// database_maintenance.cc).
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

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "database/database_internal.h"
#include "database/file_check.h"
#include "database/fnv128.h"
#include "database/record_codec.h"
#include "database/schema.h"
#include "database/sqlite_connection.h"
#include "database/target_match.h"

namespace lathe::db {
namespace {

// The page problems SQLite's quick check reports at open before it stops
// (the first is shown; `lathe db check` lists them all).
constexpr int kPageProblemsShown = 10;

bool PathExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

absl::Status Prefixed(const absl::Status& status, absl::string_view prefix) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(prefix, status.message()));
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

// SQLite's quick check: every page of every b-tree read and its structure
// verified (not the agreement of indexes with their tables, which `lathe db
// check` verifies), so that a file with damaged pages is refused before a
// lookup hands out what a damaged page holds or a commit writes beside it.
absl::Status CheckPages(Connection& c, const std::string& path) {
  absl::StatusOr<Statement*> check =
      c.Prepare(absl::StrCat("PRAGMA quick_check(", kPageProblemsShown, ")"));
  if (!check.ok()) return check.status();
  std::vector<std::string> problems;
  absl::Status failed;
  while (true) {
    absl::StatusOr<bool> row = (*check)->Step();
    if (!row.ok()) {
      failed = row.status();
      break;
    }
    if (!*row) break;
    // SQLite's lines: "ok", or "*** in database main ***\nPage 13: ...".
    std::string line = absl::StrReplaceAll(
        absl::StripPrefix((*check)->ColumnText(0), "*** in database main ***"),
        {{"\n", " "}});
    absl::StripAsciiWhitespace(&line);
    if (line != "ok") problems.push_back(std::move(line));
  }
  (*check)->Reset();
  if (!failed.ok() && failed.code() != absl::StatusCode::kDataLoss) {
    return failed;
  }
  if (!failed.ok()) problems.push_back(std::string(failed.message()));
  if (problems.empty()) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(
      path, ": damaged (", problems.front(),
      problems.size() > 1 ? absl::StrCat("; and ", problems.size() - 1, " more")
                          : "",
      "); refusing to use it; `lathe db check --db ", path,
      "` lists the damage"));
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
  // Before the first read: a process opening the file at the same moment
  // (recovering its WAL, or checkpointing as its last connection closes)
  // holds a lock for a moment, and a read without the timeout fails at once.
  sqlite3_busy_timeout((*connection)->raw(), options.busy_timeout_ms);
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
    sqlite3_busy_timeout((*connection)->raw(), options.busy_timeout_ms);
    application_id = (*connection)->QueryInt("PRAGMA application_id");
  }
  if (!application_id.ok()) {
    if (ours) return application_id.status();
    return Prefixed(application_id.status(), "not a Lathe database: ");
  }
  Connection& c = **connection;
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

  if (!is_new && options.check_pages) {
    LATHE_RETURN_IF_ERROR(CheckPages(c, path));
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
  return CommitAll(source, nullptr);
}

absl::StatusOr<CommitResult> Database::Commit(
    const std::vector<proto::Record>& records, const TuningBatch* batch) {
  return CommitAll(
      [&](const RecordSink& sink, const BatchSink&) -> absl::Status {
        for (const proto::Record& record : records)
          LATHE_RETURN_IF_ERROR(sink(record));
        return absl::OkStatus();
      },
      batch);
}

absl::StatusOr<CommitResult> Database::CommitAll(const RecordSource& source,
                                                 const TuningBatch* batch) {
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
  // A full disk or size limit: the batch as a whole did not fit, and the
  // record or batch row it had reached is no more at fault than the others.
  auto full = [&](const absl::Status& status) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path_, ": batch not committed",
                     options_.max_size_bytes > 0
                         ? absl::StrCat(" (the database's size limit is ",
                                        options_.max_size_bytes, " bytes)")
                         : "",
                     ": ", absl::StripPrefix(status.message(), path_ + ": ")));
  };
  // Store errors already name the file; validation errors do not.
  auto named = [&](const absl::Status& status) {
    return absl::StartsWith(status.message(), path_) ? "" : path_ + ": ";
  };
  auto record_sink = [&](const proto::Record& record) -> absl::Status {
    absl::Status inserted = Insert(record, result, ids);
    if (inserted.code() == absl::StatusCode::kResourceExhausted)
      return full(inserted);
    if (!inserted.ok()) {
      return absl::Status(inserted.code(),
                          absl::StrCat(named(inserted), "record ", index,
                                       " of the batch: ", inserted.message()));
    }
    ++index;
    return absl::OkStatus();
  };
  auto batch_row = [&](const TuningBatch& row,
                       bool skip_copies) -> absl::Status {
    absl::Status inserted = InsertBatch(row, skip_copies, result, ids);
    if (inserted.code() == absl::StatusCode::kResourceExhausted)
      return full(inserted);
    if (!inserted.ok()) {
      return absl::Status(
          inserted.code(),
          absl::StrCat(named(inserted), "batch row: ", inserted.message()));
    }
    return absl::OkStatus();
  };
  absl::Status produced =
      source(record_sink, [&](const TuningBatch& row) -> absl::Status {
        return batch_row(row, /*skip_copies=*/true);
      });
  if (!produced.ok()) return produced;  // the transaction rolls back
  if (batch != nullptr) {
    absl::Status added = batch_row(*batch, /*skip_copies=*/false);
    if (!added.ok()) return added;
  }
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

void RemoveDatabaseFiles(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"})
    std::remove(absl::StrCat(path, suffix).c_str());
}

}  // namespace lathe::db
