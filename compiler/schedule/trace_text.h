// Reading the text form of a trace (Trace::ToText) back into a trace.
//
// The text form is one instruction per line,
//   r4, r5 = sample_perfect_tile(r1, n=2, max_innermost=4)  # decision: [2, 4]
//   r6, r7 = split(r1, r4, None)
//   r8 = sample_categorical(candidates=[0, 16], probs=[1.0, 1.0])
// outputs `rN` (if any) then `=`, the instruction kind, and its inputs
// (random variables `rN`, integers, `None`) followed by its attributes
// (`name=value`: an integer, a number with a point or an exponent, a quoted
// string with C escapes, or a list of integers or of numbers) in brackets.
// A `# decision: [...]` comment gives a sampling instruction's decision;
// other comments and blank lines are ignored. The text names no workload:
// the parsed trace's `workload` is empty.
//
// ParseTraceText(t.ToText()) equals t for every trace t (a list that is
// empty reads as integers, as in the JSON form).
//
// Errors (InvalidArgument) name the line and column and what was found
// there: a malformed line, an input naming an RV that is not yet defined,
// an output defined twice, an attribute given twice, a decision on an
// instruction that samples nothing, an integer out of range.
// Tests: tests/compiler/schedule/trace_text_test.cc.
#pragma once

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/schedule/trace.h"

namespace lathe {

absl::StatusOr<Trace> ParseTraceText(absl::string_view text);

}  // namespace lathe
