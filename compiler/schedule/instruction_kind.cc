#include "compiler/schedule/instruction_kind.h"

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/status_macros.h"

namespace lathe {

absl::StatusOr<int64_t> ReplayContext::Rv(size_t i) const {
  if (i >= inst.inputs.size() || inst.inputs[i].kind != TraceInput::Kind::kRV) {
    return absl::InvalidArgumentError(
        absl::StrCat(inst.kind, ": input ", i, " must be a random variable"));
  }
  auto it = rv_map_->find(inst.inputs[i].value);
  if (it == rv_map_->end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        inst.kind, ": r", inst.inputs[i].value, " is not defined"));
  }
  return it->second;
}

absl::StatusOr<BlockRV> ReplayContext::Block(size_t i) const {
  LATHE_ASSIGN_OR_RETURN(int64_t id, Rv(i));
  return BlockRV{id};
}

absl::StatusOr<LoopRV> ReplayContext::Loop(size_t i) const {
  LATHE_ASSIGN_OR_RETURN(int64_t id, Rv(i));
  return LoopRV{id};
}

absl::StatusOr<std::vector<LoopRV>> ReplayContext::AllLoops() const {
  std::vector<LoopRV> loops;
  for (size_t i = 0; i < inst.inputs.size(); ++i) {
    LATHE_ASSIGN_OR_RETURN(LoopRV l, Loop(i));
    loops.push_back(l);
  }
  return loops;
}

absl::StatusOr<Factor> ReplayContext::FactorAt(size_t i) const {
  const TraceInput& in = inst.inputs[i];
  if (in.kind == TraceInput::Kind::kInt) return Factor(in.value);
  if (in.kind == TraceInput::Kind::kNone) return Factor(std::monostate{});
  LATHE_ASSIGN_OR_RETURN(int64_t id, Rv(i));
  return Factor(ExprRV{id});
}

absl::StatusOr<AttrValue> ReplayContext::Attr(size_t i) const {
  return inst.Attr(attr_names_.at(i));
}
absl::StatusOr<int64_t> ReplayContext::IntAttr(size_t i) const {
  return inst.IntAttr(attr_names_.at(i));
}
absl::StatusOr<std::string> ReplayContext::StringAttr(size_t i) const {
  return inst.StringAttr(attr_names_.at(i));
}
absl::StatusOr<std::vector<int64_t>> ReplayContext::IntsAttr(size_t i) const {
  return inst.IntsAttr(attr_names_.at(i));
}
absl::StatusOr<std::vector<double>> ReplayContext::FloatsAttr(size_t i) const {
  return inst.FloatsAttr(attr_names_.at(i));
}

absl::Status ReplayContext::Outputs(const std::vector<int64_t>& ids) const {
  if (ids.size() != inst.outputs.size()) {
    return absl::FailedPreconditionError(
        absl::StrCat(inst.kind, ": produced ", ids.size(),
                     " results where the trace has ", inst.outputs.size()));
  }
  for (size_t i = 0; i < ids.size(); ++i) (*rv_map_)[inst.outputs[i]] = ids[i];
  return absl::OkStatus();
}

absl::StatusOr<const InstructionKind*> FindInstructionKind(
    const std::string& name) {
  static const auto* const by_name = [] {
    auto* map = new absl::flat_hash_map<std::string, const InstructionKind*>;
    for (const InstructionKind* kind : InstructionKinds()) {
      LATHE_CHECK(map->emplace(kind->name, kind).second,
                  "two instruction kinds named ", kind->name);
    }
    return map;
  }();
  auto it = by_name->find(name);
  if (it == by_name->end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown instruction \"", name, "\""));
  }
  return it->second;
}

TraceInput InputOf(BlockRV block) { return TraceInput::RV(block.id); }
TraceInput InputOf(LoopRV loop) { return TraceInput::RV(loop.id); }
TraceInput InputOf(const Factor& factor) {
  if (const auto* c = std::get_if<int64_t>(&factor)) return TraceInput::Int(*c);
  if (const auto* rv = std::get_if<ExprRV>(&factor))
    return TraceInput::RV(rv->id);
  return TraceInput::None();
}

}  // namespace lathe
