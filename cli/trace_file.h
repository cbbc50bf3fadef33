// A trace file given on the command line for one workload (--trace of
// lathe lower, compile and bench), read by ReadTraceFile
// (compiler/schedule/trace_file.h: JSON or text form, bounded, errors naming
// the file).
//
// A trace recorded on another workload may still replay on this one (its
// splits divide these extents too), and then schedules a program of this
// workload: allowed, with a warning on stderr, since a trace file picked by
// mistake is the likelier cause. The trace returned names this workload, so
// that what is stored of it (`lathe bench --db`) or printed says what it
// scheduled, not where it came from.
// Tests: tests/lit/cli/bad_trace_text.test (runs the built binary).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "compiler/schedule/trace.h"
#include "compiler/workload/workload.h"

namespace lathe::cli {

absl::StatusOr<Trace> LoadTraceFor(const std::string& path,
                                   const Workload& workload);

}  // namespace lathe::cli
