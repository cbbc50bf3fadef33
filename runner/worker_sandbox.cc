#include "runner/worker_sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

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

// What the CUDA driver calls once initialized, besides the above
// (worker_sandbox.h); opening files is allowed read-only, below.
constexpr int kAllowedForCuda[] = {
    SCMP_SYS(ioctl),      SCMP_SYS(newfstatat),    SCMP_SYS(statx),
    SCMP_SYS(readlink),   SCMP_SYS(readlinkat),    SCMP_SYS(access),
    SCMP_SYS(faccessat),  SCMP_SYS(faccessat2),    SCMP_SYS(getdents64),
    SCMP_SYS(dup2),       SCMP_SYS(dup3),          SCMP_SYS(pipe2),
    SCMP_SYS(eventfd2),   SCMP_SYS(epoll_create1), SCMP_SYS(epoll_ctl),
    SCMP_SYS(epoll_wait), SCMP_SYS(epoll_pwait),   SCMP_SYS(select),
    SCMP_SYS(pselect6),   SCMP_SYS(memfd_create),  SCMP_SYS(ftruncate),
    SCMP_SYS(mbind),      SCMP_SYS(set_mempolicy), SCMP_SYS(sched_getattr),
};

// Flags of an open that writes, creates or truncates.
constexpr scmp_datum_t kWritingOpen =
    O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_TMPFILE;

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

// The calls a kCuda filter refused, one bit per system call number.
constexpr int kRecordedCalls = 512;
std::atomic<uint64_t> g_refused[kRecordedCalls / 64];

// SIGSYS from the kCuda filter's default action (SCMP_ACT_TRAP): record the
// call and make it return -EPERM, as the kCpu filter's default does.
void OnRefusedCall(int, siginfo_t* info, void* context) {
  const int call = info->si_syscall;
  if (call >= 0 && call < kRecordedCalls) {
    g_refused[call / 64].fetch_or(uint64_t{1} << (call % 64),
                                  std::memory_order_relaxed);
  }
  auto* registers = &static_cast<ucontext_t*>(context)->uc_mcontext;
#if defined(__x86_64__)
  registers->gregs[REG_RAX] = -EPERM;
#elif defined(__aarch64__)
  registers->regs[0] = static_cast<uint64_t>(-EPERM);
#endif
}

constexpr bool kCanTrap =
#if defined(__x86_64__) || defined(__aarch64__)
    true;
#else
    false;
#endif

// The kCuda filter's additions: kAllowedForCuda, and open/openat when
// they only read.
absl::Status AddCudaRules(scmp_filter_ctx ctx) {
  for (int call : kAllowedForCuda) {
    if (int rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, call, 0); rc < 0)
      return Refused("allow for the CUDA driver", rc);
  }
  if (int rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1,
                                SCMP_A2(SCMP_CMP_MASKED_EQ, kWritingOpen, 0));
      rc < 0)
    return Refused("openat to read", rc);
  if (int rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(open), 1,
                                SCMP_A1(SCMP_CMP_MASKED_EQ, kWritingOpen, 0));
      rc < 0)
    return Refused("open to read", rc);
  // Builders ahead lower themselves to idle priority (cuda_build_ahead.h);
  // no other policy may be set.
  if (int rc =
          seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sched_setscheduler), 1,
                           SCMP_A1(SCMP_CMP_EQ, SCHED_IDLE));
      rc < 0)
    return Refused("sched_setscheduler to idle", rc);
  struct sigaction action = {};
  action.sa_sigaction = OnRefusedCall;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGSYS, &action, nullptr) != 0)
    return Refused("SIGSYS handler", -errno);
  return absl::OkStatus();
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

absl::Status InstallSyscallFilter(WorkerKind kind) {
  const bool cuda = kind == WorkerKind::kCuda;
  std::unique_ptr<void, ReleaseFilter> ctx(
      seccomp_init(cuda && kCanTrap ? SCMP_ACT_TRAP : SCMP_ACT_ERRNO(EPERM)));
  if (ctx == nullptr) return Refused("seccomp_init", -ENOMEM);
  if (cuda) {
    if (absl::Status st = AddCudaRules(ctx.get()); !st.ok()) return st;
  }
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
  // fstat as the C library makes it: newfstatat(fd, "", AT_EMPTY_PATH)
  // (a kCuda filter allows every newfstatat: kAllowedForCuda).
  if (!cuda) {
    if (int rc = seccomp_rule_add(
            ctx.get(), SCMP_ACT_ALLOW, SCMP_SYS(newfstatat), 1,
            SCMP_A3(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH));
        rc < 0)
      return Refused("newfstatat", rc);
  }
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

WorkerConfinement SandboxConfinement(WorkerKind kind) {
  WorkerConfinement confinement;
  confinement.before_threads = [] { IsolateNetwork(); };
  confinement.before_requests = [kind] { return InstallSyscallFilter(kind); };
  confinement.refused_calls = RefusedSyscalls;
  return confinement;
}

std::string RefusedSyscalls() {
  std::string names;
  for (int call = 0; call < kRecordedCalls; ++call) {
    if ((g_refused[call / 64].load(std::memory_order_relaxed) >> (call % 64) &
         1) == 0)
      continue;
    char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, call);
    absl::StrAppend(&names, names.empty() ? "" : ", ",
                    name != nullptr ? name : absl::StrCat("#", call));
    std::free(name);
  }
  return names;
}

}  // namespace lathe::runner
