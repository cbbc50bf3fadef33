// Instruction kinds: the registry of what a trace may contain.
//
// Each schedule primitive declares its instruction kind once, in its own file
// (compiler/schedule/primitive/<name>.cc; the queries get_block, get_loops,
// get_producers and get_consumers in schedule.cc): the name written in
// traces, its attribute names in the order they are recorded, whether it
// samples (carries a decision), and how it replays. The same file defines the
// primitive's ConcreteSchedule method, which records each successful call
// through ConcreteSchedule::Record with that kind, so a name or an attribute
// name is spelled in one place.
//
// InstructionKinds() is an explicit list (instruction_kinds.cc, which also
// declares each kind's accessor), not self-registration: objects of a static
// library that nothing references are dropped by the linker, and their
// registrations with them.
//
// Replay (replay.h) looks kinds up by name; an unknown name is refused.
// Tests: tests/compiler/schedule/instruction_kind_test.cc.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/schedule/schedule.h"
#include "compiler/schedule/trace.h"

namespace lathe {

// What a replay function sees: the instruction, its inputs mapped to handles
// of the schedule being built, and the decision to use (if any).
class ReplayContext {
 public:
  ReplayContext(ConcreteSchedule* sch, const Instruction& inst,
                const std::vector<std::string>& attr_names,
                std::map<int64_t, int64_t>* rv_map,
                const std::vector<int64_t>* decision)
      : sch(sch),
        inst(inst),
        decision(decision),
        attr_names_(attr_names),
        rv_map_(rv_map) {}

  ConcreteSchedule* sch;
  const Instruction& inst;
  // The decision for this instruction, or null: sample afresh.
  const std::vector<int64_t>* decision;

  // Input i as a handle; an error unless it is a defined random variable.
  absl::StatusOr<int64_t> Rv(size_t i) const;
  absl::StatusOr<BlockRV> Block(size_t i) const;
  absl::StatusOr<LoopRV> Loop(size_t i) const;
  // Every input as a loop.
  absl::StatusOr<std::vector<LoopRV>> AllLoops() const;
  // Input i as a split factor: a constant, None (inferred) or a value.
  absl::StatusOr<Factor> FactorAt(size_t i) const;

  // The kind's attribute number i (InstructionKind::attrs[i]), by type.
  absl::StatusOr<AttrValue> Attr(size_t i) const;
  absl::StatusOr<int64_t> IntAttr(size_t i) const;
  absl::StatusOr<std::string> StringAttr(size_t i) const;
  absl::StatusOr<std::vector<int64_t>> IntsAttr(size_t i) const;
  absl::StatusOr<std::vector<double>> FloatsAttr(size_t i) const;

  // Maps the instruction's recorded outputs to the new handles; an error
  // when their number differs.
  absl::Status Outputs(const std::vector<int64_t>& ids) const;

 private:
  const std::vector<std::string>& attr_names_;
  std::map<int64_t, int64_t>* rv_map_;
};

struct InstructionKind {
  using ReplayFn = absl::Status (*)(const ReplayContext&);

  std::string name;
  // Attribute names, in the order they are recorded. An instruction carries
  // each of them, except attributes recorded as absent (nullopt in Record:
  // the layout of cache_read and cache_write when it is the identity).
  std::vector<std::string> attrs;
  // Whether the instruction samples: its decision is stored in the trace.
  bool samples = false;
  // Calls the schedule's method with the instruction's inputs and
  // attributes and maps its outputs (ReplayContext::Outputs).
  ReplayFn replay = nullptr;
};

// Every instruction kind, each once, in no particular order.
const std::vector<const InstructionKind*>& InstructionKinds();

// The kind named `name`; InvalidArgument naming it when there is none.
absl::StatusOr<const InstructionKind*> FindInstructionKind(
    const std::string& name);

// Inputs and outputs of a recorded call.
TraceInput InputOf(BlockRV block);
TraceInput InputOf(LoopRV loop);
TraceInput InputOf(const Factor& factor);  // None, a constant or a value
template <typename RV>
std::vector<TraceInput> InputsOf(const std::vector<RV>& rvs) {
  std::vector<TraceInput> inputs;
  for (const RV& rv : rvs) inputs.push_back(InputOf(rv));
  return inputs;
}
template <typename RV>
std::vector<int64_t> IdsOf(const std::vector<RV>& rvs) {
  std::vector<int64_t> ids;
  for (const RV& rv : rvs) ids.push_back(rv.id);
  return ids;
}

}  // namespace lathe
