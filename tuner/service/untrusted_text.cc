#include "tuner/service/untrusted_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace lathe::service {
namespace {

// The length of the valid UTF-8 character at text[i] (1..4), or 0 when the
// bytes there are not one (overlong forms and surrogates included).
size_t Utf8Length(absl::string_view text, size_t i) {
  const auto byte = [&](size_t k) {
    return static_cast<unsigned char>(text[i + k]);
  };
  const unsigned char b0 = byte(0);
  size_t n = 0;
  unsigned lo = 0x80, hi = 0xbf;  // the second byte's range
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    n = 2;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    n = 3;
    if (b0 == 0xe0) lo = 0xa0;
    if (b0 == 0xed) hi = 0x9f;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    n = 4;
    if (b0 == 0xf0) lo = 0x90;
    if (b0 == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (byte(1) < lo || byte(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(k) < 0x80 || byte(k) > 0xbf) return 0;
  }
  return n;
}

}  // namespace

std::string EscapeUntrusted(absl::string_view text, size_t max_bytes) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    std::string unit;
    size_t consumed = 1;
    if (c == '\\') {
      unit = "\\\\";
    } else if (c < 0x20 || c == 0x7f) {
      unit = absl::StrFormat("\\x%02x", c);
    } else if (c < 0x80) {
      unit = std::string(1, static_cast<char>(c));
    } else if (const size_t n = Utf8Length(text, i); n == 0) {
      unit = absl::StrFormat("\\x%02x", c);
    } else if (n == 2 && c == 0xc2 &&
               static_cast<unsigned char>(text[i + 1]) < 0xa0) {
      // A C1 control character (U+0080..U+009F): CSI and its kind.
      unit = absl::StrFormat("\\x%02x\\x%02x", c,
                             static_cast<unsigned char>(text[i + 1]));
      consumed = 2;
    } else {
      unit = std::string(text.substr(i, n));
      consumed = n;
    }
    if (out.size() + unit.size() > max_bytes) break;
    out += unit;
    i += consumed;
  }
  if (i < text.size()) absl::StrAppend(&out, " [+", text.size() - i, " bytes]");
  return out;
}

}  // namespace lathe::service
