// Helpers of the tests of tuner/space: apply a rule to a block of a
// workload, look at the loops of a program, and build one program of a
// design space and check it against the workload's reference.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/llvm/jit.h"
#include "compiler/ir/printer.h"
#include "compiler/lower/pipeline.h"
#include "compiler/measure/reference_check.h"
#include "compiler/schedule/replay.h"
#include "compiler/workload/spec.h"
#include "tuner/space/schedule_rule.h"

namespace lathe::tuner::testing {

// A workload with its initial program and the context rules get.
struct RuleFixture {
  explicit RuleFixture(const std::string& spec,
                       const Target& target = HostTarget(2))
      : workload(ParseWorkloadSpec(spec).value()),
        initial(workload.InitialProgram().value()) {
    context.workload = &workload;
    context.initial = &initial;
    context.target = target;
  }
  RuleFixture(const RuleFixture&) = delete;

  std::unique_ptr<TracedSchedule> Fresh(uint64_t seed = 7) const {
    return std::make_unique<TracedSchedule>(initial, seed);
  }

  Workload workload;
  Program initial;
  SpaceContext context;
};

// The loops of a program (every nest) of the given kind.
inline std::vector<const ForNode*> LoopsOfKind(const Program& program,
                                               ForKind kind) {
  std::vector<const ForNode*> loops;
  VisitStmts(static_cast<const StmtNode*>(program.root.get()),
             [&](const StmtNode* s) {
               if (const auto* f = s->as<ForNode>();
                   f != nullptr && f->for_kind == kind) {
                 loops.push_back(f);
               }
               return true;
             });
  return loops;
}

// How many instructions of `kind` the trace has.
inline int CountInstructions(const Trace& trace, const std::string& kind) {
  int n = 0;
  for (const Instruction& inst : trace.instructions) n += inst.kind == kind;
  return n;
}

// Lowers, compiles for `target` (which must run here) and checks the
// program against the workload's reference.
inline absl::Status CheckProgram(const Workload& workload,
                                 const Program& scheduled,
                                 const Target& target) {
  absl::StatusOr<Program> lowered = LowerProgram(scheduled);
  if (!lowered.ok()) return lowered.status();
  absl::StatusOr<CompiledKernel> kernel = Compile(*lowered, target);
  if (!kernel.ok()) {
    return absl::Status(kernel.status().code(),
                        absl::StrCat(kernel.status().message(), "\nlowered:\n",
                                     PrintProgram(*lowered)));
  }
  return CheckAgainstReference(workload, [&](const std::vector<float*>& args) {
    return kernel->Run(args);
  });
}

// Samples the design space `trace` with `seed` (no decisions) and checks the
// program it gives. Errors carry the trace as sampled.
inline absl::Status CheckSpacePoint(const Workload& workload,
                                    const Trace& trace, const Target& target,
                                    uint64_t seed) {
  absl::StatusOr<Program> initial = workload.InitialProgram();
  if (!initial.ok()) return initial.status();
  absl::StatusOr<std::unique_ptr<TracedSchedule>> sampled =
      ReplayTrace(trace, *initial, Decisions{}, seed);
  if (!sampled.ok()) {
    return absl::Status(
        sampled.status().code(),
        absl::StrCat("replay (seed ", seed, "): ", sampled.status().message(),
                     "\nspace:\n", trace.ToText()));
  }
  absl::Status checked = CheckProgram(workload, (*sampled)->program(), target);
  if (!checked.ok()) {
    return absl::Status(
        checked.code(),
        absl::StrCat(checked.message(), "\nsampled trace (seed ", seed, "):\n",
                     (*sampled)->trace().ToText(), "program:\n",
                     PrintProgram((*sampled)->program())));
  }
  return absl::OkStatus();
}

}  // namespace lathe::tuner::testing
