// `lathe-gpu-check --service-check`: the tuning service on this machine's
// GPU, as a tuning cluster runs it. A tuner daemon (tuner/service/daemon.h,
// with cuda targets only and no reports: the daemon's compiler hooks
// without LLVM) serves gRPC on loopback behind a token; a remote runner
// (runner/remote/remote_runner.h, what `lathe runner --target cuda` runs)
// registers for the target with the device's name and measures its leases
// through a LocalRunner in this binary's confined --worker processes; a job
// of a softmax and a matmul is submitted to the daemon and followed until it
// ends. PASS when it is done with every trial made and each workload has a
// best measured on the GPU; FAIL naming what went wrong. One line each for
// the job and for the runner's end.
#pragma once

#include <string>

#include "compiler/target/target.h"

namespace lathe::tools {

// `worker_program`: this binary, run as `worker_program --worker`;
// `device`: the GPU's name, as the runner registers it. With
// `simulate_ms` > 0 the runner measures nothing (each candidate "takes"
// that long, as `lathe runner --simulate-ms` does) and the job is a
// simulated one: the daemon, the gRPC traffic and the search on the
// target's design spaces without a GPU (CI runs it so). Returns true when
// the job passed.
bool CheckService(const std::string& worker_program, const Target& target,
                  const std::string& device, double simulate_ms = 0);

}  // namespace lathe::tools
