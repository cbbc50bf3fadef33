#include "report/report_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "database/database.h"
#include "report/report_html.h"

namespace lathe::report {
namespace {

std::string Stem(const std::string& db_path) {
  return absl::EndsWith(db_path, ".db") ? db_path.substr(0, db_path.size() - 3)
                                        : db_path;
}

absl::Status WriteFileAtomically(const std::string& path,
                                 const std::string& text) {
  const std::string partial = absl::StrCat(path, ".partial");
  std::FILE* file = std::fopen(partial.c_str(), "wb");
  if (file == nullptr) {
    return absl::UnavailableError(absl::StrCat(
        "report ", path, ": cannot write: ", std::strerror(errno)));
  }
  const bool written =
      std::fwrite(text.data(), 1, text.size(), file) == text.size();
  const bool closed = std::fclose(file) == 0;
  if (!written || !closed) {
    const int error = errno;
    std::remove(partial.c_str());
    return absl::UnavailableError(absl::StrCat(
        "report ", path, ": cannot write: ", std::strerror(error)));
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(partial.c_str());
    return absl::UnavailableError(absl::StrCat(
        "report ", path, ": cannot write: ", std::strerror(error)));
  }
  return absl::OkStatus();
}

}  // namespace

std::string DefaultReportPath(const std::string& db_path) {
  return absl::StrCat(Stem(db_path), ".report.html");
}

std::string JobReportPath(const std::string& db_path, const std::string& job) {
  std::string safe = job;
  for (char& c : safe) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                       (c >= '0' && c <= '9') || c == '-' || c == '_' ||
                       c == '.';
    if (!plain) c = '_';
  }
  return absl::StrCat(Stem(db_path), ".", safe, ".report.html");
}

absl::Status WriteReport(const std::string& db_path,
                         const ReportOptions& options,
                         const std::string& out_path) {
  if (access(db_path.c_str(), F_OK) != 0) {
    return absl::NotFoundError(absl::StrCat(db_path, ": no such database"));
  }
  db::OpenOptions open;
  open.mode = db::OpenOptions::Mode::kReadOnly;
  absl::StatusOr<std::unique_ptr<db::Database>> db =
      db::Database::Open(db_path, open);
  if (!db.ok()) return db.status();
  absl::StatusOr<ReportData> data = CollectReport(**db, options);
  if (!data.ok()) return data.status();
  db->reset();
  return WriteFileAtomically(out_path, RenderReportHtml(*data));
}

}  // namespace lathe::report
