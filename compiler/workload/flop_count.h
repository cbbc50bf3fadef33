// The floating-point work of a workload, for GFLOP/s figures (`lathe bench`,
// the benchmarks, the tuner's reports).
//
// Counted on the workload's initial program, generically over operators:
// every block instance (the product of its iteration extents) counts the
// float arithmetic of its body -- each add, sub, mul, div, min, max and call
// (exp, tanh, ...) is one operation, so a multiply-add counts 2 and matmul
// gives the conventional 2*M*N*K. Inits (the zero or -inf of a reduction),
// copies, padding selects and index arithmetic count nothing: they are not
// what a FLOP rate measures. A count past INT64_MAX (an iteration space of
// 2^93 instances is a valid workload) is INT64_MAX: it saturates, never
// wraps to zero or a negative number.
// Tests: tests/compiler/workload/flop_count_test.cc.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "compiler/workload/workload.h"

namespace lathe {

// Errors: those of Workload::InitialProgram.
absl::StatusOr<int64_t> FlopCount(const Workload& workload);

}  // namespace lathe
