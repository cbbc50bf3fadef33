// Trace files (trace_file.h).
#include "compiler/schedule/trace_file.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/bounded_read.h"
#include "base/untrusted_text.h"
#include "compiler/schedule/trace_text.h"
#include "proto/trace_limits.h"

namespace lathe {

// A file whose first non-blank character is not '{' holds the text form;
// anything else (an empty file too) is read as JSON, with its errors.
absl::StatusOr<Trace> ReadTraceFile(const std::string& path) {
  absl::StatusOr<std::string> text =
      ReadBoundedFile(path, "trace file", kMaxTraceBytes, "kMaxTraceBytes");
  if (!text.ok()) return text.status();
  const size_t first = text->find_first_not_of(" \t\r\n");
  absl::StatusOr<Trace> trace =
      first == std::string::npos || (*text)[first] == '{'
          ? Trace::FromJson(*text)
          : ParseTraceText(*text);
  if (!trace.ok()) {
    return absl::Status(trace.status().code(),
                        absl::StrCat("trace file ", EscapedPrefix(path), ": ",
                                     trace.status().message()));
  }
  return trace;
}

}  // namespace lathe
