#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/schedule/instruction_kind.h"
#include "compiler/schedule/primitive/loop_kind.h"

namespace lathe::primitive {

absl::Status Unroll(Program* program, const std::string& loop_name) {
  ForNode* loop = program->FindLoop(loop_name);
  if (loop == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("unroll: no loop named \"", loop_name, "\""));
  }
  // An unrolled loop runs in serial order, so any serial loop may be
  // unrolled; a loop that already runs concurrently keeps its kind.
  if (loop->for_kind != ForKind::kSerial &&
      loop->for_kind != ForKind::kUnrolled) {
    return absl::FailedPreconditionError(
        absl::StrCat("unroll: loop \"", loop_name, "\" is already ",
                     loop->for_kind == ForKind::kThreadBinding
                         ? absl::StrCat("bound to ", loop->thread_tag)
                         : std::string(ForKindName(loop->for_kind))));
  }
  loop->for_kind = ForKind::kUnrolled;
  return absl::OkStatus();
}

}  // namespace lathe::primitive

namespace lathe {

const InstructionKind& UnrollInstruction() {
  // Input: the loop.
  static const auto* const kind =
      new InstructionKind{"unroll",
                          {},
                          /*samples=*/false,
                          [](const ReplayContext& c) -> absl::Status {
                            LATHE_ASSIGN_OR_RETURN(LoopRV loop, c.Loop(0));
                            return c.sch->Unroll(loop);
                          }};
  return *kind;
}

absl::Status ConcreteSchedule::Unroll(LoopRV loop) {
  LATHE_ASSIGN_OR_RETURN(std::string name, LoopName(loop));
  LATHE_RETURN_IF_ERROR(
      Apply([&](Program* p) { return primitive::Unroll(p, name); }));
  Record(UnrollInstruction(), {InputOf(loop)}, {}, {});
  return absl::OkStatus();
}

}  // namespace lathe
