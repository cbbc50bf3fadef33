#include "rpc/exposure_warnings.h"

#include <sys/stat.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace lathe::rpc {
namespace {

// A warning when the file's group or others may read it.
void CheckSecretFile(const char* flag, const std::string& path,
                     std::vector<std::string>& warnings) {
  struct stat st;
  if (path.empty() || stat(path.c_str(), &st) != 0) return;
  if ((st.st_mode & (S_IRGRP | S_IROTH)) == 0) return;
  warnings.push_back(absl::StrFormat(
      "%s %s is readable by %s (mode %04o): anyone who reads it can use the "
      "service; chmod 600 it",
      flag, path, (st.st_mode & S_IROTH) != 0 ? "every user" : "its group",
      st.st_mode & 07777));
}

}  // namespace

bool IsLoopbackAddress(const std::string& address) {
  if (absl::StartsWith(address, "unix:") ||
      absl::StartsWith(address, "unix-abstract:")) {
    return true;
  }
  const size_t colon = address.rfind(':');
  std::string host =
      colon == std::string::npos ? address : address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host == "localhost" || host == "::1") return true;
  // 127.0.0.0/8, in dotted decimal.
  if (!absl::StartsWith(host, "127.")) return false;
  int dots = 0;
  for (char c : host) {
    if (c == '.') {
      ++dots;
    } else if (c < '0' || c > '9') {
      return false;
    }
  }
  return dots == 3;
}

std::vector<std::string> ExposureWarnings(const std::string& listen,
                                          const std::string& token_file,
                                          const std::string& tls_key_file) {
  std::vector<std::string> warnings;
  CheckSecretFile("--token-file", token_file, warnings);
  CheckSecretFile("--tls-key", tls_key_file, warnings);
  if (tls_key_file.empty() && !IsLoopbackAddress(listen)) {
    warnings.push_back(absl::StrCat(
        "--listen ", listen,
        " can be reached from other machines and calls are not encrypted "
        "(no --tls-cert/--tls-key): the token and every workload travel in "
        "the clear"));
  }
  return warnings;
}

}  // namespace lathe::rpc
