// Design spaces (design_space.h).
// Tests: tests/tuner/space/design_space_test.cc.
#include "tuner/space/design_space.h"

#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/ir/structural_equal.h"
#include "tuner/space/add_rfactor.h"
#include "tuner/space/auto_inline.h"
#include "tuner/space/gpu_bind_block.h"
#include "tuner/space/gpu_shared_tiling.h"
#include "tuner/space/multi_level_tiling.h"
#include "tuner/space/parallel_vectorize_unroll.h"
#include "tuner/space/random_compute_location.h"

namespace lathe::tuner {

std::vector<std::unique_ptr<ScheduleRule>> DefaultCpuRules() {
  std::vector<std::unique_ptr<ScheduleRule>> rules;
  // 1. Fold element-wise chains first, so the other rules see the blocks
  //    that do the work.
  rules.push_back(std::make_unique<InlineElementwise>());
  // 2. rfactor branches before tiling (MetaSchedule's CPU order): a
  //    reduction with a tiny output that the tiling rule would also take
  //    keeps its unchanged branch for tiling (add_rfactor.h).
  rules.push_back(std::make_unique<AddRFactor>());
  // 3. Multi-level tiling of GEMM- and convolution-like blocks, with the
  //    output tile's cache write and operand packing (multi_level_tiling.h).
  //    It marks what it tiles with kTiledAnnotation (block_nest.h), which
  //    rules 4 and 5 leave alone.
  rules.push_back(std::make_unique<MultiLevelTiling>());
  // 4. Threads, lanes and unrolling for every block the tiling left.
  rules.push_back(std::make_unique<ParallelVectorizeUnroll>());
  // 5. Where producers are computed, last: it moves blocks under the loops
  //    the rules above gave their consumers.
  rules.push_back(std::make_unique<RandomComputeLocation>());
  return rules;
}

std::vector<std::unique_ptr<ScheduleRule>> DefaultGpuRules() {
  std::vector<std::unique_ptr<ScheduleRule>> rules;
  // 1. Fold element-wise stages, as for CPUs: a convolution's padding stays
  //    a stage (inlined, its guarded loads would be in every unrolled
  //    product, and NVRTC takes tens of seconds over them), which the
  //    shared-memory tile folds into its copy (gpu_shared_tile.h); a
  //    padding read through overlapping windows (pooling, depthwise) is
  //    inlined, where CPUs branch: kept, it would be a kernel of its own;
  //    so is an epilogue between two reductions, which CPUs keep for the
  //    tiling rule to compute at its reader's tile.
  rules.push_back(std::make_unique<InlineElementwise>(
      /*inline_reused_stages=*/false, InlineElementwise::WindowReuse::kInline,
      /*keep_tile_epilogues=*/false));
  // 2. The sampled shared-memory tile of GEMM- and convolution-like blocks.
  rules.push_back(std::make_unique<GpuSharedTiling>());
  // 3. Every block left gets the default GPU schedule's binding.
  rules.push_back(std::make_unique<GpuBindBlock>());
  return rules;
}

std::vector<std::unique_ptr<ScheduleRule>> RulesForTarget(
    const Target& target) {
  return target.IsCuda() ? DefaultGpuRules() : DefaultCpuRules();
}

namespace {

// The schedule of one branch and the blocks the current rule has yet to
// visit in it (names, last block last).
struct Pending {
  std::unique_ptr<TracedSchedule> schedule;
  std::vector<std::string> blocks;
};

// The instructions of a trace without its decisions: two branches that
// recorded the same instructions are the same space, whatever they sampled.
std::string SpaceKey(const Trace& trace) {
  Trace copy = trace;
  copy.decisions.clear();
  return copy.ToText();
}

}  // namespace

absl::StatusOr<std::vector<Trace>> GenerateDesignSpaces(
    const Workload& workload, const Target& target,
    const std::vector<std::unique_ptr<ScheduleRule>>& rules) {
  LATHE_ASSIGN_OR_RETURN(Program initial, workload.InitialProgram());
  SpaceContext context;
  context.workload = &workload;
  context.initial = &initial;
  context.target = target;

  std::vector<std::unique_ptr<TracedSchedule>> states;
  states.push_back(std::make_unique<TracedSchedule>(
      initial, StableHash64(workload.CanonicalForm())));
  states.back()->mutable_trace().workload = workload.CanonicalForm();
  // Rule by rule (MetaSchedule's post-order application): each rule visits
  // every block of every schedule the rules before it produced, from the
  // last block to the first, each of its branches continuing with the
  // blocks left. The blocks are those present when the rule starts on a
  // schedule: blocks a rule creates (rfactor's, cache blocks) are visited by
  // the rules after it, not by itself.
  for (const std::unique_ptr<ScheduleRule>& rule : rules) {
    std::vector<std::unique_ptr<TracedSchedule>> next;
    for (size_t s = 0; s < states.size(); ++s) {
      std::vector<Pending> stack;
      Pending start;
      for (const BlockNode* b : states[s]->program().Blocks())
        start.blocks.push_back(b->name);
      start.schedule = std::move(states[s]);
      stack.push_back(std::move(start));
      while (!stack.empty()) {
        Pending top = std::move(stack.back());
        stack.pop_back();
        if (top.blocks.empty()) {
          next.push_back(std::move(top.schedule));
          continue;
        }
        const std::string block = top.blocks.back();
        top.blocks.pop_back();
        if (top.schedule->program().FindBlock(block) ==
            nullptr) {  // inlined, say
          stack.push_back(std::move(top));
          continue;
        }
        absl::StatusOr<std::vector<std::unique_ptr<TracedSchedule>>> branches =
            rule->Apply(std::move(top.schedule), block, context);
        if (!branches.ok()) {
          return absl::Status(
              branches.status().code(),
              absl::StrCat("design space of ", workload.CanonicalForm(),
                           ": rule ", rule->Name(), " on block \"", block,
                           "\": ", branches.status().message()));
        }
        // Schedules under way besides this one: finished, stacked, and
        // those of the previous rule not started yet. Past the bound, only
        // the first branches go on (design_space.h).
        const size_t others =
            next.size() + stack.size() + states.size() - s - 1;
        const size_t room =
            others + 1 >= static_cast<size_t>(kMaxDesignSpaces)
                ? 1
                : static_cast<size_t>(kMaxDesignSpaces) - others;
        if (branches->size() > room) branches->resize(room);
        // Pushed in reverse, so the first branch is finished first: the
        // spaces come out in the order the rules list their branches.
        for (auto it = branches->rbegin(); it != branches->rend(); ++it) {
          stack.push_back({std::move(*it), top.blocks});
        }
      }
    }
    states = std::move(next);
  }

  std::vector<Trace> spaces;
  std::set<std::string> seen;
  for (const std::unique_ptr<TracedSchedule>& state : states) {
    Trace trace = state->trace();
    trace.workload = workload.CanonicalForm();
    if (seen.insert(SpaceKey(trace)).second) spaces.push_back(std::move(trace));
  }
  return spaces;
}

}  // namespace lathe::tuner
