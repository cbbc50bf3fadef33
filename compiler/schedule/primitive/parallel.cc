#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/schedule/analysis/data_parallel.h"
#include "compiler/schedule/instruction_kind.h"
#include "compiler/schedule/primitive/loop_kind.h"

namespace lathe::primitive {

absl::Status Parallel(Program* program, const std::string& loop_name) {
  ForNode* loop = program->FindLoop(loop_name);
  if (loop == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("parallel: no loop named \"", loop_name, "\""));
  }
  auto fail = [&](const std::string& why) {
    return absl::FailedPreconditionError(
        absl::StrCat("parallel: loop \"", loop_name, "\" ", why));
  };
  // 1. Its kind: serial becomes parallel, parallel stays (idempotent).
  if (loop->for_kind == ForKind::kParallel) return absl::OkStatus();
  if (loop->for_kind != ForKind::kSerial) {
    return fail(loop->for_kind == ForKind::kThreadBinding
                    ? absl::StrCat("is already bound to ", loop->thread_tag)
                    : absl::StrCat("is already ", ForKindName(loop->for_kind)));
  }
  // 2. One level of CPU parallelism, and none inside a GPU nest.
  for (const ForNode* other : LoopsNestedWith(*program, *loop)) {
    if (other->for_kind == ForKind::kParallel) {
      return fail(absl::StrCat("is nested with parallel loop \"",
                               other->var->name,
                               "\" (one level of parallelism)"));
    }
    if (other->for_kind == ForKind::kThreadBinding) {
      return fail(absl::StrCat("is nested with loop \"", other->var->name,
                               "\" bound to ", other->thread_tag));
    }
  }
  // 3. Its iterations are independent.
  LATHE_RETURN_IF_ERROR(CheckDataParallel(*program, *loop, "parallel"));
  loop->for_kind = ForKind::kParallel;
  return absl::OkStatus();
}

}  // namespace lathe::primitive

namespace lathe {

const InstructionKind& ParallelInstruction() {
  // Input: the loop.
  static const auto* const kind =
      new InstructionKind{"parallel",
                          {},
                          /*samples=*/false,
                          [](const ReplayContext& c) -> absl::Status {
                            LATHE_ASSIGN_OR_RETURN(LoopRV loop, c.Loop(0));
                            return c.sch->Parallel(loop);
                          }};
  return *kind;
}

absl::Status ConcreteSchedule::Parallel(LoopRV loop) {
  LATHE_ASSIGN_OR_RETURN(std::string name, LoopName(loop));
  LATHE_RETURN_IF_ERROR(
      Apply([&](Program* p) { return primitive::Parallel(p, name); }));
  Record(ParallelInstruction(), {InputOf(loop)}, {}, {});
  return absl::OkStatus();
}

}  // namespace lathe
