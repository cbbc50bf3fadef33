// Merging databases: the CI shards of one tuning effort into one file.
//
// Every record of every source goes into `dest` with its provenance (runner,
// version, time, job); exact duplicates (equal fingerprints) are kept once.
// Jobs the destination lacks are copied. All sources commit in one
// transaction: a source that cannot be read leaves `dest` as it was. The
// sources are opened read-only and never modified.
// Tests: tests/database/merge_test.cc.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "database/database.h"

namespace lathe::db {

absl::StatusOr<CommitResult> MergeInto(Database& dest,
                                       const std::vector<std::string>& sources);

}  // namespace lathe::db
