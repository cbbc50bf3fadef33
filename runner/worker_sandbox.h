// The confinement of a measuring worker process (Linux): what a candidate's
// code may do when it runs there, so that a hostile trace or workload cannot
// reach the network, start programs or touch files through the worker.
//
// Two steps, each taken once per process (ServeMeasureRequests calls them):
//  - IsolateNetwork, while the process has one thread: a private network
//    namespace (unshare(CLONE_NEWNET), or with a new user namespace where
//    the process lacks CAP_SYS_ADMIN), so that no interface but an
//    unconfigured loopback exists. Where the kernel refuses both
//    (unprivileged user namespaces off, a container's own filter), it says
//    so once on stderr and the seccomp filter alone confines the worker.
//  - InstallSyscallFilter, once everything the worker loads is ready
//    (its threads, the JIT) and before the first request: a seccomp filter
//    (libseccomp) that lets building and timing a kernel through and
//    nothing else, on every thread of the process (and those it starts):
//      * allowed: memory (mmap, mprotect for the JIT's code, brk, madvise,
//        ...), threads (clone with CLONE_THREAD only; clone3 answers ENOSYS
//        so the C library falls back to clone), futexes, CPU affinity,
//        clocks and sleeps, idle priority (builds ahead), signals to this
//        process's threads, reading and writing descriptors already open (the
//        request channel, stderr) and fstat of them, send (sendto with no
//        address) and recvfrom on the channel, reading resource limits
//        (not setting them), naming a thread (prctl PR_SET_NAME, no other
//        prctl), exit;
//      * the process is killed (SIGSYS) at: socket and every other network
//        call, execve and execveat, fork, vfork, clone of a process,
//        ptrace and process_vm_readv/writev;
//      * any other call fails with EPERM: opening, creating or removing a
//        file (open, openat, creat, ...), ioctl, other prctls, mount, ...
//    The runner records a candidate whose call killed the worker as a run
//    error ("killed by signal 31 (SIGSYS)") and starts a new worker.
//  - A CUDA worker's filter (WorkerKind::kCuda) also lets the CUDA driver
//    work after its initialization: ioctl (every driver call is one on its
//    device files), opening files read-only (it reads /proc and /sys),
//    stat-like calls, pipes, eventfds and epoll (its event threads), memory
//    policy calls (NUMA placement of pinned memory). The same calls kill the
//    worker; any other call still fails with EPERM, and is recorded
//    (RefusedSyscalls), so that a driver that needs more says which call
//    was refused in the candidate's error. A CUDA candidate's host side is
//    Lathe's own launch code: the filter guards against the compiler and
//    the driver being turned by a crafted request.
// Tests: tests/runner/worker_sandbox_test.cc; a candidate stopped through a
// real worker in tests/runner/local_runner_test.cc.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "runner/worker_loop.h"

namespace lathe::runner {

// What the worker measures: kernels on this CPU (measure_worker.h) or on a
// GPU through the CUDA driver (cuda/cuda_worker.h).
enum class WorkerKind { kCpu, kCuda };

// Both steps, for ServeMeasureRequests: what every worker process runs with.
WorkerConfinement SandboxConfinement(WorkerKind kind = WorkerKind::kCpu);

// True when this process now has a network namespace of its own. Call
// while the process has one thread (a user namespace requires it).
bool IsolateNetwork();

// FailedPrecondition naming the step when the kernel refuses the filter.
absl::Status InstallSyscallFilter(WorkerKind kind = WorkerKind::kCpu);

// The calls a kCuda filter refused in this process so far, by name
// ("openat, unlink"); empty when none (and always under a kCpu filter).
std::string RefusedSyscalls();

}  // namespace lathe::runner
