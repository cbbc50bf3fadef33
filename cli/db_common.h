// What the `lathe db` subcommands share: the --db option, opening the file,
// and how a record is shown.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "absl/status/statusor.h"
#include "database/database.h"
#include "proto/record.pb.h"

namespace lathe::cli {

// The embedded default (docs/architecture.md): lathe.db in the working folder.
inline constexpr char kDefaultDatabase[] = "lathe.db";

struct DbArgs {
  std::string path = kDefaultDatabase;
  bool json = false;
  void AddTo(CLI::App* command);
  // `check_pages` off only for `lathe db check`, which checks every page
  // itself and must open a damaged file to say what is wrong.
  absl::StatusOr<std::unique_ptr<db::Database>> Open(
      db::OpenOptions::Mode mode, bool check_pages = true) const;
};

// "ok", "build error", ...
std::string StatusName(proto::MeasureStatus status);
// "2026-11-22 07:10:33 UTC"
std::string FormatUnixMs(int64_t unix_ms);
// GFLOP/s of the record's workload at its median, or 0 when the workload's
// flop count is unknown (a form this build cannot parse).
double RecordGflops(const proto::Record& record);

}  // namespace lathe::cli
