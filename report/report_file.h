// Writing the tuning report of a database to a file: what `lathe report`,
// `lathe tune` (when it finishes or is stopped) and the tuning daemon (when
// a job ends) call. The database is opened read-only, so a writer (a tuning
// run, the daemon) may hold it meanwhile; the page is written to a
// temporary file beside the output and renamed into place, so a reader
// never sees half a page.
// Tests: tests/report/report_data_test.cc.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "report/report_data.h"

namespace lathe::report {

// Where a database's report goes by default: beside it, its name's ".db"
// replaced by ".report.html" ("runs/tuned.db" -> "runs/tuned.report.html";
// a name without ".db" gets ".report.html" appended).
std::string DefaultReportPath(const std::string& db_path);

// A job's report beside the database: "runs/tuned.JOB.report.html", the
// job id's characters other than letters, digits, '-', '_' and '.' as '_'.
std::string JobReportPath(const std::string& db_path, const std::string& job);

// Collects the report of the database at `db_path` and writes its HTML to
// `out_path`. Errors: the database's (naming it), an output that cannot be
// written (naming it).
absl::Status WriteReport(const std::string& db_path,
                         const ReportOptions& options,
                         const std::string& out_path);

}  // namespace lathe::report
