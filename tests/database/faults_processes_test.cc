// Tests of database/database.h under faults: readers in other processes
// beside a writer, and a writer killed mid-batch (its records and batch
// rows).
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "database/database.h"
#include "gtest/gtest.h"
#include "tests/database/faults_helpers.h"
#include "tests/database/test_records.h"

namespace lathe::db {
namespace {

using testing::Batch;
using testing::BatchCounts;
using testing::CheckProblems;
using testing::Child;
using testing::CreateDatabase;
using testing::DefaultTarget;
using testing::IncompleteBatches;
using testing::kBatchSize;
using testing::ReadAll;
using testing::ReadOnlyMode;
using testing::ReadWriteMode;
using testing::StartChild;
using testing::TempFolder;
using testing::WaitChild;
using testing::WriteAll;

// Readers and a writer in other processes

TEST(Faults, ReadersInOtherProcessesSeeOnlyWholeBatches) {
  constexpr int kBatches = 200;
  constexpr int kReaders = 3;
  TempFolder folder;
  const std::string path = folder.File("lathe.db");
  ASSERT_TRUE(CreateDatabase(path, {}).ok());

  // Reader 0 tells the writer each total it sees; the writer waits for it at
  // a few points, so readers are sure to look while batches are arriving.
  int progress[2];
  ASSERT_EQ(pipe(progress), 0);
  auto reader = [&](int index) -> std::string {
    if (index != 0) close(progress[1]);
    close(progress[0]);
    // A write to the writer's pipe after it is gone fails rather than kills.
    signal(SIGPIPE, SIG_IGN);
    bool reporting = index == 0;
    absl::StatusOr<std::unique_ptr<Database>> db =
        Database::Open(path, ReadOnlyMode());
    if (!db.ok())
      return absl::StrCat("reader ", index, ": ", db.status().ToString());
    int64_t last = -1;
    int looks = 0;
    while (true) {
      ++looks;
      std::map<int, int> counts;
      int64_t total = 0;
      if (index == 1) {
        // Stats and then every record: two snapshots, each whole.
        absl::StatusOr<Stats> stats = (*db)->GetStats();
        if (!stats.ok())
          return absl::StrCat("reader 1: ", stats.status().ToString());
        if (stats->records % kBatchSize != 0) {
          return absl::StrCat("reader 1: stats count ", stats->records,
                              " records");
        }
        absl::StatusOr<std::map<int, int>> all = BatchCounts(**db);
        if (!all.ok())
          return absl::StrCat("reader 1: ", all.status().ToString());
        counts = *all;
      } else {
        absl::StatusOr<std::vector<proto::Record>> task =
            (*db)->RecordsOfTask("w", DefaultTarget().canonical());
        if (!task.ok())
          return absl::StrCat("reader ", index, ": ", task.status().ToString());
        for (const proto::Record& record : *task) {
          int batch = -1;
          absl::SimpleAtoi(record.runner().substr(6), &batch);
          ++counts[batch];
        }
      }
      for (const auto& [batch, count] : counts) total += count;
      if (std::string problems = IncompleteBatches(counts); !problems.empty()) {
        return absl::StrCat("reader ", index, " at look ", looks, ": ",
                            problems);
      }
      if (total < last)
        return absl::StrCat("reader ", index, ": total went back to ", total);
      // Once the writer has passed its last wait it stops listening.
      if (index == 0 && total != last && reporting) {
        reporting = WriteAll(progress[1], &total, sizeof total);
      }
      last = total;
      if (total == int64_t{kBatches} * kBatchSize) return "";
    }
  };
  std::vector<Child> readers;
  for (int i = 0; i < kReaders; ++i)
    readers.push_back(StartChild([&, i] { return reader(i); }));
  close(progress[1]);
  Child writer = StartChild([&]() -> std::string {
    absl::StatusOr<std::unique_ptr<Database>> db =
        Database::Open(path, ReadWriteMode());
    if (!db.ok()) return absl::StrCat("writer: ", db.status().ToString());
    for (int b = 0; b < kBatches; ++b) {
      absl::StatusOr<CommitResult> committed = (*db)->Commit(Batch(b));
      if (!committed.ok())
        return absl::StrCat("writer: batch ", b, ": ",
                            committed.status().ToString());
      if (committed->added != kBatchSize)
        return absl::StrCat("writer: batch ", b, " added ", committed->added);
      const int64_t done = int64_t{b + 1} * kBatchSize;
      if ((b + 1) % 50 == 0 && b + 1 < kBatches) {
        int64_t seen = 0;
        while (seen < done) {
          if (!ReadAll(progress[0], &seen, sizeof seen))
            return "writer: reader 0 went away";
        }
      }
    }
    return "";
  });
  close(progress[0]);

  EXPECT_EQ(WaitChild(writer), "") << "writer";
  for (int i = 0; i < kReaders; ++i)
    EXPECT_EQ(WaitChild(readers[i]), "") << "reader " << i;

  absl::StatusOr<std::unique_ptr<Database>> db =
      Database::Open(path, ReadOnlyMode());
  ASSERT_TRUE(db.ok()) << db.status();
  absl::StatusOr<std::map<int, int>> counts = BatchCounts(**db);
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(counts->size(), static_cast<size_t>(kBatches));
  EXPECT_EQ(IncompleteBatches(*counts), "");
}

// A writer killed mid-batch

TEST(Faults, AWriterKilledMidBatchLosesNoCommittedBatchAndLeavesNoPartOfOne) {
  std::mt19937 rng(20240611);
  for (int round = 0; round < 5; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    TempFolder folder;
    const std::string path = folder.File("lathe.db");
    ASSERT_TRUE(CreateDatabase(path, {}).ok());
    // How many reports to wait for, then a little more time, before the kill.
    const int reports_before_kill =
        std::uniform_int_distribution<int>(1, 80)(rng);
    const int extra_us = std::uniform_int_distribution<int>(0, 3000)(rng);

    int reports[2];
    ASSERT_EQ(pipe(reports), 0);
    Child writer = StartChild([&]() -> std::string {
      close(reports[0]);
      // Not durable: a process kill must lose nothing even without fsync.
      absl::StatusOr<std::unique_ptr<Database>> db =
          Database::Open(path, ReadWriteMode());
      if (!db.ok()) return db.status().ToString();
      for (int32_t b = 0;; ++b) {
        // Big records fill the log to a checkpoint every few dozen batches,
        // so some kills land in one. Each batch has its row, as a tuning
        // run's, its finish time saying which batch it is.
        TuningBatch row;
        row.job = "killed";
        row.workload_key = "w";
        row.target = DefaultTarget().canonical();
        row.trials = kBatchSize;
        row.finished_ms = b + 1;
        absl::StatusOr<CommitResult> committed =
            (*db)->Commit(Batch(b, kBatchSize, 100), &row);
        if (!committed.ok())
          return absl::StrCat("batch ", b, ": ", committed.status().ToString());
        if (!WriteAll(reports[1], &b, sizeof b)) return "cannot report";
      }
    });
    close(reports[1]);
    std::vector<int32_t> reported;
    int32_t b = 0;
    while (static_cast<int>(reported.size()) < reports_before_kill &&
           ReadAll(reports[0], &b, sizeof b)) {
      reported.push_back(b);
    }
    // A random moment in the middle of some later batch (the randomness
    // picks where; correctness does not depend on the timing).
    usleep(static_cast<useconds_t>(extra_us));
    kill(writer.pid, SIGKILL);
    const std::string ended = WaitChild(writer);
    EXPECT_TRUE(absl::StrContains(ended, "killed by signal 9")) << ended;
    // Whatever the writer reported before it died is still in the pipe.
    while (ReadAll(reports[0], &b, sizeof b)) reported.push_back(b);
    close(reports[0]);
    ASSERT_GE(static_cast<int>(reported.size()), reports_before_kill);

    absl::StatusOr<std::unique_ptr<Database>> db =
        Database::Open(path, ReadWriteMode());
    ASSERT_TRUE(db.ok()) << db.status();
    absl::StatusOr<std::map<int, int>> counts = BatchCounts(**db);
    ASSERT_TRUE(counts.ok()) << counts.status();
    EXPECT_EQ(IncompleteBatches(*counts), "");
    for (int32_t batch : reported)
      EXPECT_EQ((*counts)[batch], kBatchSize) << "batch " << batch;
    // At most the batch whose report the kill cut off is there unreported.
    EXPECT_LE(counts->size(), reported.size() + 1);
    // Every batch of records has its row and every row its records.
    absl::StatusOr<std::vector<TuningBatch>> rows =
        (*db)->Batches("w", DefaultTarget().canonical());
    ASSERT_TRUE(rows.ok()) << rows.status();
    ASSERT_EQ(rows->size(), counts->size());
    for (size_t i = 0; i < rows->size(); ++i) {
      EXPECT_EQ((*rows)[i].finished_ms, static_cast<int64_t>(i) + 1);
      EXPECT_EQ((*rows)[i].index, static_cast<int64_t>(i));
    }
    EXPECT_EQ(CheckProblems(**db), "");
    // The database takes new batches after the crash.
    absl::StatusOr<CommitResult> committed = (*db)->Commit(Batch(100000));
    ASSERT_TRUE(committed.ok()) << committed.status();
    EXPECT_EQ(committed->added, kBatchSize);
  }
}

}  // namespace
}  // namespace lathe::db
