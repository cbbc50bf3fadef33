#include "compiler/schedule/schedule.h"

#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/schedule/primitive/annotate.h"
#include "compiler/schedule/primitive/cache_read.h"
#include "compiler/schedule/primitive/cache_write.h"
#include "compiler/schedule/primitive/compute_at.h"
#include "compiler/schedule/primitive/compute_inline.h"
#include "compiler/schedule/primitive/decompose_reduction.h"
#include "compiler/schedule/primitive/fuse.h"
#include "compiler/schedule/primitive/loop_kind.h"
#include "compiler/schedule/primitive/reorder.h"
#include "compiler/schedule/primitive/rfactor.h"
#include "compiler/schedule/primitive/sampling.h"
#include "compiler/schedule/primitive/split.h"

namespace lathe {

ConcreteSchedule::ConcreteSchedule(Program program, uint64_t seed)
    : program_(std::move(program)), rng_(seed) {}

BlockRV ConcreteSchedule::NewBlockRV(const std::string& name) {
  rvs_.push_back({RVEntry::Kind::kBlock, name, 0});
  return BlockRV{static_cast<int64_t>(rvs_.size()) - 1};
}

LoopRV ConcreteSchedule::NewLoopRV(const std::string& name) {
  rvs_.push_back({RVEntry::Kind::kLoop, name, 0});
  return LoopRV{static_cast<int64_t>(rvs_.size()) - 1};
}

ExprRV ConcreteSchedule::NewExprRV(int64_t value) {
  rvs_.push_back({RVEntry::Kind::kExpr, "", value});
  return ExprRV{static_cast<int64_t>(rvs_.size()) - 1};
}

absl::StatusOr<const ConcreteSchedule::RVEntry*> ConcreteSchedule::Entry(
    int64_t id, RVEntry::Kind kind, const char* what) const {
  if (id < 0 || id >= static_cast<int64_t>(rvs_.size()) ||
      rvs_[id].kind != kind) {
    return absl::InvalidArgumentError(absl::StrCat(
        "schedule: r", id, " is not a ", what, " of this schedule"));
  }
  return &rvs_[id];
}

absl::StatusOr<std::string> ConcreteSchedule::BlockName(BlockRV block) const {
  LATHE_ASSIGN_OR_RETURN(const RVEntry* e,
                         Entry(block.id, RVEntry::Kind::kBlock, "block"));
  if (program_.FindBlock(e->name) == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("schedule: block \"", e->name, "\" (r", block.id,
                     ") no longer exists"));
  }
  return e->name;
}

absl::StatusOr<std::string> ConcreteSchedule::LoopName(LoopRV loop) const {
  LATHE_ASSIGN_OR_RETURN(const RVEntry* e,
                         Entry(loop.id, RVEntry::Kind::kLoop, "loop"));
  if (program_.FindLoop(e->name) == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "schedule: loop \"", e->name, "\" (r", loop.id, ") no longer exists"));
  }
  return e->name;
}

bool ConcreteSchedule::IsStayLocation(LoopRV loop) const {
  absl::StatusOr<const RVEntry*> e =
      Entry(loop.id, RVEntry::Kind::kLoop, "loop");
  return e.ok() && (*e)->name.empty();
}

absl::StatusOr<int64_t> ConcreteSchedule::Value(ExprRV value) const {
  LATHE_ASSIGN_OR_RETURN(const RVEntry* e,
                         Entry(value.id, RVEntry::Kind::kExpr, "value"));
  return e->value;
}

absl::Status ConcreteSchedule::Apply(
    const std::function<absl::Status(Program*)>& fn) {
  Program copy = program_;
  LATHE_RETURN_IF_ERROR(fn(&copy));
  program_ = std::move(copy);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ConcreteSchedule::FactorValue(
    const Factor& factor) const {
  if (const auto* c = std::get_if<int64_t>(&factor)) return *c;
  if (const auto* rv = std::get_if<ExprRV>(&factor)) return Value(*rv);
  return absl::InternalError("schedule: an inferred factor has no value");
}

absl::StatusOr<BlockRV> ConcreteSchedule::GetBlock(const std::string& name) {
  if (program_.FindBlock(name) == nullptr || name == "root") {
    std::string known;
    for (BlockNode* b : program_.Blocks())
      absl::StrAppend(&known, known.empty() ? "" : ", ", b->name);
    return absl::InvalidArgumentError(absl::StrCat(
        "get_block: no block named \"", name, "\"; blocks: ", known));
  }
  return NewBlockRV(name);
}

absl::StatusOr<std::vector<LoopRV>> ConcreteSchedule::GetLoops(BlockRV block) {
  LATHE_ASSIGN_OR_RETURN(std::string name, BlockName(block));
  std::vector<LoopRV> loops;
  for (ForNode* loop : program_.LoopsAbove(program_.FindBlock(name))) {
    loops.push_back(NewLoopRV(loop->var->name));
  }
  return loops;
}

namespace {
bool Intersects(const std::vector<BufferPtr>& a,
                const std::vector<BufferPtr>& b) {
  for (const BufferPtr& x : a) {
    for (const BufferPtr& y : b) {
      if (x == y) return true;
    }
  }
  return false;
}
}  // namespace

absl::StatusOr<std::vector<BlockRV>> ConcreteSchedule::GetProducers(
    BlockRV block) {
  LATHE_ASSIGN_OR_RETURN(std::string name, BlockName(block));
  std::vector<BufferPtr> reads = BuffersRead(*program_.FindBlock(name));
  std::vector<BlockRV> producers;
  for (BlockNode* b : program_.Blocks()) {
    if (b->name != name && Intersects(BuffersWritten(*b), reads)) {
      producers.push_back(NewBlockRV(b->name));
    }
  }
  return producers;
}

absl::StatusOr<std::vector<BlockRV>> ConcreteSchedule::GetConsumers(
    BlockRV block) {
  LATHE_ASSIGN_OR_RETURN(std::string name, BlockName(block));
  std::vector<BufferPtr> writes = BuffersWritten(*program_.FindBlock(name));
  std::vector<BlockRV> consumers;
  for (BlockNode* b : program_.Blocks()) {
    if (b->name != name && Intersects(BuffersRead(*b), writes)) {
      consumers.push_back(NewBlockRV(b->name));
    }
  }
  return consumers;
}

absl::StatusOr<std::vector<LoopRV>> ConcreteSchedule::Split(
    LoopRV loop, const std::vector<Factor>& factors) {
  LATHE_ASSIGN_OR_RETURN(std::string name, LoopName(loop));
  std::vector<std::optional<int64_t>> values;
  for (const Factor& f : factors) {
    if (std::holds_alternative<std::monostate>(f)) {
      values.push_back(std::nullopt);
    } else {
      LATHE_ASSIGN_OR_RETURN(int64_t v, FactorValue(f));
      values.push_back(v);
    }
  }
  std::vector<std::string> new_loops;
  LATHE_RETURN_IF_ERROR(Apply([&](Program* p) -> absl::Status {
    LATHE_ASSIGN_OR_RETURN(new_loops, primitive::Split(p, name, values));
    return absl::OkStatus();
  }));
  std::vector<LoopRV> result;
  for (const std::string& n : new_loops) result.push_back(NewLoopRV(n));
  return result;
}

absl::StatusOr<LoopRV> ConcreteSchedule::Fuse(
    const std::vector<LoopRV>& loops) {
  std::vector<std::string> names;
  for (LoopRV l : loops) {
    LATHE_ASSIGN_OR_RETURN(std::string n, LoopName(l));
    names.push_back(n);
  }
  std::string fused;
  LATHE_RETURN_IF_ERROR(Apply([&](Program* p) -> absl::Status {
    LATHE_ASSIGN_OR_RETURN(fused, primitive::Fuse(p, names));
    return absl::OkStatus();
  }));
  return NewLoopRV(fused);
}

absl::Status ConcreteSchedule::Reorder(const std::vector<LoopRV>& order) {
  std::vector<std::string> names;
  for (LoopRV l : order) {
    LATHE_ASSIGN_OR_RETURN(std::string n, LoopName(l));
    names.push_back(n);
  }
  return Apply([&](Program* p) { return primitive::Reorder(p, names); });
}

absl::Status ConcreteSchedule::Parallel(LoopRV loop) {
  LATHE_ASSIGN_OR_RETURN(std::string name, LoopName(loop));
  return Apply([&](Program* p) { return primitive::Parallel(p, name); });
}

absl::Status ConcreteSchedule::Vectorize(LoopRV loop) {
  LATHE_ASSIGN_OR_RETURN(std::string name, LoopName(loop));
  return Apply([&](Program* p) { return primitive::Vectorize(p, name); });
}

absl::Status ConcreteSchedule::Unroll(LoopRV loop) {
  LATHE_ASSIGN_OR_RETURN(std::string name, LoopName(loop));
  return Apply([&](Program* p) { return primitive::Unroll(p, name); });
}

absl::Status ConcreteSchedule::Bind(LoopRV loop,
                                    const std::string& thread_axis) {
  LATHE_ASSIGN_OR_RETURN(std::string name, LoopName(loop));
  return Apply(
      [&](Program* p) { return primitive::Bind(p, name, thread_axis); });
}

absl::Status ConcreteSchedule::AnnotateLoop(LoopRV loop, const std::string& key,
                                            const AnnotationValue& value) {
  LATHE_ASSIGN_OR_RETURN(std::string name, LoopName(loop));
  return Apply(
      [&](Program* p) { return primitive::AnnotateLoop(p, name, key, value); });
}

absl::Status ConcreteSchedule::AnnotateBlock(BlockRV block,
                                             const std::string& key,
                                             const AnnotationValue& value) {
  LATHE_ASSIGN_OR_RETURN(std::string name, BlockName(block));
  return Apply([&](Program* p) {
    return primitive::AnnotateBlock(p, name, key, value);
  });
}

absl::StatusOr<BlockRV> ConcreteSchedule::CacheRead(BlockRV block,
                                                    int64_t read_index,
                                                    const std::string& scope,
                                                    const Layout& layout) {
  LATHE_ASSIGN_OR_RETURN(std::string name, BlockName(block));
  absl::StatusOr<BufferScope> parsed = ParseBufferScope(scope);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cache_read: ", parsed.status().message()));
  }
  std::string created;
  LATHE_RETURN_IF_ERROR(Apply([&](Program* p) -> absl::Status {
    LATHE_ASSIGN_OR_RETURN(
        created, primitive::CacheRead(p, name, read_index, *parsed, layout));
    return absl::OkStatus();
  }));
  return NewBlockRV(created);
}

absl::StatusOr<BlockRV> ConcreteSchedule::CacheWrite(BlockRV block,
                                                     int64_t write_index,
                                                     const std::string& scope,
                                                     const Layout& layout) {
  LATHE_ASSIGN_OR_RETURN(std::string name, BlockName(block));
  absl::StatusOr<BufferScope> parsed = ParseBufferScope(scope);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cache_write: ", parsed.status().message()));
  }
  std::string created;
  LATHE_RETURN_IF_ERROR(Apply([&](Program* p) -> absl::Status {
    LATHE_ASSIGN_OR_RETURN(
        created, primitive::CacheWrite(p, name, write_index, *parsed, layout));
    return absl::OkStatus();
  }));
  return NewBlockRV(created);
}

absl::Status ConcreteSchedule::ComputeAt(BlockRV block, LoopRV loop,
                                         bool preserve_unit_loops) {
  if (IsStayLocation(loop)) return absl::OkStatus();
  LATHE_ASSIGN_OR_RETURN(std::string b, BlockName(block));
  LATHE_ASSIGN_OR_RETURN(std::string l, LoopName(loop));
  return Apply([&](Program* p) {
    return primitive::ComputeAt(p, b, l, preserve_unit_loops);
  });
}

absl::Status ConcreteSchedule::ReverseComputeAt(BlockRV block, LoopRV loop,
                                                bool preserve_unit_loops) {
  if (IsStayLocation(loop)) return absl::OkStatus();
  LATHE_ASSIGN_OR_RETURN(std::string b, BlockName(block));
  LATHE_ASSIGN_OR_RETURN(std::string l, LoopName(loop));
  return Apply([&](Program* p) {
    return primitive::ReverseComputeAt(p, b, l, preserve_unit_loops);
  });
}

absl::Status ConcreteSchedule::ComputeInline(BlockRV block) {
  LATHE_ASSIGN_OR_RETURN(std::string name, BlockName(block));
  return Apply([&](Program* p) { return primitive::ComputeInline(p, name); });
}

absl::Status ConcreteSchedule::ReverseComputeInline(BlockRV block) {
  LATHE_ASSIGN_OR_RETURN(std::string name, BlockName(block));
  return Apply(
      [&](Program* p) { return primitive::ReverseComputeInline(p, name); });
}

absl::StatusOr<BlockRV> ConcreteSchedule::DecomposeReduction(BlockRV block,
                                                             LoopRV loop) {
  LATHE_ASSIGN_OR_RETURN(std::string b, BlockName(block));
  LATHE_ASSIGN_OR_RETURN(std::string l, LoopName(loop));
  std::string created;
  LATHE_RETURN_IF_ERROR(Apply([&](Program* p) -> absl::Status {
    LATHE_ASSIGN_OR_RETURN(created, primitive::DecomposeReduction(p, b, l));
    return absl::OkStatus();
  }));
  return NewBlockRV(created);
}

absl::StatusOr<BlockRV> ConcreteSchedule::RFactor(LoopRV loop,
                                                  int64_t factor_axis) {
  LATHE_ASSIGN_OR_RETURN(std::string l, LoopName(loop));
  std::string created;
  LATHE_RETURN_IF_ERROR(Apply([&](Program* p) -> absl::Status {
    LATHE_ASSIGN_OR_RETURN(created, primitive::RFactor(p, l, factor_axis));
    return absl::OkStatus();
  }));
  return NewBlockRV(created);
}

absl::StatusOr<std::vector<ExprRV>> ConcreteSchedule::SamplePerfectTile(
    LoopRV loop, int64_t n, int64_t max_innermost,
    std::optional<std::vector<int64_t>> decision) {
  LATHE_ASSIGN_OR_RETURN(std::string name, LoopName(loop));
  int64_t extent = program_.FindLoop(name)->extent;
  std::vector<int64_t> factors;
  if (decision.has_value()) {
    LATHE_RETURN_IF_ERROR(
        primitive::CheckPerfectTile(*decision, extent, n, max_innermost));
    factors = *decision;
  } else {
    LATHE_ASSIGN_OR_RETURN(
        factors, primitive::SamplePerfectTile(&rng_, extent, n, max_innermost));
  }
  last_decision_ = factors;
  std::vector<ExprRV> result;
  for (int64_t f : factors) result.push_back(NewExprRV(f));
  return result;
}

absl::StatusOr<ExprRV> ConcreteSchedule::SampleCategorical(
    const std::vector<int64_t>& candidates, const std::vector<double>& probs,
    std::optional<int64_t> decision) {
  int64_t index;
  if (decision.has_value()) {
    LATHE_RETURN_IF_ERROR(
        primitive::CheckCategorical(*decision, candidates, probs));
    index = *decision;
  } else {
    LATHE_ASSIGN_OR_RETURN(
        index, primitive::SampleCategorical(&rng_, candidates, probs));
  }
  last_decision_ = {index};
  return NewExprRV(candidates[index]);
}

absl::StatusOr<LoopRV> ConcreteSchedule::SampleComputeLocation(
    BlockRV block, std::optional<int64_t> decision) {
  LATHE_ASSIGN_OR_RETURN(std::string name, BlockName(block));
  // "Stay" needs no location; the location at index d only the first d + 1
  // (the list is long to compute, and replays with a decision are the
  // search's inner loop). Sampling needs them all.
  std::vector<std::string> locations;
  if (!decision.has_value() || *decision < -1) {
    locations = primitive::ComputeLocations(program_, name);
  } else if (*decision >= 0) {
    locations = primitive::ComputeLocations(program_, name,
                                            static_cast<size_t>(*decision) + 1);
  }
  int64_t index;
  if (decision.has_value()) {
    index = *decision;
    // Fewer than d + 1 locations is the whole list, for the message.
    if (index < -1 || index >= static_cast<int64_t>(locations.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sample_compute_location: decision ", index, " for block \"", name,
          "\" is not -1 or an index into its ", locations.size(),
          " locations"));
    }
  } else {
    // -1 (stay) is one more choice beside every valid location.
    index = rng_.UniformInt(static_cast<int64_t>(locations.size()) + 1) - 1;
  }
  last_decision_ = {index};
  // "Stay" is a loop handle that names no loop (see IsStayLocation).
  return NewLoopRV(index < 0 ? std::string() : locations[index]);
}

}  // namespace lathe
