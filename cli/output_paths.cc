#include "cli/output_paths.h"

#include <sys/stat.h>

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace lathe::cli {
namespace {

bool Named(const NamedPath& p) { return !p.second.empty() && p.second != "-"; }

// The same file: one existing file by two names (device and inode), or, for
// a file not there yet, the same normalized absolute path.
bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  if (stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0) {
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  }
  std::error_code ea, eb;
  const std::filesystem::path pa = std::filesystem::weakly_canonical(a, ea);
  const std::filesystem::path pb = std::filesystem::weakly_canonical(b, eb);
  if (ea || eb) return a == b;
  return pa == pb;
}

std::string Role(const std::string& option) {
  if (option == "--db") return "the database (--db)";
  return absl::StrCat("the ", option, " file");
}

}  // namespace

absl::Status CheckOutputPaths(const std::vector<NamedPath>& inputs,
                              const std::vector<NamedPath>& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const NamedPath& out = outputs[i];
    if (!Named(out)) continue;
    for (const NamedPath& in : inputs) {
      if (Named(in) && SameFile(out.second, in.second)) {
        return absl::InvalidArgumentError(
            absl::StrCat(out.first, " ", out.second, " is ", Role(in.first),
                         "; refusing to overwrite it"));
      }
    }
    for (size_t j = 0; j < i; ++j) {
      if (Named(outputs[j]) && SameFile(out.second, outputs[j].second)) {
        return absl::InvalidArgumentError(
            absl::StrCat(out.first, " ", out.second, " is also ",
                         outputs[j].first, ": give each output its own file"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace lathe::cli
