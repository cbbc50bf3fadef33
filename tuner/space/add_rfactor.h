// AddRFactor: the schedule rule that gives reductions with little spatial
// parallelism a way to use the threads and lanes anyway (softmax's row max
// and sum over a long row, a matrix-vector product, pooling to 1x1, a matmul
// with a tiny M*N and a huge K), as MetaSchedule's rule of the same name.
//
// It applies to a reduction block whose loops are its own (block_nest.h)
// and not tiled, when either
//  (a) its spatial iterations are fewer than its reduction iterations and
//      fewer than threads x jobs_per_thread: the reduction loop of the
//      largest extent (>= 2) is split, and the rule branches on both parts;
//  (b) it is a row reduction (softmax's row max and sum, a layer norm's
//      mean over a [rows, 256] input): a reduction loop of extent >= 8 runs
//      along the last, contiguous dimension of every read that it indexes,
//      alone there, and those reads use every spatial variable too (no
//      reuse across rows, unlike a GEMM). Vectorized over rows, such a block
//      gathers a row's stride apart; the loop is split and the rule
//      branches on the inner part only.
// The split is a sampled perfect tile (inner factor at most max_innermost);
// the branches:
//  - rfactor over the outer part: the partial results C_rf[..., ko] are
//    independent across ko, so ParallelVectorizeUnroll fuses ko with the
//    spatial loops into a parallel loop;
//  - rfactor over the inner part: C_rf[..., ki] += x[..., ko * F + ki] with
//    ki innermost and spatial: vectorized (the lanes accumulate separately,
//    loading contiguously);
//  - the block unchanged (the other rules decide).
// The new dimension of C_rf is the last (factor_axis = rank of C), so the
// inner branch's partial results are contiguous in ki. The final reduction
// over C_rf keeps the block's name. Branches whose rfactor the primitive
// refuses are dropped (tried on a copy first: they leave nothing).
// Rule order: before the tiling rule (MetaSchedule's CPU order), so that a
// GEMM-like reduction with a tiny output (matrix-vector, M*N << K) still gets
// its rfactor branches while the unchanged branch goes on to tiling.
// Tests: tests/tuner/space/add_rfactor_test.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tuner/space/schedule_rule.h"

namespace lathe::tuner {

class AddRFactor : public ScheduleRule {
 public:
  struct Options {
    int64_t jobs_per_thread = 16;  // as ParallelVectorizeUnroll's
    int64_t max_innermost = 64;    // largest inner factor of the split
  };
  AddRFactor() : AddRFactor(Options{}) {}
  explicit AddRFactor(const Options& options) : options_(options) {}

  std::string Name() const override { return "add_rfactor"; }
  absl::StatusOr<std::vector<std::unique_ptr<TracedSchedule>>> Apply(
      std::unique_ptr<TracedSchedule> schedule, const std::string& block,
      const SpaceContext& context) const override;

 private:
  Options options_;
};

}  // namespace lathe::tuner
