// Text a runner or client chose (an infrastructure error, a device or
// version string, an error message), made safe for the daemon's log and
// for the messages it sends: printable and bounded. Control bytes (C0, DEL
// and the C1 range U+0080..U+009F, which start terminal escape sequences),
// backslashes and bytes that are not valid UTF-8 are written as \xNN (a
// backslash as \\), so no input forges a log line or moves a terminal's
// cursor; valid UTF-8 characters are kept whole. The result is at most
// `max_bytes` bytes of escaped text, then " [+N bytes]" when the input was
// cut (N: the input bytes left out), cut between characters, never inside one.
// Tests: tests/tuner/service/untrusted_text_test.cc.
#pragma once

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace lathe::service {

// Runner names, devices and versions as the daemon keeps and shows them.
inline constexpr size_t kMaxRunnerTextBytes = 256;
// A failure's message in a log line.
inline constexpr size_t kMaxLoggedTextBytes = 1024;

std::string EscapeUntrusted(absl::string_view text, size_t max_bytes);

}  // namespace lathe::service
