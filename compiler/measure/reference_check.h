// The check that comes before any time counts: run a kernel on random inputs
// and compare its outputs with the workload's reference (reference.h).
// The kernel is any callable over float pointers in C ABI order, so the JIT,
// a loaded library or a test double can be checked the same way.
// Tests: tests/compiler/measure/reference_check_test.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "compiler/workload/workload.h"

namespace lathe {

using KernelCall = std::function<absl::Status(const std::vector<float*>& args)>;

// Fills the inputs from `seed` (random_fill.h), poisons the outputs with NaN
// (a kernel that skips an element cannot pass), runs the kernel and the
// reference, and compares every output with a tolerance that grows with the
// float work per output element (reassociated sums differ in rounding).
// Errors: FailedPrecondition naming the output, the first mismatching index
// with both values (CheckAllClose); the kernel's own error; InvalidArgument
// for a workload that is not all float32.
absl::Status CheckAgainstReference(const Workload& workload, const KernelCall& kernel,
                                   uint64_t seed = 1);

}  // namespace lathe
