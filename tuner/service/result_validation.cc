#include "tuner/service/result_validation.h"

#include <cmath>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tuner/service/field_error.h"

namespace lathe::service {
namespace {

absl::Status CheckMilliseconds(const char* field, double ms) {
  if (!std::isfinite(ms) || ms < 0 || ms > kMaxReportedTimeS * 1000) {
    return FieldError(absl::StrCat("result.", field),
                      absl::StrFormat("%g is not within [0, %g] ms", ms,
                                      kMaxReportedTimeS * 1000));
  }
  return absl::OkStatus();
}

bool IsHashHex(const std::string& hash) {
  if (hash.size() != static_cast<size_t>(kStructuralHashHexDigits))
    return false;
  for (char c : hash) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

absl::Status ValidateReportedResult(const proto::MeasureResult& result) {
  if (result.status() == proto::MEASURE_STATUS_UNSPECIFIED)
    return FieldError("result.status", "unset");
  if (!proto::MeasureStatus_IsValid(result.status())) {
    return FieldError("result.status",
                      absl::StrCat(static_cast<int>(result.status()),
                                   " is not a known measure status"));
  }
  const bool ok = result.status() == proto::MEASURE_OK;
  if (result.times_s_size() > kMaxReportedSamples) {
    return FieldError("result.times_s", absl::StrCat(result.times_s_size(),
                                                     " samples; the limit is ",
                                                     kMaxReportedSamples));
  }
  if (ok && result.times_s_size() == 0)
    return FieldError("result.times_s", "empty for MEASURE_OK");
  for (int i = 0; i < result.times_s_size(); ++i) {
    const double t = result.times_s(i);
    if (!std::isfinite(t) || t < kMinReportedTimeS || t > kMaxReportedTimeS) {
      return FieldError(absl::StrCat("result.times_s[", i, "]"),
                        absl::StrFormat("%g is not within [%g, %g] s", t,
                                        kMinReportedTimeS, kMaxReportedTimeS));
    }
  }
  const std::string& hash = result.structural_hash();
  if (!hash.empty() && !IsHashHex(hash)) {
    return FieldError(
        "result.structural_hash",
        absl::StrCat("not ", kStructuralHashHexDigits,
                     " lower-case hex digits (", hash.size(), " bytes)"));
  }
  for (auto [field, ms] :
       {std::pair<const char*, double>{"build_ms", result.build_ms()},
        {"run_ms", result.run_ms()},
        {"check_ms", result.check_ms()}}) {
    if (absl::Status st = CheckMilliseconds(field, ms); !st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace lathe::service
