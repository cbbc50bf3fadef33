// The error of a request field that the daemon refuses: InvalidArgument
// "FIELD: MESSAGE" (daemon.cc for jobs, daemon_runners.cc for runners).
// Tests: tests/tuner/service/daemon_test.cc.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace lathe::service {

inline absl::Status FieldError(const std::string& field,
                               absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", message));
}

}  // namespace lathe::service
