#include "report/html_text.h"

#include <cmath>

#include "absl/strings/str_format.h"
#include "absl/time/time.h"

namespace lathe::report {

std::string HtmlEscape(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n')
          break;
        if (c == 0x7f) break;
        out += c;
    }
  }
  return out;
}

std::string Number(double value, int digits) {
  if (!std::isfinite(value)) return "-";
  if (std::fabs(value) >= 1e6)
    return absl::StrFormat("%.*e", std::max(0, digits - 2), value);
  return absl::StrFormat("%.*g", digits, value);
}

std::string Seconds(double s) {
  if (!std::isfinite(s)) return "-";
  if (s < 1e-3) return absl::StrFormat("%.1f µs", s * 1e6);
  if (s < 1) return absl::StrFormat("%.3f ms", s * 1e3);
  return absl::StrFormat("%.2f s", s);
}

std::string UtcTime(int64_t unix_ms) {
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC",
                          absl::FromUnixMillis(unix_ms), absl::UTCTimeZone());
}

}  // namespace lathe::report
