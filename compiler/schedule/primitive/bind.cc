#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/schedule/analysis/data_parallel.h"
#include "compiler/schedule/instruction_kind.h"
#include "compiler/schedule/primitive/loop_kind.h"

namespace lathe::primitive {

absl::Status Bind(Program* program, const std::string& loop_name,
                  const std::string& thread_axis) {
  static const std::set<std::string>* const kAxes = new std::set<std::string>{
      "blockIdx.x",  "blockIdx.y",  "blockIdx.z", "threadIdx.x",
      "threadIdx.y", "threadIdx.z", "vthread"};
  if (!kAxes->count(thread_axis)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bind: unknown thread axis \"", thread_axis,
        "\"; expected blockIdx.x|y|z, threadIdx.x|y|z or vthread"));
  }
  ForNode* loop = program->FindLoop(loop_name);
  if (loop == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("bind: no loop named \"", loop_name, "\""));
  }
  auto fail = [&](const std::string& why) {
    return absl::FailedPreconditionError(
        absl::StrCat("bind: loop \"", loop_name, "\" ", why));
  };
  // 1. Its kind: serial becomes bound; binding again to the same axis is a
  // no-op, to another axis an error.
  if (loop->for_kind == ForKind::kThreadBinding) {
    if (loop->thread_tag == thread_axis) return absl::OkStatus();
    return fail(absl::StrCat("is already bound to ", loop->thread_tag));
  }
  if (loop->for_kind != ForKind::kSerial) {
    return fail(absl::StrCat("is already ", ForKindName(loop->for_kind)));
  }
  // 2. One loop per axis in a nest; no CPU parallelism in a GPU nest.
  for (const ForNode* other : LoopsNestedWith(*program, *loop)) {
    if (other->for_kind == ForKind::kThreadBinding &&
        other->thread_tag == thread_axis) {
      return fail(absl::StrCat("cannot be bound to ", thread_axis, ": loop \"",
                               other->var->name,
                               "\" in its nest is bound to it"));
    }
    if (other->for_kind == ForKind::kParallel) {
      return fail(absl::StrCat("is nested with parallel loop \"",
                               other->var->name, "\""));
    }
  }
  // 3. Its iterations are independent (reductions included: a reduction
  // loop cannot be bound).
  LATHE_RETURN_IF_ERROR(CheckDataParallel(*program, *loop, "bind"));
  loop->for_kind = ForKind::kThreadBinding;
  loop->thread_tag = thread_axis;
  return absl::OkStatus();
}

}  // namespace lathe::primitive

namespace lathe {

const InstructionKind& BindInstruction() {
  // Input: the loop. Attribute: the thread axis.
  static const auto* const kind = new InstructionKind{
      "bind",
      {"thread_axis"},
      /*samples=*/false,
      [](const ReplayContext& c) -> absl::Status {
        LATHE_ASSIGN_OR_RETURN(LoopRV loop, c.Loop(0));
        LATHE_ASSIGN_OR_RETURN(std::string axis, c.StringAttr(0));
        return c.sch->Bind(loop, axis);
      }};
  return *kind;
}

absl::Status ConcreteSchedule::Bind(LoopRV loop,
                                    const std::string& thread_axis) {
  LATHE_ASSIGN_OR_RETURN(std::string name, LoopName(loop));
  LATHE_RETURN_IF_ERROR(
      Apply([&](Program* p) { return primitive::Bind(p, name, thread_axis); }));
  Record(BindInstruction(), {InputOf(loop)}, {thread_axis}, {});
  return absl::OkStatus();
}

}  // namespace lathe
