// Merging databases: the CI shards of one tuning effort into one file.
//
// Every record of every source goes into `dest` with its provenance (runner,
// version, time, job); exact duplicates (equal fingerprints) are kept once.
// Jobs the destination lacks are copied. So are the sources' batch rows
// (the cost model's accuracy per batch that `lathe report` draws), those of
// tasks with records (Database::ForEachBatch), each source's after its
// records: numbered anew in `dest`, each job's after the batches `dest`
// holds of it, in the source's order, and exact copies of rows `dest` holds
// skipped (Database::CommitFrom), so merging a source twice adds nothing. A
// source older than schema version 4 has none. All sources commit in one
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
