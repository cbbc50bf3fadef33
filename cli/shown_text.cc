#include "cli/shown_text.h"

#include "absl/strings/str_format.h"

namespace lathe::cli {

std::string Shown(const std::string& field) {
  std::string out;
  for (unsigned char c : field) {
    if (c < 0x20 || c == 0x7f) {
      absl::StrAppendFormat(&out, "\\x%02x", c);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

}  // namespace lathe::cli
