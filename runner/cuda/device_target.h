// Whether a GPU measures a cuda target's kernels as they would run on the
// target: the device's own architecture (a cubin for another one runs on a
// different generation, or not at all), and limits the device has (a kernel
// the target allows must launch here). What `lathe tune`, `bench` and
// `runner` check before they measure a cuda target, and what a CUDA worker
// checks for every request.
// Tests: tests/runner/cuda/device_target_test.cc.
#pragma once

#include "absl/status/status.h"
#include "compiler/codegen/cuda/cuda_driver.h"
#include "compiler/target/target.h"

namespace lathe::runner {

// OK when `device` measures `target` as the target; FailedPrecondition
// naming the target, the device and what differs otherwise (InvalidArgument
// for a target that is not cuda).
absl::Status CheckDeviceMeasures(const Target& target,
                                 const cuda::DeviceInfo& device);

// The same for this machine's first device (the first of
// CUDA_VISIBLE_DEVICES), with the driver's errors: "no CUDA driver: ...".
absl::Status CheckCudaMeasurableHere(const Target& target);

}  // namespace lathe::runner
