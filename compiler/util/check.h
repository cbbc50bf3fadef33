// LATHE_CHECK: internal invariants of Lathe itself.
//
// A failed check is a bug in Lathe (user input never reaches one): it prints
// the condition, the location and the message, then aborts.
#pragma once

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"

#define LATHE_CHECK(cond, ...)                                             \
  do {                                                                     \
    if (!(cond)) {                                                         \
      std::fprintf(                                                        \
          stderr, "lathe internal error at %s:%d: check %s failed: %s\n",  \
          __FILE__, __LINE__, #cond, ::absl::StrCat(__VA_ARGS__).c_str()); \
      std::abort();                                                        \
    }                                                                      \
  } while (false)

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
