// InlineElementwise: the schedule rule that folds element-wise stages into
// their neighbours, so the later rules see one block where the workload had
// a chain (dense + bias + relu: one epilogue left for the tiling rule to fuse
// into the output tile; pooling: the padding folded into the window sum).
//
// For a block that is not a reduction:
//  1. compute_inline into its readers when the primitive accepts it (a single
//     store of an intermediate at its own iteration variables), unless the
//     block is a stage that a reader would recompute many times at a cost:
//     its value has a guarded load (a padding select) or a math call, and a
//     reader has an iteration variable that does not index its reads of the
//     stage (conv2d's output channels over the padded input). Inlined, conv2d
//     would run the padding's select and guarded load K times per element and
//     its inner loop would not vectorize; in the tuned spaces too the padded
//     copy is faster (bench/README.md, "Why the code is as it is"), so it is
//     kept. Such a stage stays a block (RandomComputeLocation may move it
//     under its consumer's tile). A stage read through overlapping windows
//     with every reader variable indexing it (a depthwise convolution or a
//     pooling over the padded input: each element read a few times) is
//     both: the rule branches, one space with the stage inlined, one with it
//     kept, for the search to decide by measurement (kept and computed under
//     the consumer's tile, a depthwise 3x3 convolution ran 3.5x faster than
//     inlined on this machine: bench/README.md, "Why the code is as it is").
//     So does a costly stage that two or more blocks read, which inlined
//     would be computed once per reader (softmax's exp, read by the row sum
//     and by the division).
//  2. otherwise reverse_compute_inline into its producer when accepted (an
//     element-wise consumer of an element-wise producer: relu after add).
// Except an epilogue between two reductions that reuse data (a depthwise
// convolution's bias and clip, read by a 1x1 projection:
// compute_producer_at_tile.h, IsEpilogueBetweenReductions): it stays a
// block, which the tiling rule computes at the projection's tile once per
// element; inlined into the projection, it would be computed again for
// every output channel.
// The rule branches only there; it does nothing to a block neither accepts.
// Both primitives are tried on a copy first, so nothing is recorded for a block
// that stays.
// Tests: tests/tuner/space/auto_inline_test.cc.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tuner/space/schedule_rule.h"

namespace lathe::tuner {

class InlineElementwise : public ScheduleRule {
 public:
  // What becomes of a stage read through overlapping windows (step 1).
  // (Also what becomes of a costly stage with several readers.)
  enum class WindowReuse {
    kBranch,  // CPUs: a space with it inlined, one with it kept
    kInline,  // GPUs: a kept stage would be a kernel and a pass of its own
  };
  // inline_reused_stages: also inline the stages that step 1 keeps (for
  // experiments and tests). keep_tile_epilogues: keep an epilogue between
  // two reductions a block (above; CPUs, whose tiling rule computes it at
  // its reader's tile; GPUs have no such step, and a kept stage would be a
  // kernel of its own).
  explicit InlineElementwise(bool inline_reused_stages = false,
                             WindowReuse window_reuse = WindowReuse::kBranch,
                             bool keep_tile_epilogues = true)
      : inline_reused_stages_(inline_reused_stages),
        window_reuse_(window_reuse),
        keep_tile_epilogues_(keep_tile_epilogues) {}

  std::string Name() const override { return "inline_elementwise"; }
  absl::StatusOr<std::vector<std::unique_ptr<TracedSchedule>>> Apply(
      std::unique_ptr<TracedSchedule> schedule, const std::string& block,
      const SpaceContext& context) const override;

 private:
  bool inline_reused_stages_;
  WindowReuse window_reuse_;
  bool keep_tile_epilogues_;
};

// Whether inlining `block` would make some reader recompute a costly value
// (a guarded load or a math call) once per value of a reader's iteration
// variable that does not index the read (step 1 above).
bool IsCostlyReusedStage(const Program& program, const BlockNode& block);

// Whether `block` is a costly stage read through overlapping windows (step 1
// above: the rule branches).
bool IsCostlyWindowReusedStage(const Program& program, const BlockNode& block);

// Whether `block` is a costly stage that two or more blocks read (step 1
// above: the rule branches).
bool IsCostlySharedStage(const Program& program, const BlockNode& block);

}  // namespace lathe::tuner
