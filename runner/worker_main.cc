// lathe-runner-worker: a measure worker on stdin and stdout
// (runner/measure_worker.h), confined (runner/worker_sandbox.h), for
// LocalRunner and its tests. `lathe runner-worker` is the same program
// inside the CLI.
#include <unistd.h>

#include "runner/measure_worker.h"
#include "runner/worker_sandbox.h"

int main() {
  return lathe::runner::RunMeasureWorker(STDIN_FILENO, STDOUT_FILENO,
                                         lathe::runner::SandboxConfinement());
}
