// How a build gets a kernel's program: the best record of
// (workload, target) in the tuning database, its trace replayed and checked
// to build the program that was measured, else the default schedule.
//
// The one code path of `lathe compile --db`, the C++ API (lathe.h) and so
// of the CMake function: each asks PlanKernel, then compiles the program
// (JIT or object). A record whose trace no longer replays, or replays to
// another program than the one measured (the compiler changed since), is
// never used: the plan falls back to the default schedule and says why, as
// for a workload the database does not know.
// Tests: tests/api/kernel_plan_test.cc.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "api/kernel_origin.h"
#include "compiler/codegen/kernel_program.h"
#include "compiler/target/target.h"
#include "compiler/workload/workload.h"
#include "database/database.h"

namespace lathe::api {

struct KernelPlan {
  Workload workload;
  Target target;
  KernelProgram program;
  KernelOrigin origin;
};

// The record's program when this build replays its trace to the hash the
// record was measured as. FailedPrecondition saying why not otherwise (the
// record is of another workload key, e.g. of the same computation with
// run-time instead of constant weights; the trace does not load, no longer
// replays, or gives another program); `lathe
// db best|top` report the same check (cli/record_lookup.h).
absl::StatusOr<KernelProgram> ReplayRecord(const proto::Record& record,
                                           const Workload& workload,
                                           const Target& target);

// How many of a task's fastest programs a build tries before the default
// schedule, when their traces no longer replay.
inline constexpr int kRecordsTried = 8;

// The program to compile for (workload, target): from the best record in
// `db` (nullptr: no database, the default schedule without a reason) under
// `matching` whose trace still replays to what it measured, trying the next
// fastest programs (up to kRecordsTried) when the best does not
// (origin.skipped_reason says why), else the default schedule with
// origin.fallback_reason set.
// Errors: a database that fails to answer (naming its file and the
// workload), and the default schedule's own errors (naming the workload).
absl::StatusOr<KernelPlan> PlanKernel(
    db::Database* db, const Workload& workload, const Target& target,
    db::TargetMatching matching = db::TargetMatching::kExact);

}  // namespace lathe::api
