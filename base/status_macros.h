// The status macros every part of Lathe uses to pass errors up: libraries
// return absl::Status / absl::StatusOr, and these return early on an error.
// The one copy: base/ is below every other part, the database included.
// Tests: tests/base/status_macros_test.cc.
#pragma once

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Returns from the enclosing function when a Status-returning call fails.
#define LATHE_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::absl::Status lathe_status_ = (expr);         \
    if (!lathe_status_.ok()) return lathe_status_; \
  } while (false)

#define LATHE_CONCAT_INNER(a, b) a##b
#define LATHE_CONCAT(a, b) LATHE_CONCAT_INNER(a, b)
// Assigns the value of a StatusOr to lhs, or returns its error.
#define LATHE_ASSIGN_OR_RETURN(lhs, rexpr)                                     \
  LATHE_ASSIGN_OR_RETURN_IMPL(LATHE_CONCAT(lathe_statusor_, __COUNTER__), lhs, \
                              rexpr)
#define LATHE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()
