// Database lookups that check the answer still builds the program that was
// measured: a record replays to the program it was measured as.
//
// The database stores a trace and the structural hash of the program it gave
// when measured. This build of Lathe replays the trace; when the hash
// differs (the compiler changed what a primitive does) or the trace no longer
// replays, the lookup says so instead of handing back another program.
// Used by `lathe db best|top`; `lathe compile --db` and the C++ API make
// the same check (api/kernel_plan.h: ReplayRecord).
// Tests: tests/api/record_lookup_test.cc.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/target/target.h"
#include "compiler/workload/workload.h"
#include "database/database.h"

namespace lathe::api {

struct CheckedMatch {
  db::Match match;
  // True when this build replays the record's trace to the recorded hash.
  bool replays = false;
  // Why not, when it does not: the replay error, or both hashes.
  std::string replay_problem;
};

// Replays `record`'s trace on `workload` for `target` and compares hashes.
CheckedMatch CheckReplay(db::Match match, const Workload& workload,
                         const Target& target);

// The k fastest records of (workload, target), each checked.
absl::StatusOr<std::vector<CheckedMatch>> LookupChecked(
    db::Database& db, const Workload& workload, const Target& target, int k,
    db::TargetMatching matching);

}  // namespace lathe::api
