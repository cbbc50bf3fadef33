#include "database/scratch_database.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "database/database.h"

namespace lathe::db {

absl::StatusOr<std::unique_ptr<ScratchDatabase>> ScratchDatabase::Create(
    const std::string& parent, absl::string_view prefix) {
  std::string pattern = absl::StrCat(parent, "/", prefix, "XXXXXX");
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  if (mkdtemp(name.data()) == nullptr) {
    return absl::PermissionDeniedError(absl::StrCat(
        parent, ": cannot create a scratch folder for a database: ",
        std::strerror(errno)));
  }
  return std::unique_ptr<ScratchDatabase>(
      new ScratchDatabase(std::string(name.data())));
}

ScratchDatabase::ScratchDatabase(std::string folder)
    : folder_(std::move(folder)), path_(folder_ + "/records.db") {}

ScratchDatabase::~ScratchDatabase() {
  RemoveDatabaseFiles(path_);
  unlink((path_ + "-journal").c_str());
  rmdir(folder_.c_str());
}

}  // namespace lathe::db
