// CUDA targets: parsing `cuda -arch=sm_XX ...` and the limits of the
// architectures Lathe generates code for.
//
//   cuda -arch=sm_80|sm_89|sm_90 [-max-threads-per-block=N]
//        [-max-shared-memory-per-block=BYTES] [-registers-per-block=N]
//        [-warp-size=N]
// Omitted limits take the architecture's (1024 threads, 48 KiB of static
// shared memory, 64 Ki registers, warps of 32); a limit above the
// architecture's is refused. `cuda` alone resolves to this machine's first
// device through the driver (cuda_driver.h): its compute capability and its
// limits; without a driver or a device it is an error that says so.
// The canonical string always lists every limit (compiler/target/target.h).
// Tests: tests/compiler/codegen/cuda/cuda_target_test.cc.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/target/target.h"

namespace lathe::cuda {

// "sm_80", "sm_89", "sm_90".
const std::vector<std::string>& SupportedArchs();

// The target of an architecture with its default limits; InvalidArgument
// for an architecture not in SupportedArchs.
absl::StatusOr<Target> ArchTarget(const std::string& arch);

// Parses a target string of kind "cuda" (see above). InvalidArgument naming
// the bad part; FailedPrecondition for `cuda` on a machine without a driver
// or a device of a supported architecture.
absl::StatusOr<Target> ParseCudaTarget(const std::string& text);

}  // namespace lathe::cuda
