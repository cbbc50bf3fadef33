// What `lathe db import` holds a record to beyond what the database checks
// by itself (database/record_codec.h, ValidateRecord): its workload parses,
// is in canonical form and has that form's key; its target parses to its
// own canonical string; its trace, if any, is of this trace format and uses
// only instructions this Lathe replays; its structural hash is 16 hex
// digits. Stored, such a record would do harm: a key that is not its
// workload's makes an unreachable duplicate task, a garbage target one no
// lookup can name, and a bogus fast record becomes a task's best.
// Tests: tests/cli/db_commands_test.sh (import_checks).
#pragma once

#include "absl/status/status.h"
#include "proto/record.pb.h"

namespace lathe::cli {

// InvalidArgument naming the field at fault.
absl::Status CheckImportedRecord(const proto::Record& record);

}  // namespace lathe::cli
