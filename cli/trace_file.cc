#include "cli/trace_file.h"

#include <cstdio>
#include <string>

#include "cli/shown_text.h"
#include "compiler/schedule/trace_file.h"

namespace lathe::cli {

absl::StatusOr<Trace> LoadTraceFor(const std::string& path,
                                   const Workload& workload) {
  absl::StatusOr<Trace> trace = ReadTraceFile(path);
  if (!trace.ok()) return trace.status();
  const std::string canonical = workload.CanonicalForm();
  if (!trace->workload.empty() && trace->workload != canonical) {
    std::fprintf(
        stderr, "lathe: warning: trace %s was recorded on %s, not %s\n",
        path.c_str(), Shown(trace->workload).c_str(), canonical.c_str());
  }
  trace->workload = canonical;
  return trace;
}

}  // namespace lathe::cli
