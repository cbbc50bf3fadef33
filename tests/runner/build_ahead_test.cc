// Tests of runner/build_ahead.h in this process.
#include "runner/build_ahead.h"

#include <chrono>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/runner/schedule_requests.h"

namespace lathe::runner {
namespace {

using test_support::DefaultScheduleRequest;
using test_support::ScheduleRequest;
using test_support::WithBadSplit;
using ::testing::HasSubstr;

constexpr char kSpec[] = "matmul:M=36,N=28,K=20";

// Four programs of kSpec (vectorized by 4, 8, 16 and 2 lanes) for kernels of
// `num_threads`.
std::vector<ScheduleRequest> FourPrograms(int num_threads = 1) {
  return test_support::FourSchedules(kSpec, num_threads);
}

proto::MeasureRequest WithHints(
    proto::MeasureRequest request,
    const std::vector<proto::MeasureRequest>& next) {
  for (const proto::MeasureRequest& n : next)
    *request.add_build_ahead() = n.trace();
  return request;
}

// Waits (up to a minute) until the builder has started everything queued
// and finished it.
void WaitForBuilder(const BuildAhead& ahead, int64_t done) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (ahead.stats().done < done &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(ahead.stats().done, done)
      << "the builder did not finish in a minute";
}

TEST(BuildAhead, WithoutHintsBuildsOnTheSpot) {
  BuildAhead ahead({0, 1}, /*idle_priority=*/false);
  ScheduleRequest r = DefaultScheduleRequest(kSpec);
  CandidateBuild build = ahead.Take(r.request);
  ASSERT_TRUE(build.ok()) << build.failure.error();
  EXPECT_EQ(build.structural_hash, r.structural_hash);
  EXPECT_FALSE(build.built_ahead);
  EXPECT_EQ(ahead.stats().queued, 0);
  EXPECT_EQ(ahead.stats().taken_ahead, 0);
}

// The hinted programs are built before they are asked for, and each is the
// kernel a build on the spot gives (the JIT's cache: the same function).
TEST(BuildAhead, BuildsTheHintedProgramsAheadAsTheyWouldBeBuiltOnTheSpot) {
  std::vector<ScheduleRequest> p = FourPrograms();
  BuildAhead ahead({0, 1}, /*idle_priority=*/false);
  ahead.Add(
      WithHints(p[0].request, {p[1].request, p[2].request, p[3].request}));
  EXPECT_EQ(ahead.stats().queued, 3);
  WaitForBuilder(ahead, 3);
  EXPECT_EQ(ahead.stats().built_by_builder, 3);
  for (int i = 1; i < 4; ++i) {
    CandidateBuild build = ahead.Take(p[i].request);
    ASSERT_TRUE(build.ok()) << build.failure.error();
    EXPECT_TRUE(build.built_ahead);
    EXPECT_EQ(build.structural_hash, p[i].structural_hash);
    EXPECT_GT(build.build_ms, 0);
    CandidateBuild again = BuildForMeasurement(p[i].request);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(build.kernel->function(), again.kernel->function());
  }
  EXPECT_EQ(ahead.stats().taken_ahead, 3);
  EXPECT_EQ(ahead.stats().done, 0);
  // Taken once: a second request for the same program builds on the spot
  // (the JIT's cache makes that cheap).
  EXPECT_FALSE(ahead.Take(p[1].request).built_ahead);
}

// Hints already queued, in progress or done are not queued again.
TEST(BuildAhead, QueuesEachProgramOnce) {
  std::vector<ScheduleRequest> p = FourPrograms();
  BuildAhead ahead({0, 1}, /*idle_priority=*/false);
  ahead.Add(
      WithHints(p[0].request, {p[1].request, p[1].request, p[2].request}));
  ahead.Add(WithHints(p[1].request, {p[2].request, p[3].request}));
  EXPECT_EQ(ahead.stats().queued, 3);
}

// A kernel of as many threads as there are CPUs leaves none to build on
// while it runs: hints wait until the measuring thread builds a candidate
// itself, and are all built, beside it, before that build is returned. On
// one CPU there is nothing beside it: hints are ignored.
TEST(BuildAhead, WithoutAFreeCpuHintsAreBuiltOnlyBesideABuildOnTheSpot) {
  std::vector<ScheduleRequest> p = FourPrograms();
  {
    BuildAhead ahead({0}, /*idle_priority=*/false);
    ahead.Add(WithHints(p[0].request, {p[1].request}));
    EXPECT_EQ(ahead.stats().queued, 0);
    EXPECT_FALSE(ahead.Take(p[1].request).built_ahead);
  }
  std::vector<ScheduleRequest> two_threads = FourPrograms(2);
  BuildAhead ahead({0, 1}, /*idle_priority=*/false);
  ahead.Add(WithHints(two_threads[0].request,
                      {two_threads[1].request, two_threads[2].request,
                       two_threads[3].request}));
  // Queued, and nothing started: there is no builder thread to start them.
  EXPECT_EQ(ahead.stats().queued, 3);
  EXPECT_EQ(ahead.stats().waiting, 3);
  EXPECT_EQ(ahead.stats().done, 0);
  EXPECT_EQ(ahead.stats().built_by_builder, 0);

  CandidateBuild first = ahead.Take(two_threads[0].request);
  ASSERT_TRUE(first.ok()) << first.failure.error();
  EXPECT_FALSE(first.built_ahead);
  EXPECT_EQ(first.structural_hash, two_threads[0].structural_hash);
  // Returned only with every hint built: the kernel's check and timing
  // that follow share the CPUs with no build.
  BuildAhead::Stats stats = ahead.stats();
  EXPECT_EQ(stats.waiting, 0);
  EXPECT_EQ(stats.done, 3);
  EXPECT_EQ(stats.built_beside + stats.built_while_waiting, 3);
  EXPECT_EQ(stats.built_by_builder, 0);
  for (int i = 1; i < 4; ++i) {
    CandidateBuild build = ahead.Take(two_threads[i].request);
    ASSERT_TRUE(build.ok()) << build.failure.error();
    EXPECT_TRUE(build.built_ahead);
    EXPECT_EQ(build.structural_hash, two_threads[i].structural_hash);
    CandidateBuild again = BuildForMeasurement(two_threads[i].request);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(build.kernel->function(), again.kernel->function());
  }
  EXPECT_EQ(ahead.stats().taken_ahead, 3);
}

// A candidate built ahead is returned at once, without building the hints
// queued since: its check and timing come first.
TEST(BuildAhead,
     WithoutAFreeCpuACandidateBuiltAheadIsTakenWithoutBuildingMore) {
  std::vector<ScheduleRequest> two_threads = FourPrograms(2);
  BuildAhead ahead({0, 1}, /*idle_priority=*/false);
  ahead.Add(WithHints(two_threads[0].request, {two_threads[1].request}));
  ASSERT_TRUE(ahead.Take(two_threads[0].request).ok());
  ahead.Add(WithHints(two_threads[1].request,
                      {two_threads[2].request, two_threads[3].request}));
  EXPECT_EQ(ahead.stats().waiting, 2);
  EXPECT_TRUE(ahead.Take(two_threads[1].request).built_ahead);
  EXPECT_EQ(ahead.stats().waiting, 2);
  // The next build on the spot builds them.
  EXPECT_FALSE(ahead.Take(two_threads[0].request).built_ahead);
  EXPECT_EQ(ahead.stats().waiting, 0);
  EXPECT_EQ(ahead.stats().done, 2);
}

// Beside a request's own build, no other is started once a share of its
// timeout has passed: with a timeout of a nanosecond, none; the next build
// on the spot without one builds them all.
TEST(BuildAhead,
     WithoutAFreeCpuNothingMoreIsBuiltPastAShareOfTheRequestsTimeout) {
  std::vector<ScheduleRequest> two_threads = FourPrograms(2);
  BuildAhead ahead({0, 1}, /*idle_priority=*/false);
  proto::MeasureRequest first = WithHints(
      two_threads[0].request, {two_threads[1].request, two_threads[2].request});
  first.set_timeout_s(1e-9);
  ahead.Add(first);
  CandidateBuild build = ahead.Take(first);
  ASSERT_TRUE(build.ok()) << build.failure.error();
  EXPECT_EQ(build.structural_hash, two_threads[0].structural_hash);
  BuildAhead::Stats stats = ahead.stats();
  EXPECT_EQ(stats.waiting, 2);
  EXPECT_EQ(stats.built_beside + stats.built_while_waiting, 0);

  proto::MeasureRequest next = two_threads[3].request;
  next.set_timeout_s(60);
  EXPECT_FALSE(ahead.Take(next).built_ahead);
  EXPECT_EQ(ahead.stats().waiting, 0);
  EXPECT_EQ(ahead.stats().done, 2);
}

// A build that fails ahead is reported as it would be on the spot.
TEST(BuildAhead, AFailedBuildAheadIsTheSameBuildError) {
  std::vector<ScheduleRequest> p = FourPrograms();
  const proto::MeasureRequest bad = WithBadSplit(p[1].request);
  BuildAhead ahead({0, 1}, /*idle_priority=*/false);
  ahead.Add(WithHints(p[0].request, {bad}));
  WaitForBuilder(ahead, 1);
  CandidateBuild build = ahead.Take(bad);
  EXPECT_TRUE(build.built_ahead);
  ASSERT_FALSE(build.ok());
  CandidateBuild on_the_spot = BuildForMeasurement(bad);
  EXPECT_EQ(build.failure.status(), proto::MEASURE_BUILD_ERROR);
  EXPECT_EQ(build.failure.error(), on_the_spot.failure.error());
  EXPECT_THAT(build.failure.error(), HasSubstr("factor 0 is not positive"));
}

// A build-only request builds its program and its hints at once, whatever
// CPUs its kernels use, and keeps them all for the requests that follow.
TEST(BuildAhead,
     ABuildOnlyRequestBuildsItsProgramAndItsHintsForTheRequestsThatFollow) {
  for (int threads : {1, 2}) {
    for (const std::vector<int>& cpus :
         {std::vector<int>{0}, std::vector<int>{0, 1}}) {
      SCOPED_TRACE(testing::Message()
                   << threads << " threads, " << cpus.size() << " CPUs");
      std::vector<ScheduleRequest> p = FourPrograms(threads);
      BuildAhead ahead(cpus, /*idle_priority=*/false);
      proto::MeasureRequest build_only =
          WithHints(p[0].request, {p[1].request, p[2].request, p[3].request});
      build_only.set_build_only(true);
      proto::MeasureResult result = ahead.BuildAll(build_only);
      ASSERT_EQ(result.status(), proto::MEASURE_OK) << result.error();
      EXPECT_EQ(result.structural_hash(), p[0].structural_hash);
      EXPECT_GT(result.build_ms(), 0);
      EXPECT_EQ(result.times_s_size(), 0);
      // All done when it returns, none by the (idle) builder.
      BuildAhead::Stats stats = ahead.stats();
      EXPECT_EQ(stats.built_on_request, 4);
      EXPECT_EQ(stats.built_by_builder, 0);
      EXPECT_EQ(stats.waiting, 0);
      EXPECT_EQ(stats.done, 4);
      for (int i = 0; i < 4; ++i) {
        CandidateBuild build = ahead.Take(p[i].request);
        ASSERT_TRUE(build.ok()) << build.failure.error();
        EXPECT_TRUE(build.built_ahead) << "program " << i;
        EXPECT_EQ(build.structural_hash, p[i].structural_hash);
        CandidateBuild again = BuildForMeasurement(p[i].request);
        ASSERT_TRUE(again.ok());
        EXPECT_EQ(build.kernel->function(), again.kernel->function());
      }
      EXPECT_EQ(ahead.stats().taken_ahead, 4);
    }
  }
}

// Its own program is built whatever its timeout; no hint is started past a
// share of it. Those left are built beside the next build on the spot.
TEST(BuildAhead, ABuildOnlyRequestStartsNoHintPastAShareOfItsTimeout) {
  std::vector<ScheduleRequest> two_threads = FourPrograms(2);
  BuildAhead ahead({0, 1}, /*idle_priority=*/false);
  proto::MeasureRequest build_only = WithHints(
      two_threads[0].request, {two_threads[1].request, two_threads[2].request});
  build_only.set_build_only(true);
  build_only.set_timeout_s(1e-9);
  proto::MeasureResult result = ahead.BuildAll(build_only);
  ASSERT_EQ(result.status(), proto::MEASURE_OK) << result.error();
  BuildAhead::Stats stats = ahead.stats();
  EXPECT_EQ(stats.built_on_request, 1);
  EXPECT_EQ(stats.waiting, 2);
  EXPECT_TRUE(ahead.Take(two_threads[0].request).built_ahead);
  EXPECT_FALSE(ahead.Take(two_threads[3].request).built_ahead);
  EXPECT_EQ(ahead.stats().waiting, 0);
  EXPECT_TRUE(ahead.Take(two_threads[1].request).built_ahead);
}

// Its status is its own program's build: a failure is reported, and kept
// for the request that asks for that program.
TEST(BuildAhead, ABuildOnlyRequestReportsItsOwnBuildsFailure) {
  std::vector<ScheduleRequest> p = FourPrograms(2);
  proto::MeasureRequest bad = WithBadSplit(p[1].request);
  BuildAhead ahead({0, 1}, /*idle_priority=*/false);
  proto::MeasureRequest build_only = WithHints(bad, {p[2].request});
  build_only.set_build_only(true);
  proto::MeasureResult result = ahead.BuildAll(build_only);
  EXPECT_EQ(result.status(), proto::MEASURE_BUILD_ERROR);
  EXPECT_THAT(result.error(), HasSubstr("factor 0 is not positive"));
  CandidateBuild build = ahead.Take(bad);
  EXPECT_TRUE(build.built_ahead);
  EXPECT_EQ(build.failure.error(), result.error());
  EXPECT_TRUE(ahead.Take(p[2].request).built_ahead);
}

// At most kMaxEntries builds wait or lie done; done ones never asked for
// make room for new hints, oldest first.
TEST(BuildAhead, KeepsAtMostKMaxEntries) {
  ScheduleRequest r = DefaultScheduleRequest(kSpec);
  std::vector<proto::MeasureRequest> bad;  // distinct, and cheap: replay fails
  for (int factor = 0; factor > -2 * BuildAhead::kMaxEntries; --factor) {
    bad.push_back(WithBadSplit(r.request, factor));
  }
  BuildAhead ahead({0, 1}, /*idle_priority=*/false);
  ahead.Add(WithHints(r.request, bad));
  EXPECT_EQ(ahead.stats().queued, BuildAhead::kMaxEntries);
  WaitForBuilder(ahead, BuildAhead::kMaxEntries);
  ahead.Add(WithHints(r.request, {bad.back()}));
  EXPECT_EQ(ahead.stats().queued, BuildAhead::kMaxEntries + 1);
  WaitForBuilder(ahead, BuildAhead::kMaxEntries);
  EXPECT_FALSE(ahead.Take(bad.front()).built_ahead);  // forgotten first
  EXPECT_TRUE(ahead.Take(bad.back()).built_ahead);
}

// Asked for a program the builder is on, the caller builds the queued ones
// meanwhile, or waits: every build is used once, whoever did it.
TEST(BuildAhead, TakesWhatTheBuilderIsOnWithoutBuildingItTwice) {
  std::vector<ScheduleRequest> p = FourPrograms();
  BuildAhead ahead({0, 1}, /*idle_priority=*/false);
  ahead.Add(
      WithHints(p[0].request, {p[1].request, p[2].request, p[3].request}));
  for (int i = 1; i < 4; ++i) {
    CandidateBuild build = ahead.Take(p[i].request);
    ASSERT_TRUE(build.ok()) << build.failure.error();
    EXPECT_EQ(build.structural_hash, p[i].structural_hash);
  }
  const BuildAhead::Stats stats = ahead.stats();
  EXPECT_EQ(stats.waiting + stats.done, 0);
  // Every build done ahead (by the builder, or by this thread while it
  // waited) was taken, once. (Unless the builder starved on a loaded machine:
  // then the builder's copy is dropped.)
  if (stats.starved == 0) {
    EXPECT_EQ(stats.taken_ahead,
              stats.built_by_builder + stats.built_while_waiting);
  }
}

}  // namespace
}  // namespace lathe::runner
