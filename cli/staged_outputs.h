// A command's output files, written under temporary names beside their own
// ("k.partial.a": the extension still says the kind) and renamed into place
// together once all are written: a command that fails half way (a header
// folder that does not exist, a model that fails on its second output)
// leaves neither some new files without the others nor a half-written one,
// and keeps the old ones. Used by `lathe compile` and `lathe run`.
// Tests: tests/cli/model_commands_test.sh, tests/cli/compile_commands_test.sh.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace lathe::cli {

class StagedOutputs {
 public:
  StagedOutputs() = default;
  StagedOutputs(const StagedOutputs&) = delete;
  StagedOutputs& operator=(const StagedOutputs&) = delete;
  // Removes the temporary files not committed.
  ~StagedOutputs();

  // The name to write `final_path` under for now.
  std::string Add(const std::string& final_path);
  // `st` with the temporary names in its message put back to the final ones.
  absl::Status Named(const absl::Status& st) const;
  // Renames every temporary file to its final name.
  absl::Status Commit();

 private:
  std::vector<std::pair<std::string, std::string>> files_;  // (temp, final)
};

}  // namespace lathe::cli
