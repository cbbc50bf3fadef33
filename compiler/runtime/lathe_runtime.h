/* The Lathe runtime: the C ABI that compiled CPU kernels call.
 *
 * Generated kernels call these functions for parallel loops and aligned
 * scratch memory. The runtime is linked into every object, static or shared
 * library Lathe emits (so a user links one file) and into the JIT process.
 * It is plain C on purpose: kernels are C-ABI functions, users may be C
 * programs, and the implementation (C++17, the .cc files beside this header)
 * needs only libc and pthreads at link time -- no libstdc++, no absl.
 *
 * Threading model, in short: one process-wide pool of worker threads per copy
 * of the runtime, started on first use, woken per call, joined at process exit
 * or when the shared library holding it is dlclose'd. See lathe_parallel_for.
 *
 * Environment (read when the default is resolved, or when the pool starts):
 *   LATHE_NUM_THREADS=N  default thread count (else: CPUs this process may run
 *                        on, from sched_getaffinity).
 *   LATHE_PIN_THREADS=1  pin thread i of a parallel loop to the i-th allowed
 *                        CPU (the calling thread to the first); for
 *                        measurement processes.
 *   LATHE_SPIN_US=U      how long idle threads spin before sleeping
 *                        (default 100; 0 sleeps at once).
 *
 * Tests: tests/compiler/runtime/ (c_abi_test.c compiles this header as C99).
 */
#ifndef LATHE_RUNTIME_H_
#define LATHE_RUNTIME_H_

#include <stdint.h>

/* The public functions keep default visibility even when the runtime is
 * compiled with -fvisibility=hidden, so the JIT and users can resolve them. */
#if defined(__GNUC__)
#define LATHE_RUNTIME_API __attribute__((visibility("default")))
#else
#define LATHE_RUNTIME_API
#endif

/* Bumped on any incompatible change of the functions below. */
#define LATHE_RUNTIME_ABI_VERSION 1

/* The most threads a parallel loop uses; larger requests are clamped. */
#define LATHE_RUNTIME_MAX_THREADS 1024

#ifdef __cplusplus
extern "C" {
#endif

/* One task of a parallel loop: `task` is in [0, num_tasks), `closure` is the
 * pointer given to lathe_parallel_for. Returns 0 on success; any other value
 * is an error code handed back by lathe_parallel_for. A task must not throw
 * (C++) or longjmp out. */
typedef int (*lathe_task_fn)(int64_t task, void* closure);

/* Runs fn(0, closure) ... fn(num_tasks - 1, closure), each exactly once
 * unless an earlier task fails (below), across the pool; the calling thread
 * takes part and the call returns when every started task has finished.
 *
 * Scheduling: static contiguous chunks. With T = min(lathe_get_num_threads(),
 * num_tasks) threads, thread i (the caller is thread 0) runs the i-th of T
 * contiguous, nearly equal ranges (sizes differ by at most one, larger first),
 * in increasing task order. The task-to-thread map depends only on num_tasks
 * and T, so a kernel's outer loop touches the same memory from the same
 * thread on every call.
 *
 * Errors: returns 0 if every task returned 0. Otherwise returns the value
 * returned by the lowest-numbered failing task. After a task fails, tasks
 * numbered above it are skipped where not yet started, but tasks already
 * running in other threads, and tasks numbered below it, still run; so side
 * effects of tasks after a failure are unspecified, while the returned code
 * is deterministic. Returns -1 without running anything if fn is NULL and
 * num_tasks > 0. num_tasks <= 0 returns 0 at once.
 *
 * Nesting: a call made from inside a task runs all its tasks serially in the
 * calling thread (same error rules), so nested parallel loops are correct but
 * not parallel.
 *
 * Concurrency: safe to call from several application threads at once. Calls
 * that need the pool are serialized (a mutex): each gets every thread of the
 * pool in turn. A call with T == 1 runs inline without taking the mutex.
 * Consequently a task must not wait for another application thread's
 * parallel loop to finish.
 *
 * fork(): a child process gets a fresh pool on first use. */
LATHE_RUNTIME_API int lathe_parallel_for(int64_t num_tasks, lathe_task_fn fn,
                                         void* closure);

/* Sets the number of threads of later parallel loops (the caller included).
 * n <= 0 restores the default: LATHE_NUM_THREADS if set to a positive integer,
 * else the number of CPUs this process may run on (sched_getaffinity of the
 * calling thread the first time the runtime needs it; remembered, because
 * LATHE_PIN_THREADS pins the calling thread to one CPU). Values
 * above LATHE_RUNTIME_MAX_THREADS are clamped. More threads than CPUs is
 * allowed (idle threads then sleep at once instead of spinning). The pool is
 * resized on the next parallel loop; a loop already running is unaffected. */
LATHE_RUNTIME_API void lathe_set_num_threads(int n);

/* The number of threads a parallel loop of many tasks will use (>= 1). */
LATHE_RUNTIME_API int lathe_get_num_threads(void);

/* Allocates `bytes` bytes aligned to `alignment`, which must be a power of
 * two; alignments below sizeof(void*) are raised to it. The size is rounded
 * up to a multiple of the alignment (aligned_alloc's rule); bytes == 0 still
 * returns a unique pointer. Returns NULL if the alignment is not a power of
 * two or memory is exhausted. Free with lathe_free. Code generation uses 64. */
LATHE_RUNTIME_API void* lathe_alloc(uint64_t bytes, uint64_t alignment);

/* Frees memory from lathe_alloc; NULL is ignored. Blocks of 64 KiB to
 * 64 MiB are kept (at most 8, 64 MiB in all, process-wide) for the next
 * lathe_alloc of about their size: a kernel's scratch (a packed operand, a
 * padded input) is allocated and freed on every call, and a block handed
 * back to malloc costs page faults on the calls that follow. */
LATHE_RUNTIME_API void lathe_free(void* p);

/* Frees the blocks lathe_free kept. For programs done with their kernels
 * that want the memory back; the next kernel call allocates afresh. */
LATHE_RUNTIME_API void lathe_release_scratch(void);

/* The constants of a model library's entry (`lathe compile MODEL.onnx`):
 * `bytes` bytes at `image` (the library's read-only data), copied on the
 * first call for `*where` into `space` at its first 2 MiB boundary, which
 * the kernel is asked to back with transparent huge pages: the weights are
 * read on every call, and on huge pages that costs no TLB miss per 4 KiB
 * and does not stop the prefetchers at each page. Returns where the
 * constants are to be read, and keeps it in `*where`: the copy, or `image`
 * itself where the kernel would ignore or refuse the advice (transparent
 * huge pages set to never, or not built in).
 * `space` is zero-initialized writable memory of the library (its .bss,
 * anonymous memory) of LATHE_MODEL_CONSTANTS_SPACE(bytes) bytes; `*where`
 * starts NULL and serves one image only. Thread-safe: calls from several
 * threads at once make one copy. */
#define LATHE_MODEL_CONSTANTS_SPACE(bytes) \
  ((((uint64_t)(bytes) + 0x1FFFFF) & ~(uint64_t)0x1FFFFF) + 0x200000)
LATHE_RUNTIME_API const void* lathe_model_constants(const void* image,
                                                    void* space, uint64_t bytes,
                                                    const void** where);

/* The Lathe version this runtime was built from, e.g. "0.1.0". */
LATHE_RUNTIME_API const char* lathe_runtime_version(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LATHE_RUNTIME_H_ */
