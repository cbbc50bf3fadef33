#include "cli/shown_text.h"

#include "base/untrusted_text.h"

namespace lathe::cli {

namespace {
// Far above any field Lathe stores (the longest, a custom workload's
// canonical form, is at most 64 KiB: proto/trace_limits.h).
constexpr size_t kMaxShownFieldBytes = size_t{64} << 10;
}  // namespace

std::string Shown(const std::string& field) {
  return EscapedPrefix(field, kMaxShownFieldBytes, /*escape_backslash=*/false);
}

}  // namespace lathe::cli
