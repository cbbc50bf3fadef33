// ParallelVectorizeUnroll: the schedule rule for the blocks that no tiling
// rule took (element-wise stages, padding, softmax's reductions, pooling,
// the blocks rfactor creates): use the threads, the vector lanes and some
// unrolling, as MetaSchedule's rule of the same name does on CPUs.
//
// It applies to a block whose loops are its own (block_nest.h: OwnNest) and
// that carries no kTiledAnnotation; it never branches. Steps, each skipped
// when its primitive refuses (a refused call leaves no trace):
//  1. Vector loop: the innermost loop, when it binds a spatial variable of
//     any extent that is the last index of every store of the block (unit
//     stride; the extent may be a sampled factor, 1 in this sample only). Split
//     by the target's float lanes when longer than about two vectors (the lanes
//     when they divide the extent, else a divisor of at least half the lanes,
//     else the lanes with a tail predicate); shorter loops are vectorized whole
//     (code generation splits long vectors).
//  2. A reduction with such a vector loop (unsplit) below a reduction loop
//     (rfactor's partial sums over the inner part) gets its init decomposed
//     before the first reduction loop, and the init's copy of the vector
//     loop is vectorized too (otherwise each vector iteration tests "first
//     k?"). Not after a split: see the comment in MakePlan.
//  3. Parallel: the leading spatial loops (those before the first reduction
//     loop, the vector loop excluded) are fused, the fewest outermost ones
//     whose iterations reach threads x jobs_per_thread (all of them when they
//     never do), and the fused loop is made parallel when it has at least as
//     many iterations as the target has threads (none on one thread).
//  4. Unroll: the innermost loop left serial, of extent >= 2, is split by a
//     sampled perfect tile whose inner factor is at most max_unroll, and the
//     inner loop is unrolled; the sampled factor is the searched unroll depth
//     (1: no unrolling).
// Why unrolling is a split and not MetaSchedule's sampled
// "pragma_auto_unroll_max_step" block annotation: lowering drops block
// annotations and code generation reads none (compiler/lower/lower_blocks.h,
// compiler/schedule/primitive/annotate.h), and an annotation's value is a
// constant of the trace, not a sampled variable, so a sampled max-step could
// neither take effect nor be searched. A loop marked unrolled is honoured by
// code generation (within its copy budget, codegen_llvm.cc).
// Tests: tests/tuner/space/parallel_vectorize_unroll_test.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tuner/space/schedule_rule.h"

namespace lathe::tuner {

class ParallelVectorizeUnroll : public ScheduleRule {
 public:
  struct Options {
    // Parallel iterations wanted per thread, for load balance (MetaSchedule's
    // max_jobs_per_core).
    int64_t jobs_per_thread = 16;
    // Largest sampled unroll factor.
    int64_t max_unroll = 16;
  };
  ParallelVectorizeUnroll() : ParallelVectorizeUnroll(Options{}) {}
  explicit ParallelVectorizeUnroll(const Options& options)
      : options_(options) {}

  std::string Name() const override { return "parallel_vectorize_unroll"; }
  absl::StatusOr<std::vector<std::unique_ptr<TracedSchedule>>> Apply(
      std::unique_ptr<TracedSchedule> schedule, const std::string& block,
      const SpaceContext& context) const override;

 private:
  Options options_;
};

}  // namespace lathe::tuner
