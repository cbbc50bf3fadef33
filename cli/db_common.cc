#include "cli/db_common.h"

#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "compiler/workload/flop_count.h"
#include "compiler/workload/spec.h"

namespace lathe::cli {

void DbArgs::AddTo(CLI::App* command) {
  command->add_option("--db", path, "the database file (default: lathe.db)");
  command->add_flag("--json", json, "print JSON");
}

absl::StatusOr<std::unique_ptr<db::Database>> DbArgs::Open(
    db::OpenOptions::Mode mode, bool check_pages) const {
  db::OpenOptions options;
  options.mode = mode;
  options.check_pages = check_pages;
  return db::Database::Open(path, options);
}

std::string StatusName(proto::MeasureStatus status) {
  switch (status) {
    case proto::MEASURE_OK:
      return "ok";
    case proto::MEASURE_BUILD_ERROR:
      return "build error";
    case proto::MEASURE_RUN_ERROR:
      return "run error";
    case proto::MEASURE_TIMEOUT:
      return "timeout";
    case proto::MEASURE_WRONG_RESULT:
      return "wrong result";
    default:
      return "unknown";
  }
}

std::string FormatUnixMs(int64_t unix_ms) {
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC",
                          absl::FromUnixMillis(unix_ms), absl::UTCTimeZone());
}

double RecordGflops(const proto::Record& record) {
  if (record.median_s() <= 0) return 0;
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(record.workload());
  if (!workload.ok()) return 0;
  absl::StatusOr<int64_t> flops = FlopCount(*workload);
  if (!flops.ok()) return 0;
  return static_cast<double>(*flops) / record.median_s() * 1e-9;
}

}  // namespace lathe::cli
