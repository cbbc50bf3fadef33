#include "compiler/lower/pipeline.h"

#include <cstdio>
#include <functional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/ir/printer.h"
#include "compiler/lower/lower_blocks.h"
#include "compiler/lower/lowered_form.h"
#include "compiler/lower/remove_no_ops.h"
#include "compiler/lower/simplify_stmts.h"

namespace lathe {

absl::StatusOr<Program> LowerProgram(const Program& scheduled,
                                     const LowerOptions& options,
                                     LowerReport* report) {
  LowerReport ignored;
  if (report == nullptr) report = &ignored;
  struct Pass {
    const char* name;
    bool enabled;
    std::function<absl::Status(Program*)> run;
  };
  // The passes, in order.
  const std::vector<Pass> passes = {
      {"lower_blocks", true, LowerBlocks},
      {"compact_buffers", options.compact_buffers,
       [report](Program* p) { return CompactBuffers(p, &report->compact); }},
      {"remove_no_ops", options.remove_no_ops, RemoveNoOps},
      {"simplify", true, SimplifyStmts},
  };
  Program program = scheduled;
  for (const Pass& pass : passes) {
    if (!pass.enabled) continue;
    absl::Status status = pass.run(&program);
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat("lower: pass ", pass.name,
                                       " failed: ", status.message()));
    }
    if (options.print_after_each) {
      std::string text =
          absl::StrCat("# after ", pass.name, "\n", PrintProgram(program));
      if (options.print_to != nullptr) {
        absl::StrAppend(options.print_to, text);
      } else {
        std::fputs(text.c_str(), stderr);
      }
    }
  }
  LATHE_RETURN_IF_ERROR(VerifyLowered(program));
  return program;
}

}  // namespace lathe
