#include "tuner/service/lease_manager.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"

namespace lathe::service {
namespace {

// A clock the test moves by hand.
struct FakeClock {
  absl::Time now = absl::FromUnixSeconds(1000);
  LeaseManager::Clock fn() {
    return [this] { return now; };
  }
};

WorkItem Item(const std::string& job,
              const std::string& target = "llvm -num-threads=1",
              bool simulated = false) {
  WorkItem item;
  item.job = job;
  item.simulated = simulated;
  item.request.set_target(target);
  item.request.set_workload(job + "-workload");
  return item;
}

// An item of job "j" whose trace is told apart by `mark`.
WorkItem Program(const std::string& mark,
                 const std::string& workload = "j-workload",
                 bool simulated = false) {
  WorkItem item = Item("j", "llvm -num-threads=1", simulated);
  item.request.set_workload(workload);
  item.request.mutable_trace()->set_workload(mark);
  return item;
}

// The marks of the traces a lease names for building ahead.
std::vector<std::string> HintsOf(const Lease& lease) {
  std::vector<std::string> marks;
  for (const proto::Trace& t : lease.work.request.build_ahead())
    marks.push_back(t.workload());
  return marks;
}

std::optional<Lease> Take(LeaseManager& leases, const std::string& runner) {
  return leases.Acquire(runner, "llvm -num-threads=1", false,
                        absl::ZeroDuration());
}

proto::MeasureResult Result(double t) {
  proto::MeasureResult result;
  result.set_status(proto::MEASURE_OK);
  result.add_times_s(t);
  return result;
}

TEST(LeaseManager, HandsOutOldestMatchingItemAndDeliversItsResult) {
  FakeClock clock;
  LeaseManager leases(absl::Seconds(10), clock.fn());
  const int64_t a = leases.Enqueue(Item("a"));
  const int64_t b = leases.Enqueue(Item("b"));
  std::optional<Lease> first =
      leases.Acquire("r1", "llvm -num-threads=1", false, absl::ZeroDuration());
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->item, a);
  EXPECT_EQ(first->work.request.workload(), "a-workload");
  std::optional<Lease> second =
      leases.Acquire("r2", "llvm -num-threads=1", false, absl::ZeroDuration());
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->item, b);
  EXPECT_NE(first->id, second->id);
  EXPECT_EQ(leases.Report("r1", first->id, Result(1.5)),
            ReportOutcome::kAccepted);
  absl::StatusOr<proto::MeasureResult> result = leases.Wait(a);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->times_s(0), 1.5);
}

TEST(LeaseManager, RunnersOnlyGetItemsOfTheirExactTargetAndKind) {
  FakeClock clock;
  LeaseManager leases(absl::Seconds(10), clock.fn());
  leases.Enqueue(Item("j", "llvm -mcpu=znver4 -num-threads=2"));
  leases.Enqueue(
      Item("sim", "llvm -mcpu=znver4 -num-threads=2", /*simulated=*/true));
  EXPECT_FALSE(leases.Acquire("r", "llvm -mcpu=znver4 -num-threads=1", false,
                              absl::ZeroDuration()));
  EXPECT_FALSE(
      leases.Acquire("r", "llvm -mcpu=znver4", false, absl::ZeroDuration()));
  std::optional<Lease> real = leases.Acquire(
      "r", "llvm -mcpu=znver4 -num-threads=2", false, absl::ZeroDuration());
  ASSERT_TRUE(real.has_value());
  EXPECT_EQ(real->work.job, "j");
  std::optional<Lease> sim = leases.Acquire(
      "s", "llvm -mcpu=znver4 -num-threads=2", true, absl::ZeroDuration());
  ASSERT_TRUE(sim.has_value());
  EXPECT_EQ(sim->work.job, "sim");
}

TEST(LeaseManager, ExpiredLeaseIsRequeuedAndItsLateResultDropped) {
  FakeClock clock;
  LeaseManager leases(absl::Seconds(10), clock.fn());
  const int64_t item = leases.Enqueue(Item("j"));
  std::optional<Lease> dead = leases.Acquire("dead", "llvm -num-threads=1",
                                             false, absl::ZeroDuration());
  ASSERT_TRUE(dead.has_value());
  // Heartbeats keep it alive past the lease time...
  clock.now += absl::Seconds(8);
  EXPECT_TRUE(leases.Heartbeat("dead", {dead->id}).empty());
  clock.now += absl::Seconds(8);
  EXPECT_TRUE(leases.ExpireLeases().empty());
  // ...until they stop.
  clock.now += absl::Seconds(3);
  EXPECT_EQ(leases.ExpireLeases(), std::vector<std::string>{"dead"});
  EXPECT_EQ(leases.Stats().expired, 1);
  EXPECT_EQ(leases.Heartbeat("dead", {dead->id}),
            std::vector<std::string>{dead->id});
  std::optional<Lease> again = leases.Acquire("alive", "llvm -num-threads=1",
                                              false, absl::ZeroDuration());
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->item, item);
  EXPECT_NE(again->id, dead->id);
  // The dead runner's late result is dropped; the live one counts, once.
  EXPECT_EQ(leases.Report("dead", dead->id, Result(9)),
            ReportOutcome::kDropped);
  EXPECT_EQ(leases.Report("alive", again->id, Result(2)),
            ReportOutcome::kAccepted);
  EXPECT_EQ(leases.Report("alive", again->id, Result(3)),
            ReportOutcome::kDropped);
  EXPECT_EQ(leases.Stats().dropped_results, 2);
  // Two leases of one item: the expired one and its successor.
  EXPECT_EQ(leases.Stats().granted, 2);
  absl::StatusOr<proto::MeasureResult> result = leases.Wait(item);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->times_s(0), 2);
}

TEST(LeaseManager, ResultFromAnotherRunnerOrUnknownLeaseIsDropped) {
  FakeClock clock;
  LeaseManager leases(absl::Seconds(10), clock.fn());
  leases.Enqueue(Item("j"));
  std::optional<Lease> lease =
      leases.Acquire("r1", "llvm -num-threads=1", false, absl::ZeroDuration());
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(leases.Report("r2", lease->id, Result(1)), ReportOutcome::kDropped);
  EXPECT_EQ(leases.Report("r1", "0123456789abcdef0123456789abcdef", Result(1)),
            ReportOutcome::kDropped);
  EXPECT_EQ(leases.Stats().leased, 1);
  EXPECT_EQ(leases.Stats().granted, 1);
}

TEST(LeaseManager, ExpiryFoundByAnotherCallIsStillReported) {
  FakeClock clock;
  LeaseManager leases(absl::Seconds(10), clock.fn());
  leases.Enqueue(Item("j"));
  ASSERT_TRUE(leases.Acquire("dead", "llvm -num-threads=1", false,
                             absl::ZeroDuration()));
  clock.now += absl::Seconds(11);
  // A runner's call finds the lease expired and takes the item...
  ASSERT_TRUE(leases.Acquire("alive", "llvm -num-threads=1", false,
                             absl::ZeroDuration()));
  // ...and the daemon's periodic call still hears of it, once.
  EXPECT_EQ(leases.ExpireLeases(), std::vector<std::string>{"dead"});
  EXPECT_TRUE(leases.ExpireLeases().empty());
}

TEST(LeaseManager, ReturnedItemGoesToTheFrontForAnotherRunner) {
  FakeClock clock;
  LeaseManager leases(absl::Seconds(10), clock.fn());
  const int64_t first = leases.Enqueue(Item("j"));
  leases.Enqueue(Item("j"));
  std::optional<Lease> lease = leases.Acquire("broken", "llvm -num-threads=1",
                                              false, absl::ZeroDuration());
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(leases.Return("broken", lease->id), ReportOutcome::kAccepted);
  EXPECT_EQ(leases.Return("broken", lease->id), ReportOutcome::kDropped);
  std::optional<Lease> next = leases.Acquire("good", "llvm -num-threads=1",
                                             false, absl::ZeroDuration());
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->item, first);
}

TEST(LeaseManager, ReleaseRunnerRequeuesItsLeases) {
  FakeClock clock;
  LeaseManager leases(absl::Seconds(10), clock.fn());
  leases.Enqueue(Item("j"));
  std::optional<Lease> lease =
      leases.Acquire("q", "llvm -num-threads=1", false, absl::ZeroDuration());
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(leases.LeasesByRunner()["q"], 1);
  leases.ReleaseRunner("q");
  EXPECT_EQ(leases.Stats().queued, 1);
  EXPECT_EQ(leases.Report("q", lease->id, Result(1)), ReportOutcome::kDropped);
}

TEST(LeaseManager, CancelJobWakesItsWaitersOnly) {
  LeaseManager leases(absl::Seconds(10));
  const int64_t a = leases.Enqueue(Item("a"));
  const int64_t b = leases.Enqueue(Item("b"));
  absl::StatusOr<proto::MeasureResult> waited = proto::MeasureResult();
  std::thread waiter([&] { waited = leases.Wait(a); });
  leases.CancelJob("a", absl::CancelledError("job cancelled"));
  waiter.join();
  EXPECT_EQ(waited.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(leases.JobCounts("b"), std::make_pair(1, 0));
  std::optional<Lease> lease =
      leases.Acquire("r", "llvm -num-threads=1", false, absl::ZeroDuration());
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->item, b);
}

TEST(LeaseManager, AcquireWaitsForWorkQueuedLater) {
  LeaseManager leases(absl::Seconds(10));
  std::optional<Lease> got;
  std::thread runner([&] {
    got = leases.Acquire("r", "llvm -num-threads=1", false, absl::Seconds(30));
  });
  // Queued while the runner waits: handed over at once, not after 30 s.
  const absl::Time start = absl::Now();
  leases.Enqueue(Item("j"));
  runner.join();
  ASSERT_TRUE(got.has_value());
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  // And nothing comes when nothing is queued.
  EXPECT_FALSE(leases.Acquire("r", "llvm -num-threads=1", false,
                              absl::Milliseconds(20)));
}

TEST(LeaseManager, PrefetchTakesOnlyWhatNoIdleRunnerWaitsFor) {
  const std::string target = "llvm -num-threads=1";
  LeaseManager leases(absl::Seconds(10));
  // Nothing queued: nothing ahead, and a prefetch never waits.
  EXPECT_FALSE(leases.Prefetch("busy", target, false));

  // An idle runner waits for work.
  std::optional<Lease> idle_got;
  std::thread idle([&] {
    idle_got = leases.Acquire("idle", target, false, absl::Seconds(30));
  });
  const absl::Time give_up = absl::Now() + absl::Seconds(20);
  while (leases.IdleRunners(target, false) < 1 && absl::Now() < give_up) {
    std::this_thread::yield();
  }
  ASSERT_EQ(leases.IdleRunners(target, false), 1);
  EXPECT_EQ(leases.IdleRunners(target, true), 0);
  // One item queued, one runner waiting for it: the busy runner must not
  // take it ahead, whoever gets the lock first.
  const int64_t first = leases.Enqueue(Item("j"));
  EXPECT_FALSE(leases.Prefetch("busy", target, false));
  idle.join();
  ASSERT_TRUE(idle_got.has_value());
  EXPECT_EQ(idle_got->item, first);
  EXPECT_EQ(leases.IdleRunners(target, false), 0);

  // Nobody waits: the busy runner takes the next one ahead of time, but
  // never one of another target or kind.
  leases.Enqueue(Item("j", "llvm -num-threads=2"));
  leases.Enqueue(Item("j", target, /*simulated=*/true));
  EXPECT_FALSE(leases.Prefetch("busy", target, false));
  const int64_t second = leases.Enqueue(Item("j"));
  std::optional<Lease> ahead = leases.Prefetch("busy", target, false);
  ASSERT_TRUE(ahead.has_value());
  EXPECT_EQ(ahead->item, second);
}

TEST(LeaseManager, PrefetchStopsAtTwoLeasesPerRunner) {
  const std::string target = "llvm -num-threads=1";
  LeaseManager leases(absl::Seconds(10));
  for (int i = 0; i < 4; ++i) leases.Enqueue(Item("j"));
  ASSERT_TRUE(leases.Acquire("r", target, false, absl::ZeroDuration()));
  ASSERT_TRUE(leases.Prefetch("r", target, false));
  EXPECT_FALSE(
      leases.Prefetch("r", target, false));  // measuring one, one in hand
  EXPECT_EQ(leases.LeasesByRunner()["r"], LeaseManager::kMaxLeasesPerRunner);
  ASSERT_TRUE(leases.Prefetch("other", target, false));
}

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(LeaseManager, ALeaseNamesTheNextQueuedProgramsOfItsWorkloadToBuildAhead) {
  FakeClock clock;
  LeaseManager leases(absl::Seconds(10), clock.fn(), /*build_ahead_hints=*/2);
  leases.Enqueue(Program("t1"));
  leases.Enqueue(Program("other", "another-workload"));
  leases.Enqueue(Program("simulated", "j-workload", /*simulated=*/true));
  WorkItem default_schedule = Item("j");  // no trace: nothing to name
  leases.Enqueue(default_schedule);
  leases.Enqueue(Program("t2"));
  leases.Enqueue(Program("t3"));
  leases.Enqueue(Program("t4"));
  std::optional<Lease> first = Take(leases, "r");
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->work.request.trace().workload(), "t1");
  EXPECT_THAT(HintsOf(*first), ElementsAre("t2", "t3"));
  // The item itself is unchanged: another runner would get it without.
  std::optional<Lease> other = Take(leases, "s");
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->work.request.trace().workload(), "other");
  EXPECT_THAT(HintsOf(*other), IsEmpty());
  // A simulated runner's lease names nothing.
  std::optional<Lease> simulated =
      leases.Acquire("sim", "llvm -num-threads=1", true, absl::ZeroDuration());
  ASSERT_TRUE(simulated.has_value());
  EXPECT_THAT(HintsOf(*simulated), IsEmpty());
}

TEST(LeaseManager, ARunnerTakesWhatItWasToldToBuildAndOthersTakeItLast) {
  FakeClock clock;
  LeaseManager leases(absl::Seconds(10), clock.fn(), /*build_ahead_hints=*/2);
  for (const char* mark : {"t1", "t2", "t3", "t4", "t5", "t6"})
    leases.Enqueue(Program(mark));
  auto next_of = [&](const std::string& runner) {
    std::optional<Lease> lease = Take(leases, runner);
    return lease ? lease->work.request.trace().workload() : std::string("none");
  };
  EXPECT_EQ(next_of("r"), "t1");  // promised to r: t2, t3
  EXPECT_EQ(next_of("s"),
            "t4");  // the oldest not promised; promised to s: t5, t6
  EXPECT_EQ(next_of("r"), "t2");
  EXPECT_EQ(next_of("s"), "t5");
  EXPECT_EQ(next_of("s"), "t6");
  // Nothing else queued for s: it takes r's rather than wait.
  EXPECT_EQ(next_of("s"), "t3");
  EXPECT_EQ(next_of("r"), "none");
}

TEST(LeaseManager, ALaterRoundOfAProgramGoesToTheRunnerThatBuiltIt) {
  FakeClock clock;
  LeaseManager leases(absl::Seconds(10), clock.fn(), /*build_ahead_hints=*/1);
  leases.Enqueue(Program("x"));
  std::optional<Lease> x = Take(leases, "r");
  leases.Enqueue(Program("y"));
  std::optional<Lease> y = Take(leases, "s");
  ASSERT_TRUE(x && y);
  EXPECT_EQ(leases.Report("r", x->id, Result(1)), ReportOutcome::kAccepted);
  EXPECT_EQ(leases.Report("s", y->id, Result(1)), ReportOutcome::kAccepted);
  // The second round: y queued first, yet r gets x, which its worker has.
  leases.Enqueue(Program("y"));
  leases.Enqueue(Program("x"));
  std::optional<Lease> again = Take(leases, "r");
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->work.request.trace().workload(), "x");
  again = Take(leases, "s");
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->work.request.trace().workload(), "y");
}

TEST(LeaseManager, APromiseDiesWithItsRunnersLease) {
  FakeClock clock;
  LeaseManager leases(absl::Seconds(10), clock.fn(), /*build_ahead_hints=*/2);
  for (const char* mark : {"t1", "t2", "t3", "t4"})
    leases.Enqueue(Program(mark));
  std::optional<Lease> first = Take(leases, "r");
  ASSERT_TRUE(first.has_value());
  EXPECT_THAT(HintsOf(*first), ElementsAre("t2", "t3"));
  clock.now += absl::Seconds(11);  // r is silent: its lease expires
  EXPECT_THAT(leases.ExpireLeases(), ElementsAre("r"));
  // r's promises went with it: s is promised t2 and t3 (kept, only t4).
  std::optional<Lease> taken_over = Take(leases, "s");
  ASSERT_TRUE(taken_over.has_value());
  EXPECT_EQ(taken_over->work.request.trace().workload(), "t1");
  EXPECT_THAT(HintsOf(*taken_over), ElementsAre("t2", "t3"));

  // The same when a runner gives a lease back (it stops, or cannot measure).
  LeaseManager other(absl::Seconds(10), clock.fn(), /*build_ahead_hints=*/1);
  for (const char* mark : {"t1", "t2", "t3"}) other.Enqueue(Program(mark));
  std::optional<Lease> given_back = Take(other, "q");
  ASSERT_TRUE(given_back.has_value());
  EXPECT_THAT(HintsOf(*given_back), ElementsAre("t2"));
  EXPECT_EQ(other.Return("q", given_back->id), ReportOutcome::kAccepted);
  taken_over = Take(other, "s");
  ASSERT_TRUE(taken_over.has_value());
  EXPECT_EQ(taken_over->work.request.trace().workload(), "t1");
  EXPECT_THAT(HintsOf(*taken_over), ElementsAre("t2"));
}

TEST(LeaseManager, WithoutBuildAheadLeasesNameNothingAndGoOldestFirst) {
  FakeClock clock;
  LeaseManager leases(absl::Seconds(10), clock.fn(), /*build_ahead_hints=*/0);
  for (const char* mark : {"t1", "t2", "t3"}) leases.Enqueue(Program(mark));
  std::optional<Lease> first = Take(leases, "r");
  ASSERT_TRUE(first.has_value());
  EXPECT_THAT(HintsOf(*first), IsEmpty());
  std::optional<Lease> second = Take(leases, "s");
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->work.request.trace().workload(), "t2");
}

}  // namespace
}  // namespace lathe::service
