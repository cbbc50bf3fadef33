#include "tuner/search/candidate.h"

#include "absl/strings/str_cat.h"
#include "compiler/codegen/cuda/cuda_codegen.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/lower/pipeline.h"
#include "tuner/features/program_features.h"

namespace lathe::tuner {

absl::StatusOr<Candidate> BuildCandidate(const Task& task, int space,
                                         const Trace& trace,
                                         const Decisions& decisions,
                                         uint64_t seed) {
  absl::StatusOr<std::unique_ptr<TracedSchedule>> scheduled =
      SampleTrace(trace, task.initial, decisions, seed);
  if (!scheduled.ok()) return scheduled.status();
  // The same program MakeKernelProgram builds from the candidate's trace
  // (so the hash is the one the runner reports and the database stores).
  absl::StatusOr<Program> lowered = LowerProgram((*scheduled)->program());
  if (!lowered.ok()) return lowered.status();
  // A GPU point the device cannot run (threads, shared memory, a thread's
  // registers over the target's limits) is refused here, not measured.
  if (task.target.IsCuda()) {
    absl::StatusOr<cuda::CudaModule> module =
        cuda::GenerateCuda(*lowered, task.target);
    if (!module.ok()) return module.status();
  }
  Candidate candidate;
  candidate.space = space;
  candidate.trace = (*scheduled)->trace();
  candidate.trace.workload = task.workload.CanonicalForm();
  candidate.structural_hash = StructuralHashHex((*scheduled)->program());
  candidate.lowered_hash =
      absl::StrCat("lowered:", StructuralHashHex(*lowered));
  candidate.features = ExtractProgramFeatures(*lowered, task.target);
  return candidate;
}

}  // namespace lathe::tuner
