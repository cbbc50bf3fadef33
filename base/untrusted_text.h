// Untrusted text as an error message or a log line may show it.
//
// Input from files, databases and clients reaches messages: a spec that did
// not parse, a trace's instruction kind, a line of an import file, a
// runner's error. Shown raw, such text can be a 150 MB line, carry escape
// sequences that move the cursor or forge a log line, or end in half a
// UTF-8 character. EscapedPrefix shows at most `max_bytes` bytes of it
// (kMaxEchoedBytes unless told), never cutting a character in half, with
// every byte that is not printable text escaped: control bytes (C0, DEL
// and the C1 controls U+0080..U+009F) and bytes that are not well-formed
// UTF-8 become "\xNN", and a backslash becomes "\\" so that an escape in
// the output always means one. A cut is marked with "... (N bytes)",
// N the length of the whole text.
// Tests: tests/base/untrusted_text_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace lathe {

inline constexpr size_t kMaxEchoedBytes = 200;

namespace untrusted_text_internal {

// The length of the well-formed UTF-8 sequence at text[i] (2 to 4 bytes),
// or 0 when there is none (RFC 3629: no overlong forms, no surrogates,
// nothing above U+10FFFF).
inline size_t Utf8SequenceLength(absl::string_view text, size_t i) {
  const auto byte = [&](size_t k) -> uint32_t {
    return static_cast<unsigned char>(text[k]);
  };
  const uint32_t b0 = byte(i);
  size_t length = 0;
  uint32_t low = 0x80, high = 0xbf;  // the range of the second byte
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    length = 2;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    length = 3;
    if (b0 == 0xe0) low = 0xa0;
    if (b0 == 0xed) high = 0x9f;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    length = 4;
    if (b0 == 0xf0) low = 0x90;
    if (b0 == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xbf) return 0;
  }
  return length;
}

}  // namespace untrusted_text_internal

inline std::string EscapedPrefix(absl::string_view text,
                                 size_t max_bytes = kMaxEchoedBytes) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const size_t length =
          untrusted_text_internal::Utf8SequenceLength(text, i);
      // A C1 control (U+0080..U+009F: 0xc2 0x80..0x9f) is escaped too.
      const bool c1 = length == 2 && c == 0xc2 &&
                      static_cast<unsigned char>(text[i + 1]) <= 0x9f;
      if (length > 0 && !c1) {
        if (i + length > max_bytes) break;
        out.append(text.data() + i, length);
        i += length;
        continue;
      }
    }
    if (i + 1 > max_bytes) break;
    if (c == '\\') {
      out += "\\\\";
    } else if (c < 0x20 || c >= 0x7f) {
      absl::StrAppendFormat(&out, "\\x%02x", c);
    } else {
      out.push_back(static_cast<char>(c));
    }
    ++i;
  }
  if (i < text.size()) absl::StrAppend(&out, "... (", text.size(), " bytes)");
  return out;
}

}  // namespace lathe
