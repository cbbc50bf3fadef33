/* A shared library that embeds the Lathe runtime, as libraries emitted by
 * `lathe compile` will: loaded and unloaded by lifecycle_test.cc to check
 * that dlclose joins the library's pool before unmapping its code. Linked
 * with -Wl,--exclude-libs,ALL (see CMakeLists.txt), so the runtime inside is
 * private to it. */
#include <stdint.h>

#include "compiler/runtime/lathe_runtime.h"

static int AddTask(int64_t task, void* closure) {
  __atomic_fetch_add((int64_t*)closure, task, __ATOMIC_RELAXED);
  return 0;
}

/* The sum of 0 .. n-1 computed by a parallel loop of n tasks at `threads`
 * threads; -1 if the loop failed. */
__attribute__((visibility("default"))) int64_t lathe_test_dso_sum(int threads,
                                                                  int64_t n) {
  int64_t sum = 0;
  lathe_set_num_threads(threads);
  if (lathe_parallel_for(n, AddTask, &sum) != 0) return -1;
  return sum;
}
