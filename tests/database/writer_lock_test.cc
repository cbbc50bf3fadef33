// Tests of database/writer_lock.h: one tuning process per database.
#include "database/writer_lock.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/support/temp_folder.h"

namespace lathe::db {
namespace {

using test_support::TempFolder;

TEST(WriterLock, RefusesASecondHolderNamingTheFirstAndTheDatabase) {
  TempFolder folder;
  const std::string db = folder.File("t.db");
  absl::StatusOr<std::unique_ptr<WriterLock>> first =
      WriterLock::Acquire(db, "lathe tune");
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<std::unique_ptr<WriterLock>> second =
      WriterLock::Acquire(db, "lathe serve");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(second.status().message(),
            absl::StrCat(db, ": another lathe tune (pid ", getpid(),
                         ") runs on this database (it holds ", db,
                         ".lock); one tuning process per database"));
}

std::string Contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(WriterLock, RefusesALockThatIsASymbolicLinkAndLeavesItsTargetAlone) {
  TempFolder folder;
  const std::string db = folder.File("t.db");
  const std::string victim = folder.File("victim.txt");
  {
    std::ofstream out(victim);
    out << "precious contents, longer than a holder's line\n";
  }
  const std::string before = Contents(victim);
  ASSERT_EQ(symlink(victim.c_str(), WriterLockPath(db).c_str()), 0);
  absl::StatusOr<std::unique_ptr<WriterLock>> lock =
      WriterLock::Acquire(db, "lathe tune");
  ASSERT_FALSE(lock.ok()) << "took a lock through a link";
  EXPECT_EQ(lock.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(lock.status().message(),
            absl::StrCat(WriterLockPath(db),
                         ": the database's lock is a symbolic link; refusing "
                         "to follow it (remove it)"));
  EXPECT_EQ(Contents(victim), before);
  // A dangling link is not followed to create its target either.
  const std::string db2 = folder.File("u.db");
  const std::string missing = folder.File("created-through-link");
  ASSERT_EQ(symlink(missing.c_str(), WriterLockPath(db2).c_str()), 0);
  EXPECT_FALSE(WriterLock::Acquire(db2, "lathe tune").ok());
  EXPECT_NE(access(missing.c_str(), F_OK), 0);
}

TEST(WriterLock, RefusesALockThatIsNotARegularFileOrHasOtherNames) {
  TempFolder folder;
  const std::string fifo_db = folder.File("fifo.db");
  ASSERT_EQ(mkfifo(WriterLockPath(fifo_db).c_str(), 0600), 0);
  absl::StatusOr<std::unique_ptr<WriterLock>> lock =
      WriterLock::Acquire(fifo_db, "lathe tune");
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.status().message(),
            absl::StrCat(WriterLockPath(fifo_db),
                         ": the database's lock is not a regular file; "
                         "refusing to use it (remove it)"));

  const std::string linked_db = folder.File("linked.db");
  const std::string victim = folder.File("victim.txt");
  {
    std::ofstream out(victim);
    out << "precious contents\n";
  }
  ASSERT_EQ(link(victim.c_str(), WriterLockPath(linked_db).c_str()), 0);
  lock = WriterLock::Acquire(linked_db, "lathe tune");
  ASSERT_FALSE(lock.ok());
  EXPECT_NE(lock.status().message().find("other names (hard links)"),
            std::string::npos)
      << lock.status();
  EXPECT_EQ(Contents(victim), "precious contents\n");
}

TEST(WriterLock, IsFreeAgainOnceItsHolderIsGone) {
  TempFolder folder;
  const std::string db = folder.File("t.db");
  ASSERT_TRUE(WriterLock::Acquire(db, "lathe tune").ok());  // destroyed at once
  absl::StatusOr<std::unique_ptr<WriterLock>> again =
      WriterLock::Acquire(db, "lathe serve");
  ASSERT_TRUE(again.ok()) << again.status();
  // The next refusal names the holder of now, not the one before.
  absl::StatusOr<std::unique_ptr<WriterLock>> third =
      WriterLock::Acquire(db, "lathe tune");
  ASSERT_FALSE(third.ok());
  EXPECT_NE(third.status().message().find("another lathe serve (pid "),
            std::string::npos)
      << third.status();
}

TEST(WriterLock, HoldsAgainstAnotherProcessUntilThatProcessEnds) {
  TempFolder folder;
  const std::string db = folder.File("t.db");
  int to_parent[2], to_child[2];
  ASSERT_EQ(pipe(to_parent), 0);
  ASSERT_EQ(pipe(to_child), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Holds the lock until told, then ends without releasing it itself.
    absl::StatusOr<std::unique_ptr<WriterLock>> lock =
        WriterLock::Acquire(db, "lathe serve");
    const char ready = lock.ok() ? 'y' : 'n';
    if (write(to_parent[1], &ready, 1) != 1) _exit(2);
    char go;
    if (read(to_child[0], &go, 1) != 1) _exit(3);
    lock->release();  // leaked: the kernel drops the lock as the process ends
    _exit(0);
  }
  char ready = 0;
  ASSERT_EQ(read(to_parent[0], &ready, 1), 1);
  ASSERT_EQ(ready, 'y');
  absl::StatusOr<std::unique_ptr<WriterLock>> refused =
      WriterLock::Acquire(db, "lathe tune");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(
                absl::StrCat("another lathe serve (pid ", child, ")")),
            std::string::npos)
      << refused.status();
  ASSERT_EQ(write(to_child[1], "g", 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(WriterLock::Acquire(db, "lathe tune").ok());
  for (int fd : {to_parent[0], to_parent[1], to_child[0], to_child[1]})
    close(fd);
}

TEST(WriterLock, SaysWhyWhenTheLockFileCannotBeMade) {
  TempFolder folder;
  absl::StatusOr<std::unique_ptr<WriterLock>> lock =
      WriterLock::Acquire(folder.File("no/such/folder/t.db"), "lathe tune");
  ASSERT_FALSE(lock.ok());
  EXPECT_NE(lock.status().message().find(
                "no/such/folder/t.db.lock: cannot create the "
                "database's lock: No such file or directory"),
            std::string::npos)
      << lock.status();
}

}  // namespace
}  // namespace lathe::db
