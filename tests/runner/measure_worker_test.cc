// Tests of runner/measure_worker.h in this process (MeasureCandidate); the
// worker loop and the faults that end a process are tested through
// processes in worker_main_test.cc and local_runner_test.cc.
#include "runner/measure_worker.h"

#include <sys/resource.h>

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/schedule/traced_schedule.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/trace.pb.h"
#include "runner/candidate_build.h"
#include "tests/runner/schedule_requests.h"

namespace lathe::runner {
namespace {

using ::testing::HasSubstr;

constexpr char kSpec[] = "matmul:M=64,N=48,K=32";

using Candidate = test_support::ScheduleRequest;

// A request for the default schedule of kSpec as an explicit trace, timed
// briefly, with the hash this process computes for it.
Candidate DefaultCandidate(int num_threads = 1) {
  Candidate c = test_support::DefaultScheduleRequest(kSpec, num_threads);
  c.request.set_check_seed(7);
  return c;
}

TEST(MeasureCandidate, MeasuresACorrectKernel) {
  Candidate c = DefaultCandidate();
  proto::MeasureResult r = MeasureCandidate(c.request);
  ASSERT_EQ(r.status(), proto::MEASURE_OK) << r.error();
  EXPECT_EQ(r.error(), "");
  EXPECT_EQ(r.structural_hash(), c.structural_hash);
  ASSERT_GE(r.times_s_size(), 3);
  double total = 0;
  for (double t : r.times_s()) {
    EXPECT_GT(t, 0);
    EXPECT_LT(t, 0.01);  // 64x48x32 takes microseconds
    total += t;
  }
  EXPECT_GT(r.build_ms(), 0);
  EXPECT_GT(r.run_ms(), 0);
  // Samples are batches of ~1 ms, so their sum is not the calls' total;
  // but the run lasted at least min_time_s.
  EXPECT_GE(r.run_ms(), 10);
}

TEST(MeasureCandidate, MeasuresWithSeveralThreads) {
  Candidate c = DefaultCandidate(/*num_threads=*/2);
  proto::MeasureResult r = MeasureCandidate(c.request);
  ASSERT_EQ(r.status(), proto::MEASURE_OK) << r.error();
  EXPECT_EQ(r.structural_hash(), c.structural_hash);
}

TEST(MeasureCandidate, AbsentTraceMeansTheDefaultSchedule) {
  Candidate c = DefaultCandidate();
  c.request.clear_trace();
  proto::MeasureResult r = MeasureCandidate(c.request);
  ASSERT_EQ(r.status(), proto::MEASURE_OK) << r.error();
  EXPECT_EQ(r.structural_hash(), c.structural_hash);
}

TEST(MeasureCandidate, RepeatBoundsComeFromTheRequest) {
  Candidate c = DefaultCandidate();
  c.request.set_min_time_s(10);  // would take 10 s ...
  c.request.set_min_repeats(2);
  c.request.set_max_repeats(4);  // ... but 4 samples are the most
  proto::MeasureResult r = MeasureCandidate(c.request);
  ASSERT_EQ(r.status(), proto::MEASURE_OK) << r.error();
  EXPECT_EQ(r.times_s_size(), 4);

  c.request.set_min_time_s(0);
  c.request.set_min_repeats(6);
  c.request.set_max_repeats(2);  // below the minimum: the minimum wins
  r = MeasureCandidate(c.request);
  ASSERT_EQ(r.status(), proto::MEASURE_OK) << r.error();
  EXPECT_EQ(r.times_s_size(), 6);
}

TEST(MeasureCandidate, FlushCacheTimesEachCallAlone) {
  Candidate c = DefaultCandidate();
  c.request.set_flush_cache(true);
  c.request.set_min_time_s(0);
  c.request.set_min_repeats(5);
  c.request.set_max_repeats(5);
  proto::MeasureResult r = MeasureCandidate(c.request);
  ASSERT_EQ(r.status(), proto::MEASURE_OK) << r.error();
  EXPECT_EQ(r.times_s_size(), 5);
}

TEST(MeasureCandidate, BadTraceIsABuildErrorNamingTheInstruction) {
  Candidate c = DefaultCandidate();
  proto::Trace* trace = c.request.mutable_trace();
  trace->clear_instructions();
  trace->clear_decisions();
  proto::TraceInstruction* get_block = trace->add_instructions();
  get_block->set_kind("get_block");
  proto::TraceAttr* name = get_block->add_attrs();
  name->set_name("name");
  name->set_string_value("no_such_block");
  get_block->add_outputs(0);
  proto::MeasureResult r = MeasureCandidate(c.request);
  EXPECT_EQ(r.status(), proto::MEASURE_BUILD_ERROR);
  EXPECT_THAT(r.error(), HasSubstr("no_such_block"));
  EXPECT_EQ(r.times_s_size(), 0);
}

TEST(MeasureCandidate, BadWorkloadAndTargetAreBuildErrors) {
  Candidate c = DefaultCandidate();
  c.request.set_workload("matmul:M=0");
  proto::MeasureResult r = MeasureCandidate(c.request);
  EXPECT_EQ(r.status(), proto::MEASURE_BUILD_ERROR);
  EXPECT_THAT(r.error(), HasSubstr("workload: "));

  c = DefaultCandidate();
  c.request.set_target("cuda -arch=sm_90");
  r = MeasureCandidate(c.request);
  EXPECT_EQ(r.status(), proto::MEASURE_BUILD_ERROR);
  EXPECT_THAT(r.error(), HasSubstr("target: "));
  // A CUDA target parses, but no CPU runner measures it.
  EXPECT_THAT(r.error(), HasSubstr("only llvm targets run on this machine"));
}

TEST(MeasureCandidate, RefusesATargetThisMachineCannotRun) {
  Candidate c = DefaultCandidate();
  // A feature no x86 CPU has: running its code would be an illegal
  // instruction, so it must not even be compiled.
  c.request.set_target(
      "llvm -mcpu=generic -mattr=+amx-fp16,+avx512fp16 -num-threads=1");
  proto::MeasureResult r = MeasureCandidate(c.request);
  EXPECT_EQ(r.status(), proto::MEASURE_BUILD_ERROR);
  EXPECT_THAT(r.error(), HasSubstr("target: "));
  EXPECT_THAT(r.error(), HasSubstr("lacks: amx-fp16"));
}

TEST(MeasureCandidate, WrongResultIsRecordedAsSuchWithTheMismatch) {
  Candidate c = DefaultCandidate();
  c.request.set_inject_fault("wrong_result");
  proto::MeasureResult r = MeasureCandidate(c.request);
  EXPECT_EQ(r.status(), proto::MEASURE_WRONG_RESULT);
  EXPECT_THAT(r.error(), HasSubstr("reference check: "));
  EXPECT_THAT(r.error(), HasSubstr("output C"));
  EXPECT_EQ(r.times_s_size(), 0);  // no time counts before the check passes
  EXPECT_EQ(r.structural_hash(), c.structural_hash);
}

// The rounds of a batch ask for each candidate again: the kernel is the
// same code on the same inputs, so its check is not run again.
TEST(MeasureCandidate, AKernelThatPassedIsNotCheckedAgainOnTheSameInputs) {
  Candidate c = DefaultCandidate();
  c.request.set_check_seed(1001);  // no other test checks on these inputs
  proto::MeasureResult first = MeasureCandidate(c.request);
  ASSERT_EQ(first.status(), proto::MEASURE_OK) << first.error();
  EXPECT_FALSE(first.check_reused());
  EXPECT_GT(first.check_ms(), 0);
  EXPECT_LE(first.check_ms(), first.run_ms());

  proto::MeasureResult again = MeasureCandidate(c.request);
  ASSERT_EQ(again.status(), proto::MEASURE_OK) << again.error();
  EXPECT_TRUE(again.check_reused());
  EXPECT_GE(again.times_s_size(), 3);  // timed as before

  c.request.set_check_seed(1002);  // other inputs: checked
  proto::MeasureResult other_inputs = MeasureCandidate(c.request);
  ASSERT_EQ(other_inputs.status(), proto::MEASURE_OK) << other_inputs.error();
  EXPECT_FALSE(other_inputs.check_reused());
}

TEST(MeasureCandidate, AKernelThatFailedIsCheckedAgainAndFailsAgain) {
  Candidate c = DefaultCandidate();
  c.request.set_check_seed(1003);
  c.request.set_inject_fault("wrong_result");
  EXPECT_EQ(MeasureCandidate(c.request).status(), proto::MEASURE_WRONG_RESULT);
  proto::MeasureResult again = MeasureCandidate(c.request);
  EXPECT_EQ(again.status(), proto::MEASURE_WRONG_RESULT);
  EXPECT_FALSE(again.check_reused());
}

TEST(MeasureCandidate, AnInjectedFaultIsCheckedEvenAfterTheKernelPassed) {
  Candidate c = DefaultCandidate();
  c.request.set_check_seed(1004);
  ASSERT_EQ(MeasureCandidate(c.request).status(), proto::MEASURE_OK);
  c.request.set_inject_fault("wrong_result");
  proto::MeasureResult r = MeasureCandidate(c.request);
  EXPECT_EQ(r.status(), proto::MEASURE_WRONG_RESULT);
  EXPECT_FALSE(r.check_reused());
  EXPECT_EQ(r.times_s_size(), 0);
}

// A matmul whose B is a constant (layout-free), its trace packing B whole
// at the root into [N/16][K][16] panels, marked as the layout-free
// pre-pack: the worker builds the prepack beside the kernel.
Candidate LayoutFreeCandidate() {
  const std::string spec =
      "custom:input A[16,24]; input B[24,48] const; "
      "C[i,j] += A[i,k] * B[k,j]|i=16,j=48,k=24";
  Candidate c;
  Workload workload = ParseWorkloadSpec(spec).value();
  TracedSchedule sch(workload.InitialProgram().value());
  BlockRV block = sch.GetBlock("C").value();
  BlockRV pack =
      sch.CacheRead(block, 1, "global", Layout{{1, 16}, {1, 0, 2}}).value();
  EXPECT_TRUE(
      sch.AnnotateBlock(pack, kLayoutFreePackAnnotation, int64_t{1}).ok());
  Trace trace = sch.trace();
  trace.workload = workload.CanonicalForm();
  const Target target = HostTarget(1);
  c.structural_hash =
      MakeKernelProgram(workload, &trace, target).value().structural_hash;
  c.request.set_workload(workload.CanonicalForm());
  trace.ToProto(c.request.mutable_trace());
  c.request.set_target(target.ToString());
  c.request.set_min_time_s(0.01);
  c.request.set_min_repeats(3);
  c.request.set_check_seed(9);
  return c;
}

TEST(MeasureCandidate, MeasuresAKernelWithLayoutFreeWeightsPackedAhead) {
  Candidate c = LayoutFreeCandidate();
  CandidateBuild build = BuildForMeasurement(c.request);
  ASSERT_TRUE(build.ok()) << build.failure.error();
  ASSERT_EQ(build.prepacks.size(), 1u);
  EXPECT_EQ(build.prepacks[0].input, 1u);
  EXPECT_EQ(build.prepacks[0].input_elements, 24 * 48);
  EXPECT_EQ(build.prepacks[0].packed_elements, 3 * 24 * 16);
  proto::MeasureResult r = MeasureCandidate(c.request);
  ASSERT_EQ(r.status(), proto::MEASURE_OK) << r.error();
  EXPECT_EQ(r.structural_hash(), c.structural_hash);
  EXPECT_GE(r.times_s_size(), 3);
}

// The check compares what the kernel computes from the packed weights: the
// kernel handed the weights unpacked (as a mix-up of records would) fails.
TEST(MeasureCandidate, AKernelHandedUnpackedWeightsFailsTheCheck) {
  Candidate c = LayoutFreeCandidate();
  c.request.set_inject_fault("unpacked_weights");
  proto::MeasureResult r = MeasureCandidate(c.request);
  EXPECT_EQ(r.status(), proto::MEASURE_WRONG_RESULT) << r.error();
  EXPECT_THAT(r.error(), HasSubstr("output C"));
  EXPECT_EQ(r.times_s_size(), 0);
}

TEST(MeasureCandidate, UnknownFaultIsRefused) {
  Candidate c = DefaultCandidate();
  c.request.set_inject_fault("explode");
  proto::MeasureResult r = MeasureCandidate(c.request);
  EXPECT_EQ(r.status(), proto::MEASURE_RUN_ERROR);
  EXPECT_THAT(r.error(), HasSubstr("unknown inject_fault \"explode\""));
}

TEST(MeasureCandidate, OomFaultNeedsAMemoryLimit) {
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &limit), 0);
  if (limit.rlim_cur != RLIM_INFINITY)
    GTEST_SKIP() << "this process has a memory limit";
  Candidate c = DefaultCandidate();
  c.request.set_inject_fault("oom");
  proto::MeasureResult r = MeasureCandidate(c.request);
  EXPECT_EQ(r.status(), proto::MEASURE_RUN_ERROR);
  EXPECT_THAT(r.error(), HasSubstr("no memory limit"));
}

TEST(MeasureCandidate, OutOfMemoryUnderALimitIsARunErrorNamingTheLimit) {
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &saved), 0);
  if (saved.rlim_cur != RLIM_INFINITY)
    GTEST_SKIP() << "this process has a memory limit";
  Candidate c = DefaultCandidate();  // built before the limit: the JIT is warm
  c.request.set_inject_fault("oom");
  // What this process has reserved now, plus room for the build.
  long pages = 0;
  FILE* statm = std::fopen("/proc/self/statm", "r");
  ASSERT_NE(statm, nullptr);
  ASSERT_EQ(std::fscanf(statm, "%ld", &pages), 1);
  std::fclose(statm);
  rlimit limit = saved;
  limit.rlim_cur = static_cast<rlim_t>(pages) * 4096 + (rlim_t{512} << 20);
  ASSERT_EQ(setrlimit(RLIMIT_AS, &limit), 0);
  proto::MeasureResult r = MeasureCandidate(c.request);
  ASSERT_EQ(setrlimit(RLIMIT_AS, &saved), 0);
  EXPECT_EQ(r.status(), proto::MEASURE_RUN_ERROR);
  EXPECT_EQ(r.error(), absl::StrCat("exceeded the memory limit of ",
                                    limit.rlim_cur >> 20, " MiB"));
}

}  // namespace
}  // namespace lathe::runner
