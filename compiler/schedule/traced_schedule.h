// A schedule that records every primitive call in a trace.
//
// Each call runs the concrete primitive; when it succeeds, the call is
// appended to the trace as an instruction (failed calls leave no trace), with
// the decision of sampling calls. The instruction is the one the primitive
// builds from its instruction kind (instruction_kind.h) through
// ConcreteSchedule::Record. Replay (replay.h) runs a trace's instructions on a
// TracedSchedule of a fresh program.
// Tests: tests/compiler/schedule/instruction_kind_test.cc.
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

 protected:
  void Applied(Instruction instruction,
               std::optional<std::vector<int64_t>> decision) override;

 private:
  Trace trace_;
};

}  // namespace lathe
