// Stored or reported text as a terminal line shows it.
// Tests: tests/cli/db_commands_test.sh (db best, db list) and
// tests/cli/tune_commands_test.sh (jobs, runners).
#pragma once

#include <string>

namespace lathe::cli {

// A stored field (a runner's name, a job, a device, an error, a workload
// read from a database) with control characters escaped ("\x1b"), so that a
// record imported or reported by anyone cannot move the cursor, clear the
// screen or forge a line of output; bytes that are not well-formed UTF-8
// and C1 controls are escaped too, and a field is shown to at most 64 KiB
// (base/untrusted_text.h).
std::string Shown(const std::string& field);

}  // namespace lathe::cli
