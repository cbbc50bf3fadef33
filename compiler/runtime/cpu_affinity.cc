// Allowed CPUs and thread pinning; see cpu_affinity.h.
#include "compiler/runtime/cpu_affinity.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "compiler/runtime/lathe_runtime.h"

namespace lathe::runtime {

int AllowedCpus(int* cpus, int capacity) {
  // cpu_set_t covers CPU_SETSIZE (1024) CPUs, which is also the pool's
  // maximum thread count; beyond that the kernel reports EINVAL and we fall
  // back to the online count in AllowedCpuCount.
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
  int count = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    if (count < capacity) cpus[count] = cpu;
    ++count;
  }
  return count;
}

int AllowedCpuCount() {
  int count = AllowedCpus(nullptr, 0);
  if (count > 0) return count;
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 1;
}

namespace {

// Constant-initialized: valid from before the first constructor to after the
// last destructor.
pthread_once_t g_snapshot_once = PTHREAD_ONCE_INIT;
int g_process_cpus[LATHE_RUNTIME_MAX_THREADS];
int g_num_process_cpus = 0;

void TakeSnapshot() {
  int count = AllowedCpus(g_process_cpus, LATHE_RUNTIME_MAX_THREADS);
  if (count <= 0) {
    count = AllowedCpuCount();
    for (int i = 0; i < count && i < LATHE_RUNTIME_MAX_THREADS; ++i) {
      g_process_cpus[i] = i;
    }
  }
  g_num_process_cpus =
      count < LATHE_RUNTIME_MAX_THREADS ? count : LATHE_RUNTIME_MAX_THREADS;
}

}  // namespace

const int* ProcessCpus(int* count) {
  pthread_once(&g_snapshot_once, &TakeSnapshot);
  *count = g_num_process_cpus;
  return g_process_cpus;
}

bool PinCurrentThread(int cpu) {
  if (cpu < 0 || cpu >= CPU_SETSIZE) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof(set), &set) == 0;
}

}  // namespace lathe::runtime
