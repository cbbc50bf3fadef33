// Tests of database/database.h: best and top records, lookups by target
// matching, reading records, tasks, stats and the content stamp.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "database/database.h"
#include "gtest/gtest.h"
#include "tests/database/database_fixture.h"
#include "tests/database/test_records.h"

namespace lathe::db {
namespace {

using testing::CreateMode;
using testing::DatabaseTest;
using testing::DefaultTarget;
using testing::MakeRecord;
using testing::MakeTarget;
using testing::OkRecord;
using testing::TempFolder;

// Best and Top

TEST_F(DatabaseTest, BestIsTheFastestOkRecordAndTopListsFastestFirst) {
  MustCommit({OkRecord("w", DefaultTarget(), "slow", 3e-3),
              OkRecord("w", DefaultTarget(), "fast", 1e-3),
              OkRecord("w", DefaultTarget(), "mid", 2e-3),
              OkRecord("w", DefaultTarget(), "tie", 2e-3),
              OkRecord("other", DefaultTarget(), "faster", 1e-6)});
  absl::StatusOr<std::optional<Match>> best = db_->Best("w", DefaultTarget());
  ASSERT_TRUE(best.ok()) << best.status();
  ASSERT_TRUE(best->has_value());
  EXPECT_EQ((*best)->record.structural_hash(), "fast");
  EXPECT_TRUE((*best)->exact);
  EXPECT_EQ((*best)->difference, "");
  EXPECT_GT((*best)->record.id(), 0);

  absl::StatusOr<std::vector<Match>> top = db_->Top("w", DefaultTarget(), 3);
  ASSERT_TRUE(top.ok()) << top.status();
  std::vector<std::string> hashes;
  for (const Match& match : *top)
    hashes.push_back(match.record.structural_hash());
  // Ties go to the earlier record.
  EXPECT_EQ(hashes, (std::vector<std::string>{"fast", "mid", "tie"}));

  top = db_->Top("w", DefaultTarget(), 100);
  ASSERT_TRUE(top.ok());
  EXPECT_EQ(top->size(), 4u);
  top = db_->Top("w", DefaultTarget(), 0);
  ASSERT_TRUE(top.ok());
  EXPECT_TRUE(top->empty());
}

TEST_F(DatabaseTest, AProgramCountsByItsLatestMeasurement) {
  // "lucky" was measured fast once; measured again it is slower than
  // "steady": the re-measurement decides, and each program is listed once.
  MustCommit({OkRecord("w", DefaultTarget(), "lucky", 1e-3),
              OkRecord("w", DefaultTarget(), "steady", 2e-3)});
  MustCommit({OkRecord("w", DefaultTarget(), "lucky", 3e-3)});
  absl::StatusOr<std::vector<Match>> top = db_->Top("w", DefaultTarget(), 10);
  ASSERT_TRUE(top.ok()) << top.status();
  ASSERT_EQ(top->size(), 2u);
  EXPECT_EQ((*top)[0].record.structural_hash(), "steady");
  EXPECT_EQ((*top)[1].record.structural_hash(), "lucky");
  EXPECT_DOUBLE_EQ((*top)[1].record.median_s(), 3e-3);
  // A latest measurement that failed withdraws the program.
  MustCommit({MakeRecord("w", DefaultTarget(), "steady", {},
                         proto::MEASURE_RUN_ERROR)});
  absl::StatusOr<std::optional<Match>> best = db_->Best("w", DefaultTarget());
  ASSERT_TRUE(best.ok() && best->has_value());
  EXPECT_EQ((*best)->record.structural_hash(), "lucky");
}

TEST_F(DatabaseTest, FailedRecordsAreNeverBestEvenWhenFaster) {
  MustCommit(
      {MakeRecord("w", DefaultTarget(), "wrong", {1e-6, 1e-6, 1e-6},
                  proto::MEASURE_WRONG_RESULT),
       MakeRecord("w", DefaultTarget(), "crash", {1e-6},
                  proto::MEASURE_RUN_ERROR),
       MakeRecord("w", DefaultTarget(), "slow", {5e-6}, proto::MEASURE_TIMEOUT),
       OkRecord("w", DefaultTarget(), "ok", 1e-3)});
  absl::StatusOr<std::vector<Match>> top = db_->Top("w", DefaultTarget(), 10);
  ASSERT_TRUE(top.ok()) << top.status();
  ASSERT_EQ(top->size(), 1u);
  EXPECT_EQ((*top)[0].record.structural_hash(), "ok");

  MustCommit({MakeRecord("only-failed", DefaultTarget(), "wrong", {1e-6},
                         proto::MEASURE_WRONG_RESULT)});
  absl::StatusOr<std::optional<Match>> best =
      db_->Best("only-failed", DefaultTarget());
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_FALSE(best->has_value());
  best = db_->Best("only-failed", DefaultTarget(), TargetMatching::kCompatible);
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_FALSE(best->has_value());
}

TEST_F(DatabaseTest, UnknownWorkloadOrTargetHasNoBest) {
  MustCommit({OkRecord("w", DefaultTarget(), "h", 1e-3)});
  absl::StatusOr<std::optional<Match>> best =
      db_->Best("unknown", DefaultTarget());
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_FALSE(best->has_value());
  best = db_->Best("w", MakeTarget("icelake", {"avx512f"}, 4));
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_FALSE(best->has_value());
}

TEST_F(DatabaseTest, LookupsMatchTargetsExactlyByDefault) {
  const proto::TargetInfo two_threads =
      MakeTarget("znver4", {"avx2", "fma"}, 2);
  MustCommit({OkRecord("w", two_threads, "h", 1e-3)});
  absl::StatusOr<std::optional<Match>> best = db_->Best("w", DefaultTarget());
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_FALSE(best->has_value());
  absl::StatusOr<std::vector<Match>> top = db_->Top("w", DefaultTarget(), 5);
  ASSERT_TRUE(top.ok()) << top.status();
  EXPECT_TRUE(top->empty());
}

TEST_F(DatabaseTest, CompatibleMatchingAnswersFromAnotherThreadCountAndSaysSo) {
  const proto::TargetInfo two_threads =
      MakeTarget("znver4", {"avx2", "fma"}, 2);
  MustCommit({OkRecord("w", two_threads, "h", 1e-3)});
  absl::StatusOr<std::optional<Match>> best =
      db_->Best("w", DefaultTarget(), TargetMatching::kCompatible);
  ASSERT_TRUE(best.ok()) << best.status();
  ASSERT_TRUE(best->has_value());
  EXPECT_FALSE((*best)->exact);
  EXPECT_EQ((*best)->record.target().canonical(), two_threads.canonical());
  EXPECT_NE((*best)->difference.find("measured with 2 threads, asked for 4"),
            std::string::npos)
      << (*best)->difference;
}

TEST_F(DatabaseTest, CompatibleMatchingAcceptsFewerFeaturesAndAnotherCpu) {
  const proto::TargetInfo wanted =
      MakeTarget("znver4", {"avx2", "avx512f", "fma"}, 4);
  const proto::TargetInfo older = MakeTarget("haswell", {"avx2", "fma"}, 8);
  MustCommit({OkRecord("w", older, "h", 1e-3)});
  absl::StatusOr<std::optional<Match>> best =
      db_->Best("w", wanted, TargetMatching::kCompatible);
  ASSERT_TRUE(best.ok()) << best.status();
  ASSERT_TRUE(best->has_value());
  EXPECT_FALSE((*best)->exact);
  EXPECT_NE((*best)->difference.find("cpu haswell, asked for znver4"),
            std::string::npos)
      << (*best)->difference;
}

TEST_F(DatabaseTest, CompatibleMatchingNeverAnswersFromAnIncompatibleTarget) {
  const proto::TargetInfo wanted = MakeTarget("haswell", {"avx2", "fma"}, 4);
  // Uses a feature the asked-for target lacks, however fast.
  const proto::TargetInfo more_features =
      MakeTarget("haswell", {"avx2", "avx512f", "fma"}, 4);
  // Another kind with the same features.
  const proto::TargetInfo cuda =
      MakeTarget("haswell", {"avx2", "fma"}, 4, "cuda");
  MustCommit({OkRecord("w", more_features, "h1", 1e-6),
              OkRecord("w", cuda, "h2", 1e-6)});
  absl::StatusOr<std::optional<Match>> best =
      db_->Best("w", wanted, TargetMatching::kCompatible);
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_FALSE(best->has_value()) << (*best)->record.target().canonical();
  absl::StatusOr<std::vector<Match>> top =
      db_->Top("w", wanted, 10, TargetMatching::kCompatible);
  ASSERT_TRUE(top.ok()) << top.status();
  EXPECT_TRUE(top->empty());
}

TEST_F(DatabaseTest, CompatibleMatchingPrefersTheExactTargetEvenWhenSlower) {
  const proto::TargetInfo two_threads =
      MakeTarget("znver4", {"avx2", "fma"}, 2);
  MustCommit({OkRecord("w", two_threads, "compatible", 1e-6),
              OkRecord("w", DefaultTarget(), "exact", 1e-3)});
  absl::StatusOr<std::optional<Match>> best =
      db_->Best("w", DefaultTarget(), TargetMatching::kCompatible);
  ASSERT_TRUE(best.ok()) << best.status();
  ASSERT_TRUE(best->has_value());
  EXPECT_TRUE((*best)->exact);
  EXPECT_EQ((*best)->difference, "");
  EXPECT_EQ((*best)->record.structural_hash(), "exact");
}

TEST_F(DatabaseTest, CompatibleMatchingTakesTheClosestTargetWithAnOkRecord) {
  const proto::TargetInfo wanted =
      MakeTarget("znver4", {"avx2", "avx512f", "fma"}, 4);
  const proto::TargetInfo same_threads =
      MakeTarget("haswell", {"avx2", "fma"}, 4);
  const proto::TargetInfo same_cpu = MakeTarget("znver4", {"avx2", "fma"}, 16);
  MustCommit(
      {OkRecord("w", same_cpu, "same-cpu", 1e-6),
       OkRecord("w", same_threads, "same-threads", 1e-3),
       // The exact target has only a failed record: it cannot answer.
       MakeRecord("w", wanted, "broken", {1e-9}, proto::MEASURE_WRONG_RESULT)});
  absl::StatusOr<std::optional<Match>> best =
      db_->Best("w", wanted, TargetMatching::kCompatible);
  ASSERT_TRUE(best.ok()) << best.status();
  ASSERT_TRUE(best->has_value());
  EXPECT_FALSE((*best)->exact);
  EXPECT_EQ((*best)->record.structural_hash(), "same-threads");
}

// Reading records

TEST_F(DatabaseTest, RecordsOfTaskAndOfJobListEveryStatusInCommitOrder) {
  proto::Record a = OkRecord("w", DefaultTarget(), "h1", 1e-3);
  proto::Record b =
      MakeRecord("w", DefaultTarget(), "h2", {}, proto::MEASURE_BUILD_ERROR);
  proto::Record c =
      OkRecord("w", MakeTarget("znver4", {"avx2"}, 1), "h3", 1e-3);
  proto::Record d = OkRecord("v", DefaultTarget(), "h4", 1e-3);
  a.set_job("j1");
  b.set_job("j2");
  c.set_job("j1");
  MustCommit({a, b});
  MustCommit({c, d});

  std::vector<proto::Record> task = Task("w", DefaultTarget());
  ASSERT_EQ(task.size(), 2u);
  EXPECT_EQ(task[0].structural_hash(), "h1");
  EXPECT_EQ(task[1].structural_hash(), "h2");
  EXPECT_EQ(task[1].status(), proto::MEASURE_BUILD_ERROR);

  absl::StatusOr<std::vector<proto::Record>> job = db_->RecordsOfJob("j1");
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_EQ(job->size(), 2u);
  EXPECT_EQ((*job)[0].structural_hash(), "h1");
  EXPECT_EQ((*job)[1].structural_hash(), "h3");
  job = db_->RecordsOfJob("no-such-job");
  ASSERT_TRUE(job.ok());
  EXPECT_TRUE(job->empty());
  EXPECT_TRUE(Task("nothing", DefaultTarget()).empty());
}

TEST_F(DatabaseTest, RecordsOfTargetShareTheLimitFairlyNewestFirst) {
  // "big" has five records, "small" two, "tiny" one, committed interleaved;
  // records of another target and of the excluded workload never answer.
  const proto::TargetInfo elsewhere = MakeTarget("znver4", {"avx2"}, 1);
  MustCommit({OkRecord("big", DefaultTarget(), "b1", 1e-3),
              OkRecord("small", DefaultTarget(), "s1", 1e-3),
              OkRecord("big", DefaultTarget(), "b2", 1e-3),
              OkRecord("tiny", DefaultTarget(), "t1", 1e-3),
              OkRecord("big", elsewhere, "x1", 1e-3),
              OkRecord("mine", DefaultTarget(), "m1", 1e-3)});
  MustCommit(
      {MakeRecord("big", DefaultTarget(), "b3", {}, proto::MEASURE_BUILD_ERROR),
       OkRecord("small", DefaultTarget(), "s2", 1e-3),
       OkRecord("big", DefaultTarget(), "b4", 1e-3),
       OkRecord("big", DefaultTarget(), "b5", 1e-3),
       OkRecord("mine", DefaultTarget(), "m2", 1e-3)});
  const std::string target = DefaultTarget().canonical();
  auto hashes = [&](int64_t limit, const std::vector<std::string>& except) {
    absl::StatusOr<std::vector<proto::Record>> records =
        db_->RecordsOfTarget(target, limit, except);
    EXPECT_TRUE(records.ok()) << records.status();
    std::vector<std::string> out;
    if (!records.ok()) return out;
    for (const proto::Record& r : *records) {
      EXPECT_EQ(r.target().canonical(), target);
      out.push_back(r.structural_hash());
    }
    return out;
  };
  // Turn by turn: every workload's newest (newest first), then every
  // workload's second newest, ...; any status.
  EXPECT_EQ(hashes(100, {"mine"}),
            (std::vector<std::string>{"b5", "s2", "t1", "b4", "s1", "b3", "b2",
                                      "b1"}));
  // The limit cuts the turns, so the big workload does not crowd out the
  // small ones.
  EXPECT_EQ(hashes(4, {"mine"}),
            (std::vector<std::string>{"b5", "s2", "t1", "b4"}));
  EXPECT_EQ(hashes(3, {"mine", "tiny"}),
            (std::vector<std::string>{"b5", "s2", "b4"}));
  EXPECT_EQ(hashes(3, {}), (std::vector<std::string>{"m2", "b5", "s2"}));
  EXPECT_TRUE(hashes(0, {}).empty());
  absl::StatusOr<std::vector<proto::Record>> none =
      db_->RecordsOfTarget("llvm -mcpu=nothing", 10);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
}

TEST_F(DatabaseTest, RecordsOfTargetAfterFollowWhatIsCommittedInOrder) {
  EXPECT_EQ(db_->LastRecordId().value(), 0);
  const proto::TargetInfo elsewhere = MakeTarget("znver4", {"avx2"}, 1);
  MustCommit(
      {OkRecord("a", DefaultTarget(), "a1", 1e-3),
       OkRecord("b", elsewhere, "x1", 1e-3),
       MakeRecord("b", DefaultTarget(), "b1", {}, proto::MEASURE_BUILD_ERROR)});
  const int64_t start = db_->LastRecordId().value();
  MustCommit({OkRecord("a", DefaultTarget(), "a2", 1e-3),
              OkRecord("b", elsewhere, "x2", 1e-3),
              OkRecord("b", DefaultTarget(), "b2", 1e-3),
              OkRecord("a", DefaultTarget(), "a3", 1e-3)});
  const std::string target = DefaultTarget().canonical();
  auto after = [&](int64_t id, int64_t limit) {
    std::vector<std::string> out;
    absl::StatusOr<std::vector<proto::Record>> records =
        db_->RecordsOfTargetAfter(target, id, limit);
    EXPECT_TRUE(records.ok()) << records.status();
    if (!records.ok()) return out;
    int64_t last = id;
    for (const proto::Record& r : *records) {
      EXPECT_GT(r.id(), last);  // ids set, in commit order
      last = r.id();
      out.push_back(r.structural_hash());
    }
    return out;
  };
  // Any workload and status of the target; none of another target.
  EXPECT_EQ(after(0, 100),
            (std::vector<std::string>{"a1", "b1", "a2", "b2", "a3"}));
  EXPECT_EQ(after(start, 100), (std::vector<std::string>{"a2", "b2", "a3"}));
  // A page, then the next from its last id.
  EXPECT_EQ(after(start, 2), (std::vector<std::string>{"a2", "b2"}));
  const int64_t page_end =
      db_->RecordsOfTargetAfter(target, start, 2).value().back().id();
  EXPECT_EQ(after(page_end, 2), (std::vector<std::string>{"a3"}));
  EXPECT_TRUE(after(db_->LastRecordId().value(), 100).empty());
  EXPECT_TRUE(after(0, 0).empty());
}

TEST_F(DatabaseTest, IsMeasuredAndMeasuredHashesCoverEveryStatusOfTheTask) {
  MustCommit(
      {OkRecord("w", DefaultTarget(), "ok", 1e-3),
       MakeRecord("w", DefaultTarget(), "crashed", {},
                  proto::MEASURE_RUN_ERROR),
       OkRecord("w", DefaultTarget(), "ok", 2e-3),  // measured twice
       OkRecord("w", MakeTarget("znver4", {"avx2"}, 1), "elsewhere", 1e-3)});
  const std::string target = DefaultTarget().canonical();
  for (const char* hash : {"ok", "crashed"}) {
    absl::StatusOr<bool> measured = db_->IsMeasured("w", target, hash);
    ASSERT_TRUE(measured.ok()) << measured.status();
    EXPECT_TRUE(*measured) << hash;
  }
  EXPECT_FALSE(*db_->IsMeasured("w", target, "elsewhere"));
  EXPECT_FALSE(*db_->IsMeasured("w", target, "never"));
  EXPECT_FALSE(*db_->IsMeasured("unknown", target, "ok"));

  absl::StatusOr<std::vector<std::string>> hashes =
      db_->MeasuredHashes("w", target);
  ASSERT_TRUE(hashes.ok()) << hashes.status();
  std::sort(hashes->begin(), hashes->end());
  EXPECT_EQ(*hashes, (std::vector<std::string>{"crashed", "ok"}));
}

TEST_F(DatabaseTest, TasksSummarizeEveryWorkloadAndTargetPair) {
  const proto::TargetInfo one = MakeTarget("znver4", {"avx2"}, 1);
  MustCommit({OkRecord("a", DefaultTarget(), "h1", 3e-3),
              OkRecord("a", DefaultTarget(), "h2", 2e-3),
              MakeRecord("a", DefaultTarget(), "h3", {1e-6},
                         proto::MEASURE_WRONG_RESULT),
              MakeRecord("a", one, "h4", {}, proto::MEASURE_BUILD_ERROR),
              OkRecord("b", one, "h5", 1e-3)});
  absl::StatusOr<std::vector<TaskSummary>> tasks = db_->Tasks();
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  ASSERT_EQ(tasks->size(), 3u);
  std::map<std::pair<std::string, std::string>, TaskSummary> by_key;
  for (const TaskSummary& task : *tasks)
    by_key[{task.workload_key, task.target}] = task;
  const TaskSummary& a = by_key[{"a", DefaultTarget().canonical()}];
  EXPECT_EQ(a.workload, testing::WorkloadForm("a"));
  EXPECT_EQ(a.records, 3);
  EXPECT_EQ(a.ok_records, 2);
  ASSERT_TRUE(a.best_median_s.has_value());
  EXPECT_EQ(*a.best_median_s, 2e-3);
  const TaskSummary& a_one = by_key[{"a", one.canonical()}];
  EXPECT_EQ(a_one.records, 1);
  EXPECT_EQ(a_one.ok_records, 0);
  EXPECT_FALSE(a_one.best_median_s.has_value());
  EXPECT_EQ((by_key[{"b", one.canonical()}].records), 1);
}

TEST_F(DatabaseTest, StatsCountEverything) {
  proto::Record a = OkRecord("a", DefaultTarget(), "h1", 1e-3);
  a.set_job("j");
  MustCommit({a, OkRecord("a", DefaultTarget(), "h2", 1e-3),
              MakeRecord("b", MakeTarget("znver4", {}, 1), "h3", {},
                         proto::MEASURE_TIMEOUT),
              MakeRecord("b", DefaultTarget(), "h4", {1e-3},
                         proto::MEASURE_WRONG_RESULT)});
  absl::StatusOr<Stats> stats = db_->GetStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->schema_version, Database::CurrentSchemaVersion());
  EXPECT_EQ(stats->workloads, 2);
  EXPECT_EQ(stats->targets, 2);
  EXPECT_EQ(stats->tasks, 3);
  EXPECT_EQ(stats->jobs, 1);
  EXPECT_EQ(stats->records, 4);
  ASSERT_EQ(stats->records_by_status.size(),
            static_cast<size_t>(proto::MeasureStatus_ARRAYSIZE));
  EXPECT_EQ(stats->records_by_status[proto::MEASURE_OK], 2);
  EXPECT_EQ(stats->records_by_status[proto::MEASURE_TIMEOUT], 1);
  EXPECT_EQ(stats->records_by_status[proto::MEASURE_WRONG_RESULT], 1);
  EXPECT_EQ(stats->records_by_status[proto::MEASURE_RUN_ERROR], 0);
  EXPECT_GT(stats->file_bytes, 0);
}

TEST_F(DatabaseTest, ForEachRecordVisitsInCommitOrderAndStopsAtAnError) {
  for (int i = 0; i < 4; ++i) {
    MustCommit({OkRecord("w", DefaultTarget(), absl::StrCat("h", i), 1e-3)});
  }
  std::vector<std::string> seen;
  absl::Status visited = db_->ForEachRecord([&](const proto::Record& record) {
    seen.push_back(record.structural_hash());
    return absl::OkStatus();
  });
  ASSERT_TRUE(visited.ok()) << visited;
  EXPECT_EQ(seen, (std::vector<std::string>{"h0", "h1", "h2", "h3"}));

  seen.clear();
  visited = db_->ForEachRecord([&](const proto::Record& record) {
    seen.push_back(record.structural_hash());
    return seen.size() == 2 ? absl::CancelledError("enough") : absl::OkStatus();
  });
  EXPECT_EQ(visited.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(seen.size(), 2u);
  // Nothing is left open: a batch commits after the early stop.
  EXPECT_EQ(MustCommit({OkRecord("w", DefaultTarget(), "h9", 1e-3)}).added, 1);
}

TEST_F(DatabaseTest, ForEachRecordVisitorMayRunOtherQueries) {
  MustCommit({OkRecord("w", DefaultTarget(), "h1", 2e-3),
              OkRecord("w", DefaultTarget(), "h2", 1e-3)});
  int bests = 0;
  absl::Status visited =
      db_->ForEachRecord([&](const proto::Record& record) -> absl::Status {
        absl::StatusOr<std::optional<Match>> best =
            db_->Best(record.workload_key(), record.target());
        if (!best.ok()) return best.status();
        if (best->has_value() && (*best)->record.structural_hash() == "h2")
          ++bests;
        absl::StatusOr<Stats> stats = db_->GetStats();
        if (!stats.ok()) return stats.status();
        absl::StatusOr<bool> measured =
            db_->IsMeasured("w", DefaultTarget().canonical(), "h1");
        return measured.status();
      });
  EXPECT_TRUE(visited.ok()) << visited;
  EXPECT_EQ(bests, 2);
}

// ContentStamp

TEST_F(DatabaseTest, ContentStampChangesWithTheRecordsAndOnlyWithThem) {
  absl::StatusOr<std::string> empty = db_->ContentStamp();
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_NE(empty->find(" records 0 "), std::string::npos) << *empty;
  MustCommit({OkRecord("a", DefaultTarget(), "fast", 1e-3)});
  const std::string one = *db_->ContentStamp();
  EXPECT_NE(one, *empty);
  EXPECT_EQ(*db_->ContentStamp(), one);  // reading changes nothing
  // A job row, a cost model or a commit of a duplicate are not records
  // a lookup answers from.
  proto::Job job;
  job.set_id("j");
  job.set_state("running");
  ASSERT_TRUE(db_->PutJob(job).ok());
  MustCommit({OkRecord("a", DefaultTarget(), "fast", 1e-3)});
  EXPECT_EQ(*db_->ContentStamp(), one);
  MustCommit({OkRecord("a", DefaultTarget(), "mid", 2e-3)});
  const std::string two = *db_->ContentStamp();
  EXPECT_NE(two, one);
  ASSERT_EQ(*db_->Prune(1), 1);
  EXPECT_NE(*db_->ContentStamp(), two);

  // The same records committed into another file in the same order: the
  // same stamp (it is what a lookup answers from, not where the file is).
  TempFolder other_folder;
  absl::StatusOr<std::unique_ptr<Database>> other =
      Database::Open(other_folder.File("other.db"), CreateMode());
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_TRUE(
      (*other)->Commit({OkRecord("a", DefaultTarget(), "fast", 1e-3)}).ok());
  EXPECT_EQ(*(*other)->ContentStamp(), one);
}

}  // namespace
}  // namespace lathe::db
