// Tests of database/scratch_database.h: a database of a process's own, at a
// path nobody can predict, in a shared temporary folder.
#include "database/scratch_database.h"

#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "database/database.h"
#include "gtest/gtest.h"
#include "tests/support/temp_folder.h"

namespace lathe::db {
namespace {

using test_support::TempFolder;

TEST(ScratchDatabase, LiesInAFreshPrivateFolderOfARandomName) {
  TempFolder shared;
  absl::StatusOr<std::unique_ptr<ScratchDatabase>> a =
      ScratchDatabase::Create(shared.path(), "lathe-simulated-");
  absl::StatusOr<std::unique_ptr<ScratchDatabase>> b =
      ScratchDatabase::Create(shared.path(), "lathe-simulated-");
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_NE((*a)->folder(), (*b)->folder());
  EXPECT_TRUE(
      absl::StartsWith((*a)->folder(), shared.path() + "/lathe-simulated-"));
  EXPECT_EQ((*a)->path(), (*a)->folder() + "/records.db");
  struct stat info;
  ASSERT_EQ(lstat((*a)->folder().c_str(), &info), 0);
  EXPECT_TRUE(S_ISDIR(info.st_mode));
  EXPECT_EQ(info.st_mode & 0777, 0700u) << "others can reach the database";
  EXPECT_EQ(info.st_uid, geteuid());
}

TEST(ScratchDatabase, HoldsADatabaseAndRemovesItAllWhenItGoes) {
  TempFolder shared;
  std::string folder;
  {
    absl::StatusOr<std::unique_ptr<ScratchDatabase>> scratch =
        ScratchDatabase::Create(shared.path(), "lathe-simulated-");
    ASSERT_TRUE(scratch.ok()) << scratch.status();
    folder = (*scratch)->folder();
    {
      absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(
          (*scratch)->path(),
          OpenOptions{.mode = OpenOptions::Mode::kCreate, .durable = false});
      ASSERT_TRUE(db.ok()) << db.status();
    }
    EXPECT_EQ(access((*scratch)->path().c_str(), F_OK), 0);
  }
  EXPECT_NE(access(folder.c_str(), F_OK), 0) << folder << " is left behind";
}

TEST(ScratchDatabase, NamesTheParentItCannotUse) {
  absl::StatusOr<std::unique_ptr<ScratchDatabase>> scratch =
      ScratchDatabase::Create("/nonexistent-lathe-folder", "x-");
  ASSERT_FALSE(scratch.ok());
  EXPECT_TRUE(absl::StrContains(scratch.status().message(),
                                "/nonexistent-lathe-folder: cannot create"))
      << scratch.status();
}

}  // namespace
}  // namespace lathe::db
