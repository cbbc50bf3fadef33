#include "cli/staged_outputs.h"

#include <cstdio>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace lathe::cli {

StagedOutputs::~StagedOutputs() {
  for (const auto& [temp, final_path] : files_) std::remove(temp.c_str());
}

std::string StagedOutputs::Add(const std::string& final_path) {
  const std::filesystem::path p(final_path);
  std::filesystem::path temp =
      p.parent_path() /
      (p.stem().string() + ".partial" + p.extension().string());
  files_.emplace_back(temp.string(), final_path);
  return files_.back().first;
}

absl::Status StagedOutputs::Named(const absl::Status& st) const {
  if (st.ok()) return st;
  std::string message(st.message());
  for (const auto& [temp, final_path] : files_) {
    message = absl::StrReplaceAll(message, {{temp, final_path}});
  }
  return absl::Status(st.code(), message);
}

absl::Status StagedOutputs::Commit() {
  for (const auto& [temp, final_path] : files_) {
    if (std::rename(temp.c_str(), final_path.c_str()) != 0) {
      return absl::PermissionDeniedError(
          absl::StrCat(final_path, ": cannot write"));
    }
  }
  files_.clear();
  return absl::OkStatus();
}

}  // namespace lathe::cli
