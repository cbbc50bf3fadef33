// When `lathe tune` counts a task as tuned already, so that a model's tasks
// (and a --workloads-file's) are not tuned again unless --retune asks.
//
// A task (workload, target) is tuned in a database when the database holds,
// for the workload's key and exactly that target string, at least one
// MEASURE_OK record of a searched program: one whose structural hash is not
// the default schedule's (MakeKernelProgram(workload, nullptr, target)).
// The default schedule's own record, which `lathe tune` measures for
// comparison and `lathe bench --db` may add, does not make a task tuned; a
// record of a hand-written trace does. The provenance text of a record
// (its runner, e.g. "local (default schedule)") is not consulted: the
// program itself says whether it is the default.
// Tests: tests/cli/tune_model_test.sh.
#pragma once

#include <optional>

#include "absl/status/statusor.h"
#include "compiler/target/target.h"
#include "compiler/workload/workload.h"
#include "database/database.h"

namespace lathe::cli {

// Errors: the default schedule's (naming the workload) and the database's.
absl::StatusOr<bool> IsTunedInDatabase(const Workload& workload,
                                       const Target& target, db::Database& db);

// The fastest OK median of (workload, target) in the database, by the
// latest measurement of each program (Database::Best); nullopt when none.
absl::StatusOr<std::optional<double>> BestMedianInDatabase(
    const Workload& workload, const Target& target, db::Database& db);

}  // namespace lathe::cli
