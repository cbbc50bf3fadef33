// LATHE_CHECK: internal invariants of Lathe itself.
//
// A failed check is a bug in Lathe (user input never reaches one): it prints
// the condition, the location and the message, then aborts. Errors that input
// can cause are absl::Status values instead (base/status_macros.h).
// Tests: tests/base/status_macros_test.cc.
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
