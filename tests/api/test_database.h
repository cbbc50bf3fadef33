// Test helper: a temporary tuning database holding records made from real
// traces, for the tests of api/ (kernel_plan_test.cc, lathe_test.cc).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "compiler/codegen/kernel_program.h"
#include "compiler/schedule/traced_schedule.h"
#include "compiler/target/target.h"
#include "compiler/target/target_info.h"
#include "compiler/workload/spec.h"
#include "database/database.h"
#include "gtest/gtest.h"
#include "tests/support/temp_folder.h"
#include "tuner/search/measurement_record.h"

namespace lathe::api {

// Temporary folders: tests/support/temp_folder.h.
using ::lathe::test_support::TempFolder;

// A record of `spec` on `target` measured at `median_s`, scheduled by the
// default schedule's trace; `hash` overrides the program it claims.
inline proto::Record RecordOf(const std::string& spec, const Target& target,
                              double median_s, const std::string& hash = "") {
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
  EXPECT_TRUE(workload.ok()) << workload.status();
  absl::StatusOr<KernelProgram> program =
      MakeKernelProgram(*workload, nullptr, target);
  EXPECT_TRUE(program.ok()) << program.status();
  proto::MeasureResult result;
  result.set_status(proto::MEASURE_OK);
  for (int i = 0; i < 3; ++i) result.add_times_s(median_s);
  result.set_structural_hash(hash.empty() ? program->structural_hash : hash);
  return tuner::MeasurementRecord(
      *workload, TargetInfoOf(target), program->trace,
      hash.empty() ? program->structural_hash : hash, result,
      {"test", "test", "job-a"});
}

// A record of `spec`, a matmul C[i,j] += A[i,k] * B[k,j] (block `block`)
// with N a multiple of 16, whose trace packs B at the root into
// [N/16][K][16], marked as the layout-free pre-pack when B is a constant.
inline proto::Record PackingRecord(const std::string& spec,
                                   const Target& target,
                                   const std::string& block_name = "C") {
  Workload workload = ParseWorkloadSpec(spec).value();
  TracedSchedule sch(workload.InitialProgram().value());
  BlockRV block = sch.GetBlock(block_name).value();
  BlockRV pack =
      sch.CacheRead(block, 1, "global", Layout{{1, 16}, {1, 0, 2}}).value();
  if (workload.IsLayoutFreeInput(1)) {
    EXPECT_TRUE(
        sch.AnnotateBlock(pack, kLayoutFreePackAnnotation, int64_t{1}).ok());
  }
  Trace trace = sch.trace();
  trace.workload = workload.CanonicalForm();
  const std::string hash =
      MakeKernelProgram(workload, &trace, target).value().structural_hash;
  proto::MeasureResult result;
  result.set_status(proto::MEASURE_OK);
  for (int i = 0; i < 3; ++i) result.add_times_s(1e-3);
  result.set_structural_hash(hash);
  return tuner::MeasurementRecord(workload, TargetInfoOf(target), trace, hash,
                                  result, {"test", "test", "job-a"});
}

// Creates `path` with the records.
inline void CreateDatabase(const std::string& path,
                           const std::vector<proto::Record>& records) {
  db::OpenOptions open;
  open.mode = db::OpenOptions::Mode::kCreate;
  open.durable = false;
  absl::StatusOr<std::unique_ptr<db::Database>> db =
      db::Database::Open(path, open);
  ASSERT_TRUE(db.ok()) << db.status();
  absl::StatusOr<db::CommitResult> committed = (*db)->Commit(records);
  ASSERT_TRUE(committed.ok()) << committed.status();
}

// `path` opened for lookups, as builds open it; null (with a test failure)
// when it does not open.
inline std::unique_ptr<db::Database> OpenReadOnly(const std::string& path) {
  db::OpenOptions open;
  open.mode = db::OpenOptions::Mode::kReadOnly;
  absl::StatusOr<std::unique_ptr<db::Database>> db =
      db::Database::Open(path, open);
  EXPECT_TRUE(db.ok()) << db.status();
  return db.ok() ? *std::move(db) : nullptr;
}

}  // namespace lathe::api
