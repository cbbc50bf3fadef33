#include "compiler/frontend/onnx/bounded_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace lathe::onnx_frontend {

absl::StatusOr<std::string> ReadBoundedFile(const std::string& path,
                                            int64_t max_bytes) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  }
  if (!S_ISREG(info.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a regular file"));
  }
  const int64_t size = static_cast<int64_t>(info.st_size);
  if (size > max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": ", size, " bytes, more than the limit of ", max_bytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  }
  std::string contents(static_cast<size_t>(size), '\0');
  in.read(contents.data(), size);
  if (in.gcount() != size) {
    return absl::DataLossError(
        absl::StrCat(path, ": read ", in.gcount(), " of its ", size, " bytes"));
  }
  return contents;
}

absl::Status WriteFileAtomically(const std::string& path,
                                 const std::string& contents) {
  const std::string temporary = absl::StrCat(path, ".tmp.", ::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) {
      return absl::PermissionDeniedError(absl::StrCat(
          path, ": cannot create ", temporary, ": ", std::strerror(errno)));
    }
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.flush();
    if (!out) {
      out.close();
      std::remove(temporary.c_str());
      return absl::DataLossError(absl::StrCat(path, ": write failed"));
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(temporary.c_str());
    return absl::PermissionDeniedError(
        absl::StrCat(path, ": cannot rename into place: ", reason));
  }
  return absl::OkStatus();
}

}  // namespace lathe::onnx_frontend
