// Tests of database/database.h under faults: a full disk (a size limit of
// the database, and the operating system's file size limit).
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
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
using testing::IncompleteBatches;
using testing::kBatchSize;
using testing::ReadAll;
using testing::ReadWriteMode;
using testing::StartChild;
using testing::TempFolder;
using testing::WaitChild;
using testing::WriteAll;

// A full disk

TEST(Faults, ASizeLimitRefusesTheBatchThatWouldPassItAndKeepsTheRest) {
  TempFolder folder;
  const std::string path = folder.File("lathe.db");
  ASSERT_TRUE(CreateDatabase(path, Batch(0)).ok());
  const int64_t size = testing::FileSize(path);
  ASSERT_GT(size, 0);
  {
    OpenOptions limited = ReadWriteMode();
    limited.max_size_bytes = size + 256 * 1024;
    absl::StatusOr<std::unique_ptr<Database>> db =
        Database::Open(path, limited);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE((*db)->Commit(Batch(1)).ok());
    // About 2 MB of records against the 256 kB left.
    absl::StatusOr<CommitResult> too_big =
        (*db)->Commit(Batch(2, 40 * kBatchSize, 20));
    ASSERT_FALSE(too_big.ok());
    EXPECT_EQ(too_big.status().code(), absl::StatusCode::kResourceExhausted)
        << too_big.status();
    EXPECT_TRUE(absl::StrContains(too_big.status().message(), path))
        << too_big.status();
    // Says what happened and what the limit is, without blaming a record.
    EXPECT_TRUE(absl::StrContains(
        too_big.status().message(),
        absl::StrCat("size limit is ", limited.max_size_bytes, " bytes")))
        << too_big.status();
    EXPECT_TRUE(
        absl::StrContains(too_big.status().message(), "batch not committed"))
        << too_big.status();
    EXPECT_TRUE(absl::StrContains(too_big.status().message(), "full"))
        << too_big.status();
    EXPECT_FALSE(absl::StrContains(too_big.status().message(), "record "))
        << too_big.status();

    // Nothing of the refused batch; all of the earlier ones.
    absl::StatusOr<std::map<int, int>> counts = BatchCounts(**db);
    ASSERT_TRUE(counts.ok()) << counts.status();
    EXPECT_EQ(counts->size(), 2u);
    EXPECT_EQ(IncompleteBatches(*counts), "");
    // The same object takes a batch that fits.
    absl::StatusOr<CommitResult> fits = (*db)->Commit(Batch(3));
    ASSERT_TRUE(fits.ok()) << fits.status();
    EXPECT_EQ(fits->added, kBatchSize);
    EXPECT_EQ(CheckProblems(**db), "");
  }
  EXPECT_LE(testing::FileSize(path), size + 256 * 1024);
  // Without the limit the big batch goes in.
  absl::StatusOr<std::unique_ptr<Database>> db =
      Database::Open(path, ReadWriteMode());
  ASSERT_TRUE(db.ok()) << db.status();
  absl::StatusOr<CommitResult> big =
      (*db)->Commit(Batch(2, 40 * kBatchSize, 20));
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(big->added, 40 * kBatchSize);
}

TEST(Faults, TheOperatingSystemsFileSizeLimitFailsACommitCleanly) {
  TempFolder folder;
  const std::string path = folder.File("lathe.db");
  ASSERT_TRUE(CreateDatabase(path, Batch(0)).ok());
  const rlim_t limit =
      static_cast<rlim_t>(testing::FileSize(path)) + 512 * 1024;

  int reports[2];
  ASSERT_EQ(pipe(reports), 0);
  Child writer = StartChild([&]() -> std::string {
    close(reports[0]);
    // Past the limit write() fails with EFBIG instead of killing us.
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {limit, limit};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
      return absl::StrCat("setrlimit: ", std::strerror(errno));
    absl::StatusOr<std::unique_ptr<Database>> db =
        Database::Open(path, ReadWriteMode());
    if (!db.ok()) return absl::StrCat("open: ", db.status().ToString());
    for (int32_t b = 1; b < 100000; ++b) {
      absl::StatusOr<CommitResult> committed =
          (*db)->Commit(Batch(b, kBatchSize, 50));
      if (!committed.ok()) {
        // Reported as the last word: the failure and its message.
        const int32_t failed = -1;
        WriteAll(reports[1], &failed, sizeof failed);
        const std::string message(committed.status().ToString());
        if (!absl::StrContains(message, path))
          return absl::StrCat("unnamed file: ", message);
        return "";
      }
      WriteAll(reports[1], &b, sizeof b);
    }
    return "the limit was never reached";
  });
  close(reports[1]);
  std::vector<int32_t> committed;
  bool failed = false;
  int32_t b = 0;
  while (ReadAll(reports[0], &b, sizeof b)) {
    if (b < 0) {
      failed = true;
    } else {
      committed.push_back(b);
    }
  }
  close(reports[0]);
  EXPECT_EQ(WaitChild(writer), "");
  EXPECT_TRUE(failed) << "no commit failed";
  EXPECT_GT(committed.size(), 0u);

  absl::StatusOr<std::unique_ptr<Database>> db =
      Database::Open(path, ReadWriteMode());
  ASSERT_TRUE(db.ok()) << db.status();
  absl::StatusOr<std::map<int, int>> counts = BatchCounts(**db);
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(IncompleteBatches(*counts), "");
  EXPECT_EQ(counts->size(), committed.size() + 1);  // and batch 0
  for (int32_t batch : committed)
    EXPECT_EQ((*counts)[batch], kBatchSize) << batch;
  EXPECT_EQ(CheckProblems(**db), "");
}

}  // namespace
}  // namespace lathe::db
