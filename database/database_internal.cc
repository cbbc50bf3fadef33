// The row decoding that database_internal.h declares.
#include "database/database_internal.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace lathe::db {

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

}  // namespace lathe::db
