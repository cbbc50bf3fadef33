#include "api/kernel_plan.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/schedule/trace.h"
#include "compiler/target/target_info.h"

namespace lathe::api {

absl::StatusOr<KernelProgram> ReplayRecord(const proto::Record& record,
                                           const Workload& workload,
                                           const Target& target) {
  // Keys tell apart tasks that the trace alone would not: the same
  // computation with constant (layout-free, packed ahead) weights and with
  // weights given at run time.
  if (!record.workload_key().empty() &&
      record.workload_key() != workload.Key()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "it is a record of another workload (key ", record.workload_key(), ", ",
        record.workload(), "), not of key ", workload.Key()));
  }
  absl::StatusOr<Trace> trace = Trace::FromProto(record.trace());
  if (!trace.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("its trace does not load: ", trace.status().message()));
  }
  absl::StatusOr<KernelProgram> program =
      MakeKernelProgram(workload, &*trace, target);
  if (!program.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "its trace no longer replays: ", program.status().message()));
  }
  if (program->structural_hash != record.structural_hash()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "this Lathe replays its trace to program ", program->structural_hash,
        ", it was measured as ", record.structural_hash(),
        " (the compiler changed since; tune again)"));
  }
  return program;
}

absl::StatusOr<KernelPlan> PlanKernel(db::Database* db,
                                      const Workload& workload,
                                      const Target& target,
                                      db::TargetMatching matching) {
  KernelOrigin origin;
  if (db != nullptr) {
    absl::StatusOr<std::optional<db::Match>> best =
        db->Best(workload.Key(), TargetInfoOf(target), matching);
    if (!best.ok()) {
      return absl::Status(
          best.status().code(),
          absl::StrCat(db->path(), ": looking up ", workload.CanonicalForm(),
                       ": ", best.status().message()));
    }
    if (!best->has_value()) {
      origin.fallback_reason = absl::StrCat(
          "no record of ", workload.CanonicalForm(), " for ", target.ToString(),
          matching == db::TargetMatching::kCompatible
              ? " or a compatible target"
              : "",
          " in ", db->path());
    } else {
      // The fastest record whose trace still builds the program it measured;
      // past the first, the next fastest programs, up to kRecordsTried.
      std::vector<db::Match> candidates = {**best};
      std::vector<std::string> skipped;
      for (size_t i = 0; i < candidates.size(); ++i) {
        const db::Match& match = candidates[i];
        const proto::Record& record = match.record;
        absl::StatusOr<KernelProgram> program =
            ReplayRecord(record, workload, target);
        if (program.ok()) {
          origin.source = KernelSource::kDatabase;
          origin.structural_hash = program->structural_hash;
          origin.record_id = record.id();
          origin.job = record.job();
          origin.median_s = record.median_s();
          origin.record_target = record.target().canonical();
          origin.exact_target = match.exact;
          origin.difference = match.difference;
          origin.skipped_reason = absl::StrJoin(skipped, "; ");
          return KernelPlan{workload, target, *std::move(program),
                            std::move(origin)};
        }
        skipped.push_back(
            absl::StrCat("record ", record.id(), " of ", db->path(), " for ",
                         workload.CanonicalForm(),
                         " is not used: ", program.status().message()));
        if (i == 0) {
          absl::StatusOr<std::vector<db::Match>> top = db->Top(
              workload.Key(), TargetInfoOf(target), kRecordsTried, matching);
          if (top.ok()) {
            for (db::Match& m : *top) {
              if (m.record.id() != record.id())
                candidates.push_back(std::move(m));
            }
          }
        }
      }
      origin.fallback_reason = absl::StrJoin(skipped, "; ");
    }
  }
  absl::StatusOr<KernelProgram> program =
      MakeKernelProgram(workload, nullptr, target);
  if (!program.ok()) {
    return absl::Status(
        program.status().code(),
        absl::StrCat(workload.CanonicalForm(),
                     ": default schedule: ", program.status().message()));
  }
  origin.source = KernelSource::kDefault;
  origin.structural_hash = program->structural_hash;
  return KernelPlan{workload, target, *std::move(program), std::move(origin)};
}

}  // namespace lathe::api
