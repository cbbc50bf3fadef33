#include "api/record_lookup.h"

#include "api/kernel_plan.h"
#include "compiler/codegen/kernel_program.h"
#include "compiler/target/target_info.h"

namespace lathe::api {

CheckedMatch CheckReplay(db::Match match, const Workload& workload,
                         const Target& target) {
  CheckedMatch checked;
  checked.match = std::move(match);
  // The check builds use (api/kernel_plan.h), so that `lathe db best` says
  // yes exactly when `lathe compile --db` would use the record.
  absl::StatusOr<KernelProgram> program =
      api::ReplayRecord(checked.match.record, workload, target);
  checked.replays = program.ok();
  if (!program.ok())
    checked.replay_problem = std::string(program.status().message());
  return checked;
}

absl::StatusOr<std::vector<CheckedMatch>> LookupChecked(
    db::Database& db, const Workload& workload, const Target& target, int k,
    db::TargetMatching matching) {
  absl::StatusOr<std::vector<db::Match>> matches =
      db.Top(workload.Key(), TargetInfoOf(target), k, matching);
  if (!matches.ok()) return matches.status();
  std::vector<CheckedMatch> checked;
  for (db::Match& match : *matches)
    checked.push_back(CheckReplay(std::move(match), workload, target));
  return checked;
}

}  // namespace lathe::api
