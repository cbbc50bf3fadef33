// Tests of api/kernel_plan.h: which program a build gets from the database.
#include "api/kernel_plan.h"

#include <memory>
#include <string>

#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/prepack_split.h"
#include "gtest/gtest.h"
#include "tests/api/test_database.h"

namespace lathe::api {
namespace {

constexpr char kSpec[] = "matmul:M=16,N=24,K=8";

Workload Spec(const std::string& spec) { return *ParseWorkloadSpec(spec); }

// The same matmul with B a constant (layout-free) and with B given at run
// time: two tasks, two keys.
constexpr char kLayoutFree[] =
    "custom:input A[16,8]; input B[8,48] const; "
    "C[i,j] += A[i,k] * B[k,j]|i=16,j=48,k=8";
constexpr char kRunTime[] =
    "custom:input A[16,8]; input B[8,48]; "
    "C[i,j] += A[i,k] * B[k,j]|i=16,j=48,k=8";

// A packed-weight kernel is never handed run-time weights it was not packed
// for: the record of the layout-free task answers only that task (its plan
// splits off the pre-pack), and the record of the run-time task only that
// one (its plan packs inside the call).
TEST(PlanKernel, LayoutFreeAndRunTimeWeightRecordsNeverMix) {
  TempFolder dir;
  const Target target = HostTarget(1);
  for (const bool layout_free_recorded : {true, false}) {
    SCOPED_TRACE(layout_free_recorded ? "layout-free record"
                                      : "run-time record");
    const std::string path =
        dir.path() + (layout_free_recorded ? "/free.db" : "/runtime.db");
    CreateDatabase(
        path,
        {PackingRecord(layout_free_recorded ? kLayoutFree : kRunTime, target)});
    std::unique_ptr<db::Database> db = OpenReadOnly(path);
    ASSERT_NE(db, nullptr);
    absl::StatusOr<KernelPlan> free =
        PlanKernel(db.get(), Spec(kLayoutFree), target);
    absl::StatusOr<KernelPlan> runtime =
        PlanKernel(db.get(), Spec(kRunTime), target);
    ASSERT_TRUE(free.ok() && runtime.ok());
    EXPECT_EQ(free->origin.tuned(), layout_free_recorded);
    EXPECT_EQ(runtime->origin.tuned(), !layout_free_recorded);
    const KernelPlan& tuned = layout_free_recorded ? *free : *runtime;
    absl::StatusOr<PrepackSplit> split = SplitPrepack(tuned.program.scheduled);
    ASSERT_TRUE(split.ok()) << split.status();
    EXPECT_EQ(split->packed.size(), layout_free_recorded ? 1u : 0u);
    // Even handed the other task's record directly, the replay refuses it.
    const proto::Record recorded =
        PackingRecord(layout_free_recorded ? kLayoutFree : kRunTime, target);
    absl::StatusOr<KernelProgram> mixed = ReplayRecord(
        recorded, Spec(layout_free_recorded ? kRunTime : kLayoutFree), target);
    EXPECT_EQ(mixed.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_NE(mixed.status().message().find("another workload"),
              std::string::npos)
        << mixed.status();
  }
}

TEST(PlanKernel, UsesTheFastestRecordThatReplays) {
  TempFolder dir;
  const Target target = HostTarget(1);
  const std::string path = dir.path() + "/t.db";
  CreateDatabase(
      path, {RecordOf(kSpec, target, 2e-3), RecordOf(kSpec, target, 1e-3)});
  std::unique_ptr<db::Database> db = OpenReadOnly(path);
  ASSERT_NE(db, nullptr);
  absl::StatusOr<KernelPlan> plan = PlanKernel(db.get(), Spec(kSpec), target);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->origin.source, KernelSource::kDatabase);
  EXPECT_TRUE(plan->origin.tuned());
  EXPECT_EQ(plan->origin.median_s, 1e-3);
  EXPECT_GT(plan->origin.record_id, 0);
  EXPECT_EQ(plan->origin.job, "job-a");
  EXPECT_TRUE(plan->origin.exact_target);
  EXPECT_EQ(plan->origin.structural_hash, plan->program.structural_hash);
  EXPECT_FALSE(
      plan->program.default_schedule);  // replayed from the record's trace
  EXPECT_TRUE(plan->origin.fallback_reason.empty());
}

TEST(PlanKernel, FallsBackToTheDefaultNamingTheWorkloadAndDatabase) {
  TempFolder dir;
  const Target target = HostTarget(1);
  const std::string path = dir.path() + "/t.db";
  CreateDatabase(path, {RecordOf(kSpec, target, 1e-3)});
  std::unique_ptr<db::Database> db = OpenReadOnly(path);
  ASSERT_NE(db, nullptr);
  absl::StatusOr<KernelPlan> plan =
      PlanKernel(db.get(), Spec("matmul:M=8,N=8,K=8"), target);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->origin.source, KernelSource::kDefault);
  EXPECT_TRUE(plan->program.default_schedule);
  EXPECT_NE(plan->origin.fallback_reason.find("no record of matmul:"),
            std::string::npos)
      << plan->origin.fallback_reason;
  EXPECT_NE(plan->origin.fallback_reason.find(path), std::string::npos);
}

TEST(PlanKernel, ExactTargetsUnlessCompatibleAsked) {
  TempFolder dir;
  const std::string path = dir.path() + "/t.db";
  CreateDatabase(path, {RecordOf(kSpec, HostTarget(1), 1e-3)});
  std::unique_ptr<db::Database> db = OpenReadOnly(path);
  ASSERT_NE(db, nullptr);
  absl::StatusOr<KernelPlan> exact =
      PlanKernel(db.get(), Spec(kSpec), HostTarget(2));
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_FALSE(exact->origin.tuned());
  absl::StatusOr<KernelPlan> compatible = PlanKernel(
      db.get(), Spec(kSpec), HostTarget(2), db::TargetMatching::kCompatible);
  ASSERT_TRUE(compatible.ok()) << compatible.status();
  EXPECT_TRUE(compatible->origin.tuned());
  EXPECT_FALSE(compatible->origin.exact_target);
  EXPECT_FALSE(compatible->origin.difference.empty());
  EXPECT_EQ(compatible->target.num_threads, 2);  // built for what was asked
}

TEST(PlanKernel, ARecordThatReplaysToAnotherProgramIsAMiss) {
  TempFolder dir;
  const Target target = HostTarget(1);
  const std::string path = dir.path() + "/t.db";
  CreateDatabase(path,
                 {RecordOf(kSpec, target, 1e-3, /*hash=*/"00000000deadbeef")});
  std::unique_ptr<db::Database> db = OpenReadOnly(path);
  ASSERT_NE(db, nullptr);
  absl::StatusOr<KernelPlan> plan = PlanKernel(db.get(), Spec(kSpec), target);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(plan->origin.tuned());
  EXPECT_TRUE(plan->program.default_schedule);
  EXPECT_NE(plan->origin.fallback_reason.find("measured as 00000000deadbeef"),
            std::string::npos)
      << plan->origin.fallback_reason;
}

// A stale fastest record (its trace builds another program now) does not
// demote the build to the default schedule when a slower record replays.
TEST(PlanKernel, PassesOverAStaleFastestRecordToOneThatReplays) {
  TempFolder dir;
  const Target target = HostTarget(1);
  const std::string path = dir.path() + "/t.db";
  CreateDatabase(path,
                 {RecordOf(kSpec, target, 2e-3),
                  RecordOf(kSpec, target, 1e-3, /*hash=*/"00000000deadbeef")});
  std::unique_ptr<db::Database> db = OpenReadOnly(path);
  ASSERT_NE(db, nullptr);
  absl::StatusOr<KernelPlan> plan = PlanKernel(db.get(), Spec(kSpec), target);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->origin.tuned());
  EXPECT_EQ(plan->origin.median_s, 2e-3);
  EXPECT_NE(plan->origin.skipped_reason.find("measured as 00000000deadbeef"),
            std::string::npos)
      << plan->origin.skipped_reason;
  EXPECT_TRUE(plan->origin.fallback_reason.empty());
}

TEST(PlanKernel, WithoutADatabaseTheDefaultAndNoReason) {
  absl::StatusOr<KernelPlan> plan =
      PlanKernel(nullptr, Spec(kSpec), HostTarget(1));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(plan->origin.tuned());
  EXPECT_TRUE(plan->origin.fallback_reason.empty());
  EXPECT_EQ(plan->origin.structural_hash, plan->program.structural_hash);
}

}  // namespace
}  // namespace lathe::api
