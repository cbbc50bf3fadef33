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
#include "database/jsonl.h"

namespace lathe::db {

// Every record passes ValidateRecord (in the commit) and, when given,
// `check` (the same one `db import` applies: jsonl.h, RecordCheck); the
// first that fails, named by its source and row id, leaves `dest` as it
// was.
absl::StatusOr<CommitResult> MergeInto(Database& dest,
                                       const std::vector<std::string>& sources,
                                       const RecordCheck& check = nullptr);

}  // namespace lathe::db
