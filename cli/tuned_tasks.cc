#include "cli/tuned_tasks.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/kernel_program.h"
#include "compiler/target/target_info.h"
#include "proto/record.pb.h"

namespace lathe::cli {

absl::StatusOr<bool> IsTunedInDatabase(const Workload& workload,
                                       const Target& target, db::Database& db) {
  absl::StatusOr<KernelProgram> default_program =
      MakeKernelProgram(workload, nullptr, target);
  if (!default_program.ok()) {
    return absl::Status(
        default_program.status().code(),
        absl::StrCat(workload.CanonicalForm(), ": default schedule: ",
                     default_program.status().message()));
  }
  absl::StatusOr<std::vector<proto::Record>> records =
      db.RecordsOfTask(workload.Key(), target.ToString());
  if (!records.ok()) return records.status();
  for (const proto::Record& record : *records) {
    if (record.status() == proto::MEASURE_OK &&
        record.structural_hash() != default_program->structural_hash) {
      return true;
    }
  }
  return false;
}

absl::StatusOr<std::optional<double>> BestMedianInDatabase(
    const Workload& workload, const Target& target, db::Database& db) {
  absl::StatusOr<std::optional<db::Match>> best =
      db.Best(workload.Key(), TargetInfoOf(target, HostDeviceDescription()));
  if (!best.ok()) return best.status();
  if (!*best) return std::optional<double>();
  return std::optional<double>((*best)->record.median_s());
}

}  // namespace lathe::cli
