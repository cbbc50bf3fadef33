#include "runner/worker_sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"

namespace lathe::runner {
namespace {

// Calls a worker makes while it builds (LLVM's JIT) and times kernels
// (the runtime's thread pool), and while it answers requests.
constexpr int kAllowed[] = {
    // Descriptors already open: the request channel, stderr, pipes.
    SCMP_SYS(read),
    SCMP_SYS(write),
    SCMP_SYS(readv),
    SCMP_SYS(writev),
    SCMP_SYS(pread64),
    SCMP_SYS(pwrite64),
    SCMP_SYS(close),
    SCMP_SYS(fstat),
    SCMP_SYS(lseek),
    SCMP_SYS(fcntl),
    SCMP_SYS(poll),
    SCMP_SYS(ppoll),
    SCMP_SYS(dup),
    // Memory, and the JIT's executable pages.
    SCMP_SYS(mmap),
    SCMP_SYS(munmap),
    SCMP_SYS(mprotect),
    SCMP_SYS(mremap),
    SCMP_SYS(madvise),
    SCMP_SYS(brk),
    SCMP_SYS(mincore),
    SCMP_SYS(membarrier),
    SCMP_SYS(get_mempolicy),
    // Threads and their synchronization (clone: see below).
    SCMP_SYS(futex),
    SCMP_SYS(set_robust_list),
    SCMP_SYS(get_robust_list),
    SCMP_SYS(rseq),
    SCMP_SYS(set_tid_address),
    SCMP_SYS(sched_yield),
    SCMP_SYS(sched_getaffinity),
    SCMP_SYS(sched_setaffinity),
    SCMP_SYS(sched_getparam),
    SCMP_SYS(sched_getscheduler),
    SCMP_SYS(getcpu),
    SCMP_SYS(arch_prctl),
    // Signals within this process (raise, a thread's stack guard).
    SCMP_SYS(rt_sigaction),
    SCMP_SYS(rt_sigprocmask),
    SCMP_SYS(rt_sigreturn),
    SCMP_SYS(sigaltstack),
    SCMP_SYS(tgkill),
    SCMP_SYS(tkill),
    // Time.
    SCMP_SYS(clock_gettime),
    SCMP_SYS(clock_getres),
    SCMP_SYS(gettimeofday),
    SCMP_SYS(time),
    SCMP_SYS(nanosleep),
    SCMP_SYS(clock_nanosleep),
    SCMP_SYS(getrusage),
    SCMP_SYS(times),
    // Who and where this process is.
    SCMP_SYS(getpid),
    SCMP_SYS(gettid),
    SCMP_SYS(getppid),
    SCMP_SYS(getuid),
    SCMP_SYS(geteuid),
    SCMP_SYS(getgid),
    SCMP_SYS(getegid),
    SCMP_SYS(uname),
    SCMP_SYS(sysinfo),
    SCMP_SYS(getrandom),
    SCMP_SYS(exit),
    SCMP_SYS(exit_group),
    SCMP_SYS(restart_syscall),
};

// Calls that reach the network, start programs or reach other processes:
// the worker is killed.
constexpr int kKilled[] = {
    SCMP_SYS(socket),
    SCMP_SYS(socketpair),
    SCMP_SYS(connect),
    SCMP_SYS(bind),
    SCMP_SYS(listen),
    SCMP_SYS(accept),
    SCMP_SYS(accept4),
    SCMP_SYS(sendmsg),
    SCMP_SYS(sendmmsg),
    SCMP_SYS(recvmsg),
    SCMP_SYS(recvmmsg),
    SCMP_SYS(execve),
    SCMP_SYS(execveat),
    SCMP_SYS(fork),
    SCMP_SYS(vfork),
    SCMP_SYS(ptrace),
    SCMP_SYS(process_vm_readv),
    SCMP_SYS(process_vm_writev),
};

struct ReleaseFilter {
  void operator()(scmp_filter_ctx ctx) const { seccomp_release(ctx); }
};

absl::Status Refused(const char* step, int rc) {
  return absl::FailedPreconditionError(
      absl::StrCat("worker sandbox: ", step, ": ", std::strerror(-rc)));
}

}  // namespace

bool IsolateNetwork() {
  if (unshare(CLONE_NEWNET) == 0) return true;
  const int direct = errno;
  if (unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0) return true;
  std::fprintf(stderr,
               "lathe worker: no private network namespace (%s; with a user "
               "namespace: %s); confined by the seccomp filter alone\n",
               std::strerror(direct), std::strerror(errno));
  return false;
}

absl::Status InstallSyscallFilter() {
  std::unique_ptr<void, ReleaseFilter> ctx(seccomp_init(SCMP_ACT_ERRNO(EPERM)));
  if (ctx == nullptr) return Refused("seccomp_init", -ENOMEM);
  // Every thread of the process at once: the worker's threads (the runtime's
  // pool, builds ahead) exist already.
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_TSYNC, 1); rc < 0)
    return Refused("every thread", rc);
  for (int call : kAllowed) {
    if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ALLOW, call, 0); rc < 0)
      return Refused("allow", rc);
  }
  for (int call : kKilled) {
    if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_KILL_PROCESS, call, 0);
        rc < 0)
      return Refused("kill", rc);
  }
  // clone: threads only (CLONE_THREAD set); a new process kills the worker.
  if (int rc = seccomp_rule_add(
          ctx.get(), SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
          SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
      rc < 0)
    return Refused("clone of threads", rc);
  if (int rc =
          seccomp_rule_add(ctx.get(), SCMP_ACT_KILL_PROCESS, SCMP_SYS(clone), 1,
                           SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
      rc < 0)
    return Refused("clone of processes", rc);
  // clone3 passes its flags in memory the filter cannot read: "not
  // implemented", and the C library falls back to clone.
  if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(ENOSYS),
                                SCMP_SYS(clone3), 0);
      rc < 0)
    return Refused("clone3", rc);
  // send() on the request channel (a socket the runner made): sendto with
  // no address; recvfrom on it. No new socket can be had.
  if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ALLOW, SCMP_SYS(sendto), 1,
                                SCMP_A4(SCMP_CMP_EQ, 0));
      rc < 0)
    return Refused("sendto", rc);
  if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_KILL_PROCESS,
                                SCMP_SYS(sendto), 1, SCMP_A4(SCMP_CMP_NE, 0));
      rc < 0)
    return Refused("sendto to an address", rc);
  if (int rc =
          seccomp_rule_add(ctx.get(), SCMP_ACT_ALLOW, SCMP_SYS(recvfrom), 0);
      rc < 0)
    return Refused("recvfrom", rc);
  // fstat as the C library makes it: newfstatat(fd, "", AT_EMPTY_PATH).
  if (int rc = seccomp_rule_add(
          ctx.get(), SCMP_ACT_ALLOW, SCMP_SYS(newfstatat), 1,
          SCMP_A3(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH));
      rc < 0)
    return Refused("newfstatat", rc);
  // A thread may name itself (the runtime's pool threads: "lathe-w1").
  for (scmp_datum_t option :
       {scmp_datum_t{PR_SET_NAME}, scmp_datum_t{PR_GET_NAME}}) {
    if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
                                  SCMP_A0(SCMP_CMP_EQ, option));
        rc < 0)
      return Refused("prctl", rc);
  }
  // Resource limits may be read (prlimit64 with no new limit), not set.
  if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ALLOW, SCMP_SYS(prlimit64),
                                1, SCMP_A2(SCMP_CMP_EQ, 0));
      rc < 0)
    return Refused("prlimit64", rc);
  // No new privileges (set by libseccomp before loading): the filter cannot
  // be undone, even by a setuid program (which execve could not start anyway).
  if (int rc = seccomp_load(ctx.get()); rc < 0) return Refused("load", rc);
  return absl::OkStatus();
}

WorkerConfinement SandboxConfinement() {
  WorkerConfinement confinement;
  confinement.before_threads = [] { IsolateNetwork(); };
  confinement.before_requests = InstallSyscallFilter;
  return confinement;
}

}  // namespace lathe::runner
