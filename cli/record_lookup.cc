#include "cli/record_lookup.h"

#include "absl/strings/str_cat.h"
#include "compiler/codegen/kernel_program.h"
#include "compiler/codegen/target_info.h"
#include "compiler/schedule/trace.h"

namespace lathe::cli {

CheckedMatch CheckReplay(db::Match match, const Workload& workload, const Target& target) {
  CheckedMatch checked;
  checked.match = std::move(match);
  const proto::Record& record = checked.match.record;
  absl::StatusOr<Trace> trace = Trace::FromProto(record.trace());
  if (!trace.ok()) {
    checked.replay_problem = absl::StrCat("its trace does not load: ", trace.status().message());
    return checked;
  }
  absl::StatusOr<KernelProgram> kernel = MakeKernelProgram(workload, &*trace, target);
  if (!kernel.ok()) {
    checked.replay_problem =
        absl::StrCat("its trace no longer replays: ", kernel.status().message());
    return checked;
  }
  if (kernel->structural_hash != record.structural_hash()) {
    checked.replay_problem = absl::StrCat(
        "this Lathe replays its trace to program ", kernel->structural_hash,
        ", it was measured as ", record.structural_hash(),
        " (the compiler changed since; tune again)");
    return checked;
  }
  checked.replays = true;
  return checked;
}

absl::StatusOr<std::vector<CheckedMatch>> LookupChecked(db::Database& db, const Workload& workload,
                                                        const Target& target, int k,
                                                        db::TargetMatching matching) {
  absl::StatusOr<std::vector<db::Match>> matches =
      db.Top(workload.Key(), TargetInfoOf(target), k, matching);
  if (!matches.ok()) return matches.status();
  std::vector<CheckedMatch> checked;
  for (db::Match& match : *matches) checked.push_back(CheckReplay(std::move(match), workload, target));
  return checked;
}

}  // namespace lathe::cli
