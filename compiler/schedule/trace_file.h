// A trace read from a file: the JSON form (a file whose first non-blank
// character is '{', trace.h) or the text form of Trace::ToText
// (trace_text.h). The file is read with a bound (kMaxTraceBytes,
// base/bounded_read.h), whatever it is. Errors name the file (and for the
// text form the line and column). What `lathe lower|compile|bench --trace`
// (cli/trace_file.h) and `lathe-gpu-check --trace` read.
// Tests: tests/compiler/schedule/trace_file_test.cc.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "compiler/schedule/trace.h"

namespace lathe {

absl::StatusOr<Trace> ReadTraceFile(const std::string& path);

}  // namespace lathe
