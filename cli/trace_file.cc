#include "cli/trace_file.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cli/shown_text.h"
#include "compiler/schedule/trace_text.h"

namespace lathe::cli {
namespace {

// A file whose first non-blank character is not '{' holds the text form;
// anything else (an empty file too) is read as JSON, with its errors.
absl::StatusOr<Trace> LoadTrace(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Trace::Load(path);  // its error names the file
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] == '{') {
    return Trace::Load(path);
  }
  absl::StatusOr<Trace> trace = ParseTraceText(text);
  if (!trace.ok()) {
    return absl::Status(
        trace.status().code(),
        absl::StrCat("trace file ", path, ": ", trace.status().message()));
  }
  return trace;
}

}  // namespace

absl::StatusOr<Trace> LoadTraceFor(const std::string& path,
                                   const Workload& workload) {
  absl::StatusOr<Trace> trace = LoadTrace(path);
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
