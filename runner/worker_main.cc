// lathe-runner-worker [--cuda]: a measure worker on stdin and stdout,
// confined (runner/worker_sandbox.h), for LocalRunner and its tests: of CPU
// kernels (runner/measure_worker.h), or with --cuda of CUDA kernels
// (runner/cuda/cuda_worker.h). `lathe runner-worker [--cuda]` is the same
// program inside the CLI.
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "runner/cuda/cuda_worker.h"
#include "runner/measure_worker.h"
#include "runner/worker_sandbox.h"

int main(int argc, char** argv) {
  using lathe::runner::WorkerKind;
  const bool cuda = argc == 2 && std::strcmp(argv[1], "--cuda") == 0;
  if (argc > 2 || (argc == 2 && !cuda)) {
    std::fprintf(stderr, "usage: lathe-runner-worker [--cuda]\n");
    return 64;
  }
  if (cuda) {
    return lathe::runner::RunCudaMeasureWorker(
        STDIN_FILENO, STDOUT_FILENO,
        lathe::runner::SandboxConfinement(WorkerKind::kCuda));
  }
  return lathe::runner::RunMeasureWorker(
      STDIN_FILENO, STDOUT_FILENO,
      lathe::runner::SandboxConfinement(WorkerKind::kCpu));
}
