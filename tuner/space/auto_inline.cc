// InlineElementwise (auto_inline.h).
// Tests: tests/tuner/space/auto_inline_test.cc.
#include "tuner/space/auto_inline.h"

#include <algorithm>
#include <utility>

#include "base/status_macros.h"
#include "compiler/schedule/analysis/reused_stage.h"
#include "compiler/schedule/primitive/compute_inline.h"
#include "tuner/space/compute_producer_at_tile.h"

namespace lathe::tuner {
namespace {

// A value that costs more than its loads when recomputed: a select that loads
// in a branch (the guarded load of a padding stage: a branch or a masked
// load, and no plain vector load of the reader) or a math function call.
bool CostlyToRecompute(const Expr& value) {
  return HasMathCall(value) || HasGuardedLoad(value);
}

}  // namespace

bool IsCostlyReusedStage(const Program& program, const BlockNode& block) {
  return IsReusedStage(program, block, CostlyToRecompute,
                       UnitIterVars::kIgnore);
}

bool IsCostlyWindowReusedStage(const Program& program, const BlockNode& block) {
  return IsWindowReusedStage(program, block, CostlyToRecompute);
}

bool IsCostlySharedStage(const Program& program, const BlockNode& block) {
  return IsSharedStage(program, block, CostlyToRecompute);
}

absl::StatusOr<std::vector<std::unique_ptr<TracedSchedule>>>
InlineElementwise::Apply(std::unique_ptr<TracedSchedule> schedule,
                         const std::string& block,
                         const SpaceContext& context) const {
  std::vector<std::unique_ptr<TracedSchedule>> result;
  const Program& program = schedule->program();
  const BlockNode* node = program.FindBlock(block);
  // An epilogue between two reductions stays a block: the tiling rule
  // computes it at its reader's tile (compute_producer_at_tile.h).
  if (node != nullptr && !node->IsReduction() &&
      !(keep_tile_epilogues_ && IsEpilogueBetweenReductions(program, *node))) {
    // 1. Into the readers; 2. else into the producer. Each is tried on a copy
    // so that a refusal leaves no get_block in the trace.
    bool forward =
        inline_reused_stages_ || !IsCostlyReusedStage(program, *node);
    if (forward) {
      Program copy = program;
      forward = primitive::ComputeInline(&copy, block).ok();
    }
    bool reverse = false;
    if (!forward) {
      Program copy = program;
      reverse = primitive::ReverseComputeInline(&copy, block).ok();
    }
    // A stage read through overlapping windows or by several readers: also
    // the space where it stays a block (first, as the rule's other spaces
    // come first).
    if (forward && !inline_reused_stages_ &&
        window_reuse_ == WindowReuse::kBranch &&
        (IsCostlyWindowReusedStage(program, *node) ||
         IsCostlySharedStage(program, *node))) {
      if (context.initial == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat(Name(), ": the context has no initial program"));
      }
      LATHE_ASSIGN_OR_RETURN(std::unique_ptr<TracedSchedule> kept,
                             ForkSchedule(*schedule, *context.initial));
      result.push_back(std::move(kept));
    }
    if (forward || reverse) {
      LATHE_ASSIGN_OR_RETURN(BlockRV rv, schedule->GetBlock(block));
      absl::Status applied = forward ? schedule->ComputeInline(rv)
                                     : schedule->ReverseComputeInline(rv);
      if (!applied.ok()) {
        return absl::InternalError(absl::StrCat(
            Name(), ": block \"", block,
            "\" was accepted on a copy, then refused: ", applied.message()));
      }
    }
  }
  result.push_back(std::move(schedule));
  return result;
}

}  // namespace lathe::tuner
