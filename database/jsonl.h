// Export and import of records, and of the batch rows of tuning runs, as
// JSON lines (docs/database.md).
//
// Format version 2: the first line is the header
//   {"format":"lathe-records","version":2}
// and every following line one record, the JSON form of lathe.proto.Record
// (proto field names, without the row id), or one batch row, the JSON form
// of lathe.proto.RecordsFileBatchLine ({"batch": {...}}: a line whose first
// key is "batch"). An export writes every record, then the batches of the
// tasks with records (Database::ForEachBatch); an import stores a batch
// after the records before it, numbered after the job's batches in the
// database. Version 1 files (records only, as Lathe wrote before batches
// were exported) still import, without batches. Blank lines are ignored. A
// reader refuses a file of a newer version, and a field it does not know,
// rather than silently dropping data.
// Tests: tests/database/jsonl_test.cc.
#pragma once

#include <cstddef>
#include <functional>
#include <istream>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "database/database.h"

namespace lathe::db {

inline constexpr int kRecordsFormatVersion = 2;
inline constexpr char kRecordsFormatName[] = "lathe-records";
// The longest line an import reads: a record with a trace of the largest
// size a trace may have (proto/trace_limits.h), twice over.
inline constexpr size_t kMaxRecordLineBytes = size_t{16} << 20;

std::string RecordsFileHeaderLine();
absl::StatusOr<std::string> RecordToJsonLine(const proto::Record& record);
// `where` names the line in errors ("records.jsonl:12").
absl::StatusOr<proto::Record> RecordFromJsonLine(const std::string& line,
                                                 const std::string& where);

// Whether `line` is a batch line: a JSON object whose first key is "batch"
// (no record has that field).
bool IsBatchLine(const std::string& line);
absl::StatusOr<std::string> BatchToJsonLine(const TuningBatch& batch);
// `where` names the line in errors. The batch's index is 0 (not carried).
absl::StatusOr<TuningBatch> BatchFromJsonLine(const std::string& line,
                                              const std::string& where);

struct ExportCounts {
  int64_t records = 0;
  int64_t batches = 0;
};
// Writes every record of `db`, then every batch of a task with records.
absl::StatusOr<ExportCounts> ExportJsonl(Database& db, std::ostream& out);
// What the database cannot judge of a record by itself (whether its
// workload key is its workload's, its target and trace are well formed):
// the caller's check, from the parts that know workloads and traces.
using RecordCheck = std::function<absl::Status(const proto::Record&)>;

// Reads a whole export into `db` in one transaction: every record and batch
// or, on the first bad line (named as source_name:line), none; a line longer
// than kMaxRecordLineBytes is a bad line, refused before it is read whole.
// Every record passes ValidateRecord and, when given, `check`; every batch
// ValidateBatch, and its workload and target must be known (from a record
// before it, or the database's); at most Database::kMaxBatchesPerCommit
// batches. A batch that copies one the database holds is skipped
// (Database::CommitFrom).
absl::StatusOr<CommitResult> ImportJsonl(Database& db, std::istream& in,
                                         const std::string& source_name,
                                         const RecordCheck& check = nullptr);

}  // namespace lathe::db
