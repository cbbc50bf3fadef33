#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
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
