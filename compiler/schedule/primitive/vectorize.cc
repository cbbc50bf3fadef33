#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/schedule/analysis/data_parallel.h"
#include "compiler/schedule/instruction_kind.h"
#include "compiler/schedule/primitive/loop_kind.h"

namespace lathe::primitive {

absl::Status Vectorize(Program* program, const std::string& loop_name) {
  ForNode* loop = program->FindLoop(loop_name);
  if (loop == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("vectorize: no loop named \"", loop_name, "\""));
  }
  auto fail = [&](const std::string& why) {
    return absl::FailedPreconditionError(
        absl::StrCat("vectorize: loop \"", loop_name, "\" ", why));
  };
  // 1. Its kind: serial becomes vectorized, vectorized stays (idempotent).
  if (loop->for_kind == ForKind::kVectorized) return absl::OkStatus();
  if (loop->for_kind != ForKind::kSerial) {
    return fail(loop->for_kind == ForKind::kThreadBinding
                    ? absl::StrCat("is already bound to ", loop->thread_tag)
                    : absl::StrCat("is already ", ForKindName(loop->for_kind)));
  }
  if (loop->extent < 1) return fail(absl::StrCat("has extent ", loop->extent));
  // 2. Innermost: no loop below, in its nest or inside the blocks below
  // (code generation splits long vector loops, so any extent works).
  const ForNode* inner = nullptr;
  VisitStmts(loop->body.get(), [&](const StmtNode* s) {
    if (inner == nullptr && s->kind == StmtKind::kFor) inner = s->as<ForNode>();
    return inner == nullptr;
  });
  if (inner != nullptr) {
    return fail(absl::StrCat("is not innermost: loop \"", inner->var->name,
                             "\" is below it"));
  }
  // 3. Its iterations are independent.
  LATHE_RETURN_IF_ERROR(CheckDataParallel(*program, *loop, "vectorize"));
  loop->for_kind = ForKind::kVectorized;
  return absl::OkStatus();
}

}  // namespace lathe::primitive

namespace lathe {

const InstructionKind& VectorizeInstruction() {
  // Input: the loop.
  static const auto* const kind =
      new InstructionKind{"vectorize",
                          {},
                          /*samples=*/false,
                          [](const ReplayContext& c) -> absl::Status {
                            LATHE_ASSIGN_OR_RETURN(LoopRV loop, c.Loop(0));
                            return c.sch->Vectorize(loop);
                          }};
  return *kind;
}

absl::Status ConcreteSchedule::Vectorize(LoopRV loop) {
  LATHE_ASSIGN_OR_RETURN(std::string name, LoopName(loop));
  LATHE_RETURN_IF_ERROR(
      Apply([&](Program* p) { return primitive::Vectorize(p, name); }));
  Record(VectorizeInstruction(), {InputOf(loop)}, {}, {});
  return absl::OkStatus();
}

}  // namespace lathe
