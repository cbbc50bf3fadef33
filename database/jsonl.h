// Export and import of records as JSON lines (docs/database.md).
//
// Format version 1: the first line is the header
//   {"format":"lathe-records","version":1}
// and every following line one record, the JSON form of lathe.proto.Record
// (proto field names, without the row id). Blank lines are ignored. A reader
// refuses a file of a newer version, and a field it does not know, rather
// than silently dropping data.
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

inline constexpr int kRecordsFormatVersion = 1;
inline constexpr char kRecordsFormatName[] = "lathe-records";
// The longest line an import reads: a record with a trace of the largest
// size a trace may have (proto/trace_limits.h), twice over.
inline constexpr size_t kMaxRecordLineBytes = size_t{16} << 20;

std::string RecordsFileHeaderLine();
absl::StatusOr<std::string> RecordToJsonLine(const proto::Record& record);
// `where` names the line in errors ("records.jsonl:12").
absl::StatusOr<proto::Record> RecordFromJsonLine(const std::string& line,
                                                 const std::string& where);

// Writes every record of `db`; returns how many.
absl::StatusOr<int64_t> ExportJsonl(Database& db, std::ostream& out);
// What the database cannot judge of a record by itself (whether its
// workload key is its workload's, its target and trace are well formed):
// the caller's check, from the parts that know workloads and traces.
using RecordCheck = std::function<absl::Status(const proto::Record&)>;

// Reads a whole export into `db` in one transaction: every record or, on the
// first bad line (named as source_name:line), none; a line longer than
// kMaxRecordLineBytes is a bad line, refused before it is read whole. Every
// record passes ValidateRecord and, when given, `check`.
absl::StatusOr<CommitResult> ImportJsonl(Database& db, std::istream& in,
                                         const std::string& source_name,
                                         const RecordCheck& check = nullptr);

}  // namespace lathe::db
