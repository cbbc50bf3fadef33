// ParallelVectorizeUnroll (parallel_vectorize_unroll.h).
// Tests: tests/tuner/space/parallel_vectorize_unroll_test.cc.
#include "tuner/space/parallel_vectorize_unroll.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "base/status_macros.h"
#include "tuner/space/block_nest.h"

namespace lathe::tuner {
namespace {

// How the vector loop is cut: the whole loop, or an inner part of `inner`.
struct VectorCut {
  bool split = false;
  int64_t inner = 1;
};

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

VectorCut ChooseVectorCut(int64_t extent, int64_t lanes) {
  // Up to about two vectors (or an exact multiple's worth that does not
  // divide): whole; code generation emits vectors of the register width.
  if (extent <= lanes || (extent < 2 * lanes && extent % lanes != 0))
    return {false, extent};
  if (extent % lanes == 0) return {true, lanes};
  for (int64_t d = lanes - 1; 2 * d >= lanes; --d) {
    if (extent % d == 0) return {true, d};
  }
  return {true, lanes};  // a tail: the predicate guards the last vector
}

// What the rule will do to one block, decided from its nest alone.
struct Plan {
  int vec = -1;  // index of the vector loop in the nest
  VectorCut cut;
  int first_reduce = 0;  // index of the first reduction loop (n when none)
  bool decompose = false;
  int num_fused = 0;  // leading loops of the parallel prefix to fuse
  bool parallel = false;
  bool unroll = false;  // some loop will be left serial with extent >= 2
};

Plan MakePlan(const BlockNode& block, const std::vector<NestLoop>& nest,
              int64_t lanes, int64_t threads, int64_t jobs_per_thread) {
  Plan plan;
  const int n = static_cast<int>(nest.size());
  const NestLoop& last = nest.back();
  // Any extent: a loop of rfactor's partial results has the extent of a
  // sampled factor, which other samples make longer.
  if (last.type == IterType::kSpatial &&
      StoresEndWith(block, last.iter_index)) {
    plan.vec = n - 1;
    plan.cut = ChooseVectorCut(last.extent, lanes);
  }
  plan.first_reduce = n;
  for (int i = 0; i < n; ++i) {
    if (nest[i].type == IterType::kReduce) {
      plan.first_reduce = i;
      break;
    }
  }
  // Only with an unsplit vector loop: the init's loops are then the loops
  // above the reduction and the copy of the vector loop, whatever the
  // decisions, so the get_loops that finds the copy replays with any (a
  // split vector loop's outer part may drop out of the bindings when a
  // sampled extent makes it a unit loop, and with it the init's copy).
  plan.decompose = block.IsReduction() && plan.vec >= 0 && !plan.cut.split &&
                   plan.first_reduce < plan.vec;
  // The parallel prefix: leading spatial loops, the vector loop's outer part
  // standing in for it.
  std::vector<int64_t> prefix;
  for (int i = 0; i < plan.first_reduce; ++i) {
    if (i != plan.vec) {
      prefix.push_back(nest[i].extent);
    } else if (plan.cut.split) {
      prefix.push_back(CeilDiv(nest[i].extent, plan.cut.inner));
    }
  }
  int64_t product = 1;
  for (int64_t extent : prefix) {
    product *= extent;
    ++plan.num_fused;
    if (product >= threads * jobs_per_thread) break;
  }
  plan.parallel = threads > 1 && product >= threads;
  if (!plan.parallel) plan.num_fused = 0;
  // Serial loops left: the prefix beyond the fused part, the reduction loops
  // and what follows them, the vector loop's outer part.
  for (size_t i = plan.num_fused; i < prefix.size(); ++i)
    plan.unroll |= prefix[i] >= 2;
  for (int i = plan.first_reduce; i < n; ++i) {
    if (i != plan.vec) {
      plan.unroll |= nest[i].extent >= 2;
    } else if (plan.cut.split) {
      plan.unroll |= CeilDiv(nest[i].extent, plan.cut.inner) >= 2;
    }
  }
  return plan;
}

}  // namespace

absl::StatusOr<std::vector<std::unique_ptr<TracedSchedule>>>
ParallelVectorizeUnroll::Apply(std::unique_ptr<TracedSchedule> schedule,
                               const std::string& block,
                               const SpaceContext& context) const {
  std::vector<std::unique_ptr<TracedSchedule>> result;
  const BlockNode* node = schedule->program().FindBlock(block);
  std::optional<std::vector<NestLoop>> nest;
  if (node != nullptr && !IsTiled(*node))
    nest = OwnNest(schedule->program(), *node);
  if (!nest.has_value()) {
    result.push_back(std::move(schedule));
    return result;
  }
  const int64_t lanes = std::max(1, context.target.VectorLanesF32());
  const Plan plan = MakePlan(*node, *nest, lanes, context.target.num_threads,
                             std::max<int64_t>(1, options_.jobs_per_thread));
  if (plan.vec < 0 && !plan.parallel && !plan.unroll) {
    result.push_back(std::move(schedule));
    return result;
  }

  TracedSchedule* sch = schedule.get();
  LATHE_ASSIGN_OR_RETURN(BlockRV b, sch->GetBlock(block));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch->GetLoops(b));
  // 1. Cut the vector loop. `order` is the nest after the cut.
  std::optional<LoopRV> vec_loop;
  std::vector<LoopRV> prefix;
  if (plan.vec >= 0) {
    vec_loop = loops[plan.vec];
    if (plan.cut.split) {
      absl::StatusOr<std::vector<LoopRV>> parts =
          sch->Split(loops[plan.vec], {Factor{}, Factor{plan.cut.inner}});
      if (parts.ok()) {
        vec_loop = (*parts)[1];
        if (plan.vec < plan.first_reduce) prefix.push_back((*parts)[0]);
      }
    }
  }
  for (int i = plan.first_reduce - 1; i >= 0; --i) {
    if (i != plan.vec) prefix.insert(prefix.begin(), loops[i]);
  }
  // 2. The init out of the reduction loops.
  std::optional<BlockRV> init;
  if (plan.decompose) {
    absl::StatusOr<BlockRV> decomposed =
        sch->DecomposeReduction(b, loops[plan.first_reduce]);
    if (decomposed.ok()) init = *decomposed;
  }
  // 3. The fused parallel prefix.
  if (plan.parallel && plan.num_fused >= 1 &&
      static_cast<int>(prefix.size()) >= plan.num_fused) {
    std::vector<LoopRV> fused(prefix.begin(), prefix.begin() + plan.num_fused);
    std::optional<LoopRV> outer = fused.front();
    if (fused.size() >= 2) {
      absl::StatusOr<LoopRV> f = sch->Fuse(fused);
      outer = f.ok() ? std::optional<LoopRV>(*f) : std::nullopt;
    }
    if (outer.has_value()) sch->Parallel(*outer).IgnoreError();
  }
  // 4. The lanes, in the block and in its init.
  if (vec_loop.has_value()) sch->Vectorize(*vec_loop).IgnoreError();
  if (init.has_value()) {
    absl::StatusOr<std::vector<LoopRV>> init_loops = sch->GetLoops(*init);
    if (init_loops.ok() && !init_loops->empty()) {
      sch->Vectorize(init_loops->back()).IgnoreError();
    }
  }
  // 5. A sampled unroll of the innermost serial loop.
  if (plan.unroll) {
    LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> now, sch->GetLoops(b));
    for (auto it = now.rbegin(); it != now.rend(); ++it) {
      const ForNode* loop = sch->program().FindLoop(sch->LoopName(*it).value());
      if (loop->for_kind != ForKind::kSerial || loop->extent < 2) continue;
      LATHE_ASSIGN_OR_RETURN(
          std::vector<ExprRV> factors,
          sch->SamplePerfectTile(*it, /*n=*/2,
                                 /*max_innermost=*/options_.max_unroll));
      LATHE_ASSIGN_OR_RETURN(
          std::vector<LoopRV> parts,
          sch->Split(*it, {Factor{factors[0]}, Factor{factors[1]}}));
      LATHE_RETURN_IF_ERROR(sch->Unroll(parts[1]));
      break;
    }
  }
  result.push_back(std::move(schedule));
  return result;
}

}  // namespace lathe::tuner
