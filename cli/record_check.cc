#include "cli/record_check.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/schedule/instruction_kind.h"
#include "compiler/schedule/trace.h"
#include "compiler/workload/spec.h"

namespace lathe::cli {

absl::Status CheckImportedRecord(const proto::Record& record) {
  auto invalid = [](const std::string& what) {
    return absl::InvalidArgumentError(what);
  };
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(record.workload());
  if (!workload.ok())
    return invalid(absl::StrCat("workload: ", workload.status().message()));
  if (workload->CanonicalForm() != record.workload()) {
    return invalid(absl::StrCat("workload \"", record.workload(),
                                "\" is not in canonical form (",
                                workload->CanonicalForm(), ")"));
  }
  if (workload->Key() != record.workload_key()) {
    return invalid(absl::StrCat("workload_key ", record.workload_key(),
                                " is not the key of ", record.workload(), " (",
                                workload->Key(), ")"));
  }
  absl::StatusOr<Target> target = ParseTarget(record.target().canonical());
  if (!target.ok())
    return invalid(
        absl::StrCat("target.canonical: ", target.status().message()));
  if (target->ToString() != record.target().canonical()) {
    return invalid(
        absl::StrCat("target.canonical \"", record.target().canonical(),
                     "\" is not in canonical form (", target->ToString(), ")"));
  }
  if (record.has_trace()) {
    absl::StatusOr<Trace> trace = Trace::FromProto(record.trace());
    if (!trace.ok()) return invalid(std::string(trace.status().message()));
    for (size_t i = 0; i < trace->instructions.size(); ++i) {
      const std::string& kind = trace->instructions[i].kind;
      if (!FindInstructionKind(kind).ok()) {
        return invalid(absl::StrCat("trace: instruction ", i,
                                    " is of unknown kind \"", kind, "\""));
      }
    }
  }
  const std::string& hash = record.structural_hash();
  if (hash.size() != 16 || !std::all_of(hash.begin(), hash.end(), [](char c) {
        return absl::ascii_isdigit(c) || (c >= 'a' && c <= 'f');
      })) {
    return invalid(
        absl::StrCat("structural_hash \"", hash, "\" is not 16 hex digits"));
  }
  return absl::OkStatus();
}

}  // namespace lathe::cli
