// Which CPUs this process may run on, and pinning a thread to one of them.
//
// The default thread count is the number of allowed CPUs (not the machine's:
// containers, taskset and measurement harnesses restrict it), and
// LATHE_PIN_THREADS pins pool threads to that list. Private to
// compiler/runtime/. Tests: tests/compiler/runtime/thread_count_test.cc,
// lifecycle_test.cc (pinning).
#pragma once

namespace lathe::runtime {

// Writes the ids of the CPUs the calling thread may run on, ascending, to
// cpus[0 .. capacity) and returns how many there are (possibly more than
// capacity). Returns 0 if the affinity cannot be read.
int AllowedCpus(int* cpus, int capacity);

// The number of CPUs the calling thread may run on; at least 1 (falls back to
// the online CPU count, then 1, if the affinity cannot be read).
int AllowedCpuCount();

// The CPUs the process may run on, as first seen by the runtime: the calling
// thread's allowed CPUs at the first call, remembered for the life of the
// process (and inherited by fork()ed children). Remembered because the
// runtime pins the calling thread when LATHE_PIN_THREADS=1: asking again
// afterwards would see one CPU, and a pool rebuilt after fork() would pin
// every worker to it. Sets *count (>= 1, at most LATHE_RUNTIME_MAX_THREADS
// entries; falls back to 0 .. online-1 if the affinity cannot be read).
const int* ProcessCpus(int* count);

// Restricts the calling thread to `cpu`. Returns false on failure (the thread
// then keeps its affinity: pinning is an optimization, never an error).
bool PinCurrentThread(int cpu);

}  // namespace lathe::runtime
