#include "tuner/search/task.h"

#include "absl/strings/str_cat.h"
#include "compiler/workload/flop_count.h"
#include "tuner/space/design_space.h"

namespace lathe::tuner {

absl::StatusOr<Task> MakeTask(const Workload& workload, const Target& target,
                              double weight) {
  absl::StatusOr<Program> initial = workload.InitialProgram();
  if (!initial.ok()) return initial.status();
  absl::StatusOr<int64_t> flops = FlopCount(workload);
  if (!flops.ok()) return flops.status();
  absl::StatusOr<std::vector<Trace>> spaces =
      GenerateDesignSpaces(workload, target, RulesForTarget(target));
  if (!spaces.ok()) return spaces.status();
  if (spaces->empty()) {
    return absl::InternalError(absl::StrCat(
        workload.CanonicalForm(), ": the schedule rules gave no design space"));
  }
  return Task{workload, target, *std::move(initial), *std::move(spaces),
              *flops,   weight, workload.Key()};
}

}  // namespace lathe::tuner
