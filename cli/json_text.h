// Small helpers for the JSON that commands print with --json.
//
// Commands build their JSON as text in a fixed key order (scripts and
// golden tests read it), so only quoting needs a helper.
// Tests: tests/compiler/workload/CMakeLists.txt (lathe workloads --json).
#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace lathe::cli {

// `text` as a JSON string literal, quotes included: ", \ and control
// characters escaped; other bytes (UTF-8) passed through.
std::string JsonString(absl::string_view text);

}  // namespace lathe::cli
