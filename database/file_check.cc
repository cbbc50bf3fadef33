#include "database/file_check.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace lathe::db {
namespace {

uint32_t BigEndian32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) |
         (uint32_t{p[2]} << 8) | p[3];
}

}  // namespace

absl::StatusOr<FileState> InspectDatabaseFile(const std::string& path,
                                              DatabaseFileHeader* header_out) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return FileState::kAbsent;
    return absl::PermissionDeniedError(
        absl::StrCat(path, ": ", std::strerror(errno)));
  }
  if (!S_ISREG(info.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": not a regular file"));
  }
  if (info.st_size == 0) return FileState::kEmpty;

  // The 100-byte file header and the start of page 1's b-tree header.
  unsigned char header[108] = {};
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return absl::PermissionDeniedError(absl::StrCat(path, ": cannot be read"));
  in.read(reinterpret_cast<char*>(header), sizeof header);
  static const char kMagic[] = "SQLite format 3";  // and its NUL: 16 bytes
  if (in.gcount() < 100 || std::memcmp(header, kMagic, sizeof kMagic) != 0) {
    return absl::DataLossError(
        absl::StrCat(path,
                     ": not a Lathe database (not a SQLite file, or its header "
                     "is damaged)"));
  }

  // Header fields (https://www.sqlite.org/fileformat.html): page size at 16
  // (1 means 65536), change counter at 24, page count at 28, and the change
  // counter the page count is valid for at 92.
  uint32_t page_size = (uint32_t{header[16]} << 8) | header[17];
  if (page_size == 1) page_size = 65536;
  const uint32_t pages = BigEndian32(header + 28);
  const bool count_valid =
      pages != 0 && BigEndian32(header + 24) == BigEndian32(header + 92);
  struct stat wal;
  const bool wal_has_frames =
      stat((path + "-wal").c_str(), &wal) == 0 && wal.st_size > 0;
  const uint64_t expected = uint64_t{pages} * page_size;
  if (count_valid && !wal_has_frames &&
      static_cast<uint64_t>(info.st_size) < expected) {
    return absl::DataLossError(
        absl::StrCat(path, ": truncated: its header says ", expected,
                     " bytes, the file has ", info.st_size));
  }
  if (header_out != nullptr) {
    // Header fields: user_version at 60, application_id at 68; page 1 is
    // sqlite_master's root, a leaf (0x0d) with its cell count at 103 while
    // the schema is small, an interior page once it is not.
    header_out->authoritative = !wal_has_frames;
    header_out->user_version = BigEndian32(header + 60);
    header_out->application_id = BigEndian32(header + 68);
    header_out->has_schema =
        in.gcount() >= 105 &&
        (header[100] != 0x0d || header[103] != 0 || header[104] != 0);
  }
  return FileState::kSqlite;
}

}  // namespace lathe::db
