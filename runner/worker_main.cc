// lathe-runner-worker: a measure worker on stdin and stdout
// (runner/measure_worker.h), for LocalRunner and its tests. `lathe
// runner-worker` is the same program inside the CLI.
#include <unistd.h>

#include "runner/measure_worker.h"

int main() {
  return lathe::runner::RunMeasureWorker(STDIN_FILENO, STDOUT_FILENO);
}
