// The device check (runner/cuda/device_check.h) against known answers on
// this machine's GPU, for `lathe-gpu-check` (every run without --tune): the
// default GPU schedule of a matmul passes it; the same kernel against a
// reference with one element changed fails it, naming that element, and
// so does a reference with a NaN where the kernel computes a number. One
// PASS or FAIL line each.
#pragma once

#include "compiler/codegen/cuda/cuda_driver.h"
#include "compiler/target/target.h"

namespace lathe::tools {

// Returns true when every probe passed.
bool ProbeDeviceCheck(cuda::CudaDevice* device, const Target& target);

}  // namespace lathe::tools
