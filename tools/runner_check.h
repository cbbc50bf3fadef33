// `lathe-gpu-check --runner-check`: CUDA candidates measured the way
// `lathe tune --target cuda` and `lathe runner --target cuda` measure them,
// through a LocalRunner (runner/local_runner.h) and its confined worker
// processes (runner/cuda/cuda_worker.h, served by this binary's --worker),
// with the faults a runner must survive: after a kernel that writes to an
// illegal address, and after a worker that crashes, the next candidate
// measures OK on a fresh worker; a file opened for writing is refused by
// the sandbox and named in the error; a target of another architecture is
// refused before it runs. One PASS or FAIL line per step.
#pragma once

#include <string>

#include "compiler/target/target.h"

namespace lathe::tools {

// `worker_program`: this binary, run as `worker_program --worker`.
// Returns true when every step passed.
bool CheckRunner(const std::string& worker_program, const Target& target);

}  // namespace lathe::tools
