// Where a kernel's schedule came from: a record of the tuning database
// (which one, measured how fast, on which target) or the default schedule
// (and why no record answered). Part of the installed C++ API (lathe.h):
// only standard types, so that a program outside the build tree needs no
// header of Lathe's internals.
// Tests: tests/api/lathe_test.cc.
#pragma once

#include <cstdint>
#include <string>

namespace lathe::api {

enum class KernelSource {
  kDatabase,  // a record's trace, replayed
  kDefault,   // the default schedule
};

// Where a kernel's schedule came from.
struct KernelOrigin {
  KernelSource source = KernelSource::kDefault;
  // The program compiled (StructuralHashHex of the scheduled program); for a
  // database kernel, also the program the record measured.
  std::string structural_hash;
  // kDatabase only: the record and its measurement.
  int64_t record_id = 0;
  std::string job;
  double median_s = 0;
  std::string record_target;  // the target it was measured on
  bool exact_target = true;   // false: a compatible match (difference says how)
  std::string difference;
  // kDefault after a database was consulted: why no record was used, e.g.
  // "no record of matmul:... for llvm ... in tuned.db". Empty otherwise.
  std::string fallback_reason;
  // kDatabase: why faster records were passed over (their traces no longer
  // replay to what they measured, e.g. after a Lathe upgrade). Empty when
  // the fastest was used.
  std::string skipped_reason;

  bool tuned() const { return source == KernelSource::kDatabase; }
};

}  // namespace lathe::api
