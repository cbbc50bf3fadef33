#include "compiler/schedule/traced_schedule.h"

#include "base/status_macros.h"

namespace lathe {

namespace {

TraceInput In(BlockRV b) { return TraceInput::RV(b.id); }
TraceInput In(LoopRV l) { return TraceInput::RV(l.id); }
TraceInput In(const Factor& f) {
  if (const auto* c = std::get_if<int64_t>(&f)) return TraceInput::Int(*c);
  if (const auto* rv = std::get_if<ExprRV>(&f)) return TraceInput::RV(rv->id);
  return TraceInput::None();
}

template <typename RV>
std::vector<int64_t> Ids(const std::vector<RV>& rvs) {
  std::vector<int64_t> ids;
  for (const RV& rv : rvs) ids.push_back(rv.id);
  return ids;
}

template <typename RV>
std::vector<TraceInput> Ins(const std::vector<RV>& rvs) {
  std::vector<TraceInput> inputs;
  for (const RV& rv : rvs) inputs.push_back(In(rv));
  return inputs;
}

AttrValue ToAttr(const AnnotationValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  return std::get<std::string>(v);
}

std::vector<std::pair<std::string, AttrValue>> LayoutAttrs(
    const Layout& layout) {
  if (layout.empty()) return {};
  return {{"layout_splits", layout.splits},
          {"layout_permutation", layout.permutation}};
}

}  // namespace

void TracedSchedule::Record(
    std::string kind, std::vector<TraceInput> inputs,
    std::vector<std::pair<std::string, AttrValue>> attrs,
    std::vector<int64_t> outputs, bool has_decision) {
  if (has_decision) {
    trace_.decisions[static_cast<int64_t>(trace_.instructions.size())] =
        last_decision_;
  }
  trace_.instructions.push_back({std::move(kind), std::move(inputs),
                                 std::move(attrs), std::move(outputs)});
}

absl::StatusOr<BlockRV> TracedSchedule::GetBlock(const std::string& name) {
  LATHE_ASSIGN_OR_RETURN(BlockRV b, ConcreteSchedule::GetBlock(name));
  Record("get_block", {}, {{"name", name}}, {b.id});
  return b;
}

absl::StatusOr<std::vector<LoopRV>> TracedSchedule::GetLoops(BlockRV block) {
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops,
                         ConcreteSchedule::GetLoops(block));
  Record("get_loops", {In(block)}, {}, Ids(loops));
  return loops;
}

absl::StatusOr<std::vector<BlockRV>> TracedSchedule::GetProducers(
    BlockRV block) {
  LATHE_ASSIGN_OR_RETURN(std::vector<BlockRV> blocks,
                         ConcreteSchedule::GetProducers(block));
  Record("get_producers", {In(block)}, {}, Ids(blocks));
  return blocks;
}

absl::StatusOr<std::vector<BlockRV>> TracedSchedule::GetConsumers(
    BlockRV block) {
  LATHE_ASSIGN_OR_RETURN(std::vector<BlockRV> blocks,
                         ConcreteSchedule::GetConsumers(block));
  Record("get_consumers", {In(block)}, {}, Ids(blocks));
  return blocks;
}

absl::StatusOr<std::vector<LoopRV>> TracedSchedule::Split(
    LoopRV loop, const std::vector<Factor>& factors) {
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops,
                         ConcreteSchedule::Split(loop, factors));
  std::vector<TraceInput> inputs = {In(loop)};
  for (const Factor& f : factors) inputs.push_back(In(f));
  Record("split", std::move(inputs), {}, Ids(loops));
  return loops;
}

absl::StatusOr<LoopRV> TracedSchedule::Fuse(const std::vector<LoopRV>& loops) {
  LATHE_ASSIGN_OR_RETURN(LoopRV fused, ConcreteSchedule::Fuse(loops));
  Record("fuse", Ins(loops), {}, {fused.id});
  return fused;
}

absl::Status TracedSchedule::Reorder(const std::vector<LoopRV>& order) {
  LATHE_RETURN_IF_ERROR(ConcreteSchedule::Reorder(order));
  Record("reorder", Ins(order), {}, {});
  return absl::OkStatus();
}

absl::Status TracedSchedule::Parallel(LoopRV loop) {
  LATHE_RETURN_IF_ERROR(ConcreteSchedule::Parallel(loop));
  Record("parallel", {In(loop)}, {}, {});
  return absl::OkStatus();
}

absl::Status TracedSchedule::Vectorize(LoopRV loop) {
  LATHE_RETURN_IF_ERROR(ConcreteSchedule::Vectorize(loop));
  Record("vectorize", {In(loop)}, {}, {});
  return absl::OkStatus();
}

absl::Status TracedSchedule::Unroll(LoopRV loop) {
  LATHE_RETURN_IF_ERROR(ConcreteSchedule::Unroll(loop));
  Record("unroll", {In(loop)}, {}, {});
  return absl::OkStatus();
}

absl::Status TracedSchedule::Bind(LoopRV loop, const std::string& thread_axis) {
  LATHE_RETURN_IF_ERROR(ConcreteSchedule::Bind(loop, thread_axis));
  Record("bind", {In(loop)}, {{"thread_axis", thread_axis}}, {});
  return absl::OkStatus();
}

absl::Status TracedSchedule::AnnotateLoop(LoopRV loop, const std::string& key,
                                          const AnnotationValue& value) {
  LATHE_RETURN_IF_ERROR(ConcreteSchedule::AnnotateLoop(loop, key, value));
  Record("annotate_loop", {In(loop)}, {{"key", key}, {"value", ToAttr(value)}},
         {});
  return absl::OkStatus();
}

absl::Status TracedSchedule::AnnotateBlock(BlockRV block,
                                           const std::string& key,
                                           const AnnotationValue& value) {
  LATHE_RETURN_IF_ERROR(ConcreteSchedule::AnnotateBlock(block, key, value));
  Record("annotate_block", {In(block)},
         {{"key", key}, {"value", ToAttr(value)}}, {});
  return absl::OkStatus();
}

absl::StatusOr<BlockRV> TracedSchedule::CacheRead(BlockRV block,
                                                  int64_t read_index,
                                                  const std::string& scope,
                                                  const Layout& layout) {
  LATHE_ASSIGN_OR_RETURN(
      BlockRV created,
      ConcreteSchedule::CacheRead(block, read_index, scope, layout));
  auto attrs = LayoutAttrs(layout);
  attrs.insert(attrs.begin(), {{"read_index", read_index}, {"scope", scope}});
  Record("cache_read", {In(block)}, std::move(attrs), {created.id});
  return created;
}

absl::StatusOr<BlockRV> TracedSchedule::CacheWrite(BlockRV block,
                                                   int64_t write_index,
                                                   const std::string& scope,
                                                   const Layout& layout) {
  LATHE_ASSIGN_OR_RETURN(
      BlockRV created,
      ConcreteSchedule::CacheWrite(block, write_index, scope, layout));
  auto attrs = LayoutAttrs(layout);
  attrs.insert(attrs.begin(), {{"write_index", write_index}, {"scope", scope}});
  Record("cache_write", {In(block)}, std::move(attrs), {created.id});
  return created;
}

absl::Status TracedSchedule::ComputeAt(BlockRV block, LoopRV loop,
                                       bool preserve_unit_loops) {
  LATHE_RETURN_IF_ERROR(
      ConcreteSchedule::ComputeAt(block, loop, preserve_unit_loops));
  Record("compute_at", {In(block), In(loop)},
         {{"preserve_unit_loops", int64_t{preserve_unit_loops}}}, {});
  return absl::OkStatus();
}

absl::Status TracedSchedule::ReverseComputeAt(BlockRV block, LoopRV loop,
                                              bool preserve_unit_loops) {
  LATHE_RETURN_IF_ERROR(
      ConcreteSchedule::ReverseComputeAt(block, loop, preserve_unit_loops));
  Record("reverse_compute_at", {In(block), In(loop)},
         {{"preserve_unit_loops", int64_t{preserve_unit_loops}}}, {});
  return absl::OkStatus();
}

absl::Status TracedSchedule::ComputeInline(BlockRV block) {
  LATHE_RETURN_IF_ERROR(ConcreteSchedule::ComputeInline(block));
  Record("compute_inline", {In(block)}, {}, {});
  return absl::OkStatus();
}

absl::Status TracedSchedule::ReverseComputeInline(BlockRV block) {
  LATHE_RETURN_IF_ERROR(ConcreteSchedule::ReverseComputeInline(block));
  Record("reverse_compute_inline", {In(block)}, {}, {});
  return absl::OkStatus();
}

absl::StatusOr<BlockRV> TracedSchedule::DecomposeReduction(BlockRV block,
                                                           LoopRV loop) {
  LATHE_ASSIGN_OR_RETURN(BlockRV init,
                         ConcreteSchedule::DecomposeReduction(block, loop));
  Record("decompose_reduction", {In(block), In(loop)}, {}, {init.id});
  return init;
}

absl::StatusOr<BlockRV> TracedSchedule::RFactor(LoopRV loop,
                                                int64_t factor_axis) {
  LATHE_ASSIGN_OR_RETURN(BlockRV rf,
                         ConcreteSchedule::RFactor(loop, factor_axis));
  Record("rfactor", {In(loop)}, {{"factor_axis", factor_axis}}, {rf.id});
  return rf;
}

absl::StatusOr<std::vector<ExprRV>> TracedSchedule::SamplePerfectTile(
    LoopRV loop, int64_t n, int64_t max_innermost,
    std::optional<std::vector<int64_t>> decision) {
  LATHE_ASSIGN_OR_RETURN(std::vector<ExprRV> factors,
                         ConcreteSchedule::SamplePerfectTile(
                             loop, n, max_innermost, std::move(decision)));
  Record("sample_perfect_tile", {In(loop)},
         {{"n", n}, {"max_innermost", max_innermost}}, Ids(factors),
         /*has_decision=*/true);
  return factors;
}

absl::StatusOr<ExprRV> TracedSchedule::SampleCategorical(
    const std::vector<int64_t>& candidates, const std::vector<double>& probs,
    std::optional<int64_t> decision) {
  LATHE_ASSIGN_OR_RETURN(ExprRV value, ConcreteSchedule::SampleCategorical(
                                           candidates, probs, decision));
  Record("sample_categorical", {},
         {{"candidates", candidates}, {"probs", probs}}, {value.id},
         /*has_decision=*/true);
  return value;
}

absl::StatusOr<LoopRV> TracedSchedule::SampleComputeLocation(
    BlockRV block, std::optional<int64_t> decision) {
  LATHE_ASSIGN_OR_RETURN(
      LoopRV loop, ConcreteSchedule::SampleComputeLocation(block, decision));
  Record("sample_compute_location", {In(block)}, {}, {loop.id},
         /*has_decision=*/true);
  return loop;
}

}  // namespace lathe
