// How commands name a workload: a spec (`matmul:M=64,N=64,K=64`, or the
// canonical `custom:EXPR|DIMS`), or a custom expression with --expr/--dims.
// Shared by every command that takes a workload (lower, demo, later compile,
// tune, bench).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "absl/status/statusor.h"
#include "compiler/workload/workload.h"

namespace lathe::cli {

struct WorkloadArgs {
  std::string spec;
  std::string expr;
  std::string dims;

  // Adds the positional SPEC and the --expr/--dims options to a command.
  void AddTo(CLI::App* command, bool spec_required);
  // The workload they name. Errors: none or both forms given, and every
  // error of the spec or expression parsers.
  absl::StatusOr<Workload> Resolve() const;
};

}  // namespace lathe::cli
