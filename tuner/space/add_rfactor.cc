// AddRFactor (add_rfactor.h).
// Tests: tests/tuner/space/add_rfactor_test.cc.
#include "tuner/space/add_rfactor.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/arith/linear_terms.h"
#include "compiler/ir/expr_functor.h"
#include "tuner/space/block_nest.h"

namespace lathe::tuner {
namespace {

// The shortest row worth vectorizing along: 8 floats, an AVX2 vector.
constexpr int64_t kMinRowLength = 8;

// The loop of a row reduction's own nest that walks its rows (see
// add_rfactor.h), or -1: a reduction variable of extent >= kMinRowLength
// that every read using it indexes in its last dimension only, with
// coefficient 1 and no other variable of extent >= 2 there (a vector over it
// loads contiguously, one over any spatial variable would gather), and every
// such read uses every spatial variable of extent >= 2 too (no reuse across
// rows: not a GEMM, which the tiling rule takes).
int RowReductionLoop(const BlockNode& block,
                     const std::vector<NestLoop>& nest) {
  const std::vector<BufferAccess> operands = Operands(block);
  for (int i = 0; i < static_cast<int>(nest.size()); ++i) {
    const NestLoop& loop = nest[i];
    if (loop.type != IterType::kReduce || loop.extent < kMinRowLength) continue;
    const Expr& var = block.iter_vars[loop.iter_index].var;
    bool contiguous = false, row_wise = true;
    for (const BufferAccess& read : operands) {
      if (!AccessUses(read, var)) continue;
      LinearTerms terms;
      CollectLinearTerms(read.indices.back(), 1, &terms, EqualAtoms::kMerge);
      bool unit = false, others = terms.overflowed;
      for (const auto& [atom, coefficient] : terms.terms) {
        if (atom.same_as(var)) {
          unit = coefficient == 1;
          continue;
        }
        for (const IterVar& iv : block.iter_vars) {
          others |= iv.extent >= 2 && UsesVar(atom, iv.var);
        }
      }
      unit &= !others;
      for (size_t d = 0; d + 1 < read.indices.size(); ++d) {
        unit &= !UsesVar(read.indices[d], var);
      }
      row_wise &= unit;
      contiguous |= unit;
      for (const IterVar& iv : block.iter_vars) {
        if (iv.type == IterType::kSpatial && iv.extent >= 2 &&
            !AccessUses(read, iv.var)) {
          row_wise = false;
        }
      }
    }
    if (contiguous && row_wise) return i;
  }
  return -1;
}

// The rfactor branch over part `part` (0 outer, 1 inner) of the split of the
// block's loop number `loop_index`, on any schedule.
absl::Status RFactorBranch(ConcreteSchedule* sch, const std::string& block,
                           int loop_index, int part, int64_t max_innermost,
                           int64_t factor_axis) {
  LATHE_ASSIGN_OR_RETURN(BlockRV b, sch->GetBlock(block));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch->GetLoops(b));
  LoopRV loop = loops[loop_index];
  LATHE_ASSIGN_OR_RETURN(std::vector<ExprRV> factors,
                         sch->SamplePerfectTile(loop, /*n=*/2, max_innermost));
  LATHE_ASSIGN_OR_RETURN(
      std::vector<LoopRV> parts,
      sch->Split(loop, {Factor{factors[0]}, Factor{factors[1]}}));
  return sch->RFactor(parts[part], factor_axis).status();
}

}  // namespace

absl::StatusOr<std::vector<std::unique_ptr<TracedSchedule>>> AddRFactor::Apply(
    std::unique_ptr<TracedSchedule> schedule, const std::string& block,
    const SpaceContext& context) const {
  std::vector<std::unique_ptr<TracedSchedule>> result;
  const Program& program = schedule->program();
  const BlockNode* node = program.FindBlock(block);
  std::optional<std::vector<NestLoop>> nest;
  if (node != nullptr && node->IsReduction() && !IsTiled(*node)) {
    nest = OwnNest(program, *node);
  }
  // 1. Little spatial parallelism, much reduction work: both branches. Or a
  //    row reduction: the inner one.
  int loop_index = -1;
  int64_t factor_axis = 0;
  std::vector<int> parts = {0, 1};
  if (nest.has_value()) {
    const int64_t spatial = IterProduct(*node, IterType::kSpatial);
    const int64_t reduce = IterProduct(*node, IterType::kReduce);
    const int64_t threads = std::max(1, context.target.num_threads);
    if (spatial < reduce &&
        spatial < threads * std::max<int64_t>(1, options_.jobs_per_thread)) {
      for (int i = 0; i < static_cast<int>(nest->size()); ++i) {
        const NestLoop& l = (*nest)[i];
        if (l.type == IterType::kReduce && l.extent >= 2 &&
            (loop_index < 0 || l.extent > (*nest)[loop_index].extent)) {
          loop_index = i;
        }
      }
    }
    if (loop_index < 0) {
      loop_index = RowReductionLoop(*node, *nest);
      parts = {1};
    }
    const BlockAccesses accesses = AccessesOf(*node);
    if (accesses.writes.empty()) loop_index = -1;
    if (loop_index >= 0)
      factor_axis =
          static_cast<int64_t>(accesses.writes[0].buffer->shape.size());
  }
  if (loop_index < 0) {
    result.push_back(std::move(schedule));
    return result;
  }
  // 2. One branch per part of the split. Each is tried on a scratch copy of
  //    the program first, drawing from the fork's own stream (so it samples
  //    the same factors): a refused branch leaves nothing.
  if (context.initial == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(Name(), ": the context has no initial program"));
  }
  for (int part : parts) {
    LATHE_ASSIGN_OR_RETURN(std::unique_ptr<TracedSchedule> fork,
                           ForkSchedule(*schedule, *context.initial));
    ConcreteSchedule scratch(program, fork->rng().state());
    if (!RFactorBranch(&scratch, block, loop_index, part,
                       options_.max_innermost, factor_axis)
             .ok()) {
      continue;
    }
    absl::Status applied = RFactorBranch(fork.get(), block, loop_index, part,
                                         options_.max_innermost, factor_axis);
    if (!applied.ok()) {
      return absl::InternalError(absl::StrCat(
          Name(), ": rfactor of block \"", block,
          "\" worked on a copy, then failed: ", applied.message()));
    }
    result.push_back(std::move(fork));
  }
  // 3. And the block as it is.
  result.push_back(std::move(schedule));
  return result;
}

}  // namespace lathe::tuner
