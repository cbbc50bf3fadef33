// A CUDA compilation in a child process with a deadline: NVRTC cannot be
// interrupted, and some schedules (large unrolled tiles with guarded loads)
// take it minutes; in a child, a compilation past its deadline is killed
// and the measurer goes on.
//
// The child is `argv` (e.g. lathe-gpu-check --compile-cuda sm_90): it
// reads CUDA C on stdin and writes the cubin on stdout, exiting 0; any
// other exit is a failure whose message is the child's stderr (its first
// line, of at most kMaxErrorBytes read).
// Tests: tests/runner/cuda/child_compile_test.cc.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace lathe::runner {

inline constexpr size_t kMaxCubinBytes = size_t{64} << 20;
inline constexpr size_t kMaxErrorBytes = 4096;

// The child's stdout. Errors: DeadlineExceeded when it ran past
// `timeout_s` (killed); Internal when it could not start, exited non-zero
// or by a signal (with its stderr), or wrote more than kMaxCubinBytes.
absl::StatusOr<std::string> CompileInChild(const std::vector<std::string>& argv,
                                           const std::string& source,
                                           double timeout_s);

}  // namespace lathe::runner
