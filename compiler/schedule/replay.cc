#include "compiler/schedule/replay.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/untrusted_text.h"
#include "compiler/schedule/instruction_kind.h"
#include "compiler/schedule/random.h"

namespace lathe {
namespace {

// ReplayTrace; `drew` tells whether a decision was drawn from the seed (one
// `decisions` lacks) before the replay ended or failed.
absl::StatusOr<std::unique_ptr<TracedSchedule>> ReplayOnce(
    const Trace& trace, const Program& program, const Decisions& decisions,
    uint64_t seed, bool* drew) {
  *drew = false;
  if (absl::Status st = CheckTraceLimits(trace); !st.ok()) {
    return absl::Status(st.code(), absl::StrCat("replay: ", st.message()));
  }
  auto sch = std::make_unique<TracedSchedule>(program, seed);
  sch->mutable_trace().workload = trace.workload;
  std::map<int64_t, int64_t> rv_map;
  for (size_t i = 0; i < trace.instructions.size(); ++i) {
    const Instruction& inst = trace.instructions[i];
    absl::StatusOr<const InstructionKind*> kind =
        FindInstructionKind(inst.kind);
    if (!kind.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("replay: instruction ", i, " has unknown kind \"",
                       EscapedPrefix(inst.kind), "\""));
    }
    auto d = decisions.find(static_cast<int64_t>(i));
    ReplayContext context(sch.get(), inst, (*kind)->attrs, &rv_map,
                          d == decisions.end() ? nullptr : &d->second);
    absl::Status status = (*kind)->replay(context);
    *drew |= (*kind)->samples && d == decisions.end() && status.ok();
    if (!status.ok()) {
      Trace one;
      one.instructions.push_back(inst);
      std::string text = one.ToText();
      if (!text.empty() && text.back() == '\n') text.pop_back();
      return absl::Status(status.code(),
                          absl::StrCat("replay: instruction ", i, " `", text,
                                       "`: ", status.message()));
    }
  }
  return sch;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TracedSchedule>> ReplayTrace(
    const Trace& trace, const Program& program, const Decisions& decisions,
    uint64_t seed) {
  bool drew = false;
  return ReplayOnce(trace, program, decisions, seed, &drew);
}

absl::StatusOr<std::unique_ptr<TracedSchedule>> ReplayTrace(
    const Trace& trace, const Program& program) {
  return ReplayTrace(trace, program, trace.decisions, /*seed=*/0);
}

absl::StatusOr<std::unique_ptr<TracedSchedule>> SampleTrace(
    const Trace& trace, const Program& program, const Decisions& decisions,
    uint64_t seed, int max_attempts, int* attempts) {
  Rng seeds = Rng(seed).Fork();  // the seeds of the attempts after the first
  absl::Status error;
  for (int attempt = 0; attempt < std::max(1, max_attempts); ++attempt) {
    if (attempts != nullptr) *attempts = attempt + 1;
    bool drew = false;
    absl::StatusOr<std::unique_ptr<TracedSchedule>> sch = ReplayOnce(
        trace, program, decisions, attempt == 0 ? seed : seeds.Next(), &drew);
    if (sch.ok()) return sch;
    error = sch.status();
    // Only given decisions led to the failure: other draws cannot help.
    if (!drew) break;
  }
  return error;
}

}  // namespace lathe
