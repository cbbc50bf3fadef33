// Checks the trace round trip every primitive test makes: the schedule's
// trace goes to JSON and back unchanged, and replaying it on the initial
// program gives a structurally equal program with identical trace text.
#pragma once

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/schedule/replay.h"
#include "compiler/schedule/traced_schedule.h"

namespace lathe::testing {

inline absl::Status CheckTraceRoundTrip(const TracedSchedule& sch,
                                        const Program& initial) {
  absl::StatusOr<Trace> parsed = Trace::FromJson(sch.trace().ToJson());
  if (!parsed.ok()) return parsed.status();
  if (!(*parsed == sch.trace())) {
    return absl::InternalError(absl::StrCat("trace changed through JSON:\n",
                                            sch.trace().ToText(), "\nvs\n",
                                            parsed->ToText()));
  }
  auto replayed = ReplayTrace(*parsed, initial);
  if (!replayed.ok()) return replayed.status();
  if (!StructuralEqual((*replayed)->program(), sch.program())) {
    return absl::InternalError(absl::StrCat(
        "replayed program differs:\n", PrintProgram((*replayed)->program()),
        "\nvs\n", PrintProgram(sch.program())));
  }
  if ((*replayed)->trace().ToText() != sch.trace().ToText()) {
    return absl::InternalError(absl::StrCat("replayed trace differs:\n",
                                            (*replayed)->trace().ToText(),
                                            "\nvs\n", sch.trace().ToText()));
  }
  return absl::OkStatus();
}

}  // namespace lathe::testing
