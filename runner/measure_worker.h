// The worker side of local measurement: reads MeasureRequests from `in_fd`
// and writes MeasureResults to `out_fd` (each message prefixed by its
// length, 4 bytes little-endian) until `in_fd` closes. Builds with
// MakeKernelProgram and Compile, checks with CheckAgainstReference, times
// with TimeRepeatedly; threads pinned to the CPUs of the target's thread
// count. Returns the process exit code.
// Tests: tests/runner/measure_worker_test.cc.
#pragma once

namespace lathe::runner {

int RunMeasureWorker(int in_fd, int out_fd);

}  // namespace lathe::runner
