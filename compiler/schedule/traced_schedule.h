// A schedule that records every primitive call in a trace.
//
// Each call runs the concrete primitive; when it succeeds, the call is
// appended to the trace as an instruction (failed calls leave no trace), with
// the decision of sampling calls. Replay (replay.h) runs a trace's
// instructions on a TracedSchedule of a fresh program.
// Tests: tests/compiler/schedule/trace_round_trip.h (used by every primitive
// test) and tests/compiler/schedule/schedule_test.cc.
#pragma once

#include "compiler/schedule/schedule.h"
#include "compiler/schedule/trace.h"

namespace lathe {

class TracedSchedule : public ConcreteSchedule {
 public:
  explicit TracedSchedule(Program program, uint64_t seed = 0)
      : ConcreteSchedule(std::move(program), seed) {}

  const Trace& trace() const { return trace_; }
  Trace& mutable_trace() { return trace_; }

  absl::StatusOr<BlockRV> GetBlock(const std::string& name) override;
  absl::StatusOr<std::vector<LoopRV>> GetLoops(BlockRV block) override;
  absl::StatusOr<std::vector<BlockRV>> GetProducers(BlockRV block) override;
  absl::StatusOr<std::vector<BlockRV>> GetConsumers(BlockRV block) override;
  absl::StatusOr<std::vector<LoopRV>> Split(
      LoopRV loop, const std::vector<Factor>& factors) override;
  absl::StatusOr<LoopRV> Fuse(const std::vector<LoopRV>& loops) override;
  absl::Status Reorder(const std::vector<LoopRV>& order) override;
  absl::Status Parallel(LoopRV loop) override;
  absl::Status Vectorize(LoopRV loop) override;
  absl::Status Unroll(LoopRV loop) override;
  absl::Status Bind(LoopRV loop, const std::string& thread_axis) override;
  absl::Status AnnotateLoop(LoopRV loop, const std::string& key,
                            const AnnotationValue& value) override;
  absl::Status AnnotateBlock(BlockRV block, const std::string& key,
                             const AnnotationValue& value) override;
  absl::StatusOr<BlockRV> CacheRead(BlockRV block, int64_t read_index,
                                    const std::string& scope,
                                    const Layout& layout = {}) override;
  absl::StatusOr<BlockRV> CacheWrite(BlockRV block, int64_t write_index,
                                     const std::string& scope,
                                     const Layout& layout = {}) override;
  absl::Status ComputeAt(BlockRV block, LoopRV loop,
                         bool preserve_unit_loops = false) override;
  absl::Status ReverseComputeAt(BlockRV block, LoopRV loop,
                                bool preserve_unit_loops = false) override;
  absl::Status ComputeInline(BlockRV block) override;
  absl::Status ReverseComputeInline(BlockRV block) override;
  absl::StatusOr<BlockRV> DecomposeReduction(BlockRV block,
                                             LoopRV loop) override;
  absl::StatusOr<BlockRV> RFactor(LoopRV loop, int64_t factor_axis) override;
  absl::StatusOr<std::vector<ExprRV>> SamplePerfectTile(
      LoopRV loop, int64_t n, int64_t max_innermost,
      std::optional<std::vector<int64_t>> decision = std::nullopt) override;
  absl::StatusOr<ExprRV> SampleCategorical(
      const std::vector<int64_t>& candidates, const std::vector<double>& probs,
      std::optional<int64_t> decision = std::nullopt) override;
  absl::StatusOr<LoopRV> SampleComputeLocation(
      BlockRV block, std::optional<int64_t> decision = std::nullopt) override;

 private:
  void Record(std::string kind, std::vector<TraceInput> inputs,
              std::vector<std::pair<std::string, AttrValue>> attrs,
              std::vector<int64_t> outputs, bool has_decision = false);

  Trace trace_;
};

}  // namespace lathe
