// Tests of runner/worker_sandbox.h: each in a child process (a filter
// cannot be taken back), which reports by its exit code or its signal.
#include "runner/worker_sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace lathe::runner {
namespace {

// Runs `body` in a child after the filter (when `filtered`); its wait status.
int RunChild(const std::function<int()>& body, bool filtered = true,
             WorkerKind kind = WorkerKind::kCpu) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (filtered && !InstallSyscallFilter(kind).ok()) _exit(100);
    _exit(body());
  }
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  return status;
}

void ExpectExitsWith(int status, int code) {
  ASSERT_TRUE(WIFEXITED(status))
      << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), code);
}

void ExpectKilledBySigsys(int status) {
  ASSERT_TRUE(WIFSIGNALED(status))
      << "exited with " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  EXPECT_EQ(WTERMSIG(status), SIGSYS);
}

TEST(WorkerSandbox, WhatBuildingAndTimingNeedStillWorks) {
  ExpectExitsWith(RunChild([] {
                    // Threads (clone with CLONE_THREAD), memory, executable
                    // pages (the JIT), clocks, affinity, resource limits.
                    int value = 0;
                    std::thread thread([&] { value = 42; });
                    thread.join();
                    if (value != 42) return 1;
                    void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE,
                                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                    if (page == MAP_FAILED) return 2;
                    if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0)
                      return 3;
                    munmap(page, 4096);
                    cpu_set_t cpus;
                    if (sched_getaffinity(0, sizeof cpus, &cpus) != 0) return 4;
                    rlimit limit{};
                    if (getrlimit(RLIMIT_AS, &limit) != 0) return 5;
                    timespec now{};
                    if (clock_gettime(CLOCK_MONOTONIC, &now) != 0) return 6;
                    if (write(STDERR_FILENO, "", 0) != 0) return 7;
                    return 0;
                  }),
                  0);
}

TEST(WorkerSandbox, ANetworkSocketKillsTheProcess) {
  ExpectExitsWith(RunChild(
                      [] {
                        const int fd = socket(AF_INET, SOCK_STREAM, 0);
                        if (fd < 0) return 1;
                        close(fd);
                        return 0;
                      },
                      /*filtered=*/false),
                  0);  // unfiltered, it works
  ExpectKilledBySigsys(
      RunChild([] { return socket(AF_INET, SOCK_STREAM, 0) < 0 ? 1 : 0; }));
  ExpectKilledBySigsys(
      RunChild([] { return socket(AF_UNIX, SOCK_STREAM, 0) < 0 ? 1 : 0; }));
}

TEST(WorkerSandbox, NewProcessesAndProgramsKillTheProcess) {
  ExpectKilledBySigsys(RunChild([] {
    const pid_t child = fork();
    if (child == 0) _exit(0);
    return 1;
  }));
  ExpectKilledBySigsys(RunChild([] {
    char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
    execv("/bin/true", argv);
    return 1;
  }));
}

TEST(WorkerSandbox, OpeningFilesFailsWithEperm) {
  auto open_status = [](const char* path, int flags) {
    return [path, flags] {
      const int fd = open(path, flags | O_CLOEXEC, 0600);
      if (fd >= 0) {
        close(fd);
        return 0;
      }
      return errno == EPERM ? 1 : 2;
    };
  };
  ExpectExitsWith(RunChild(open_status("/proc/self/status", O_RDONLY),
                           /*filtered=*/false),
                  0);  // unfiltered, it opens
  ExpectExitsWith(RunChild(open_status("/proc/self/status", O_RDONLY)), 1);
  ExpectExitsWith(
      RunChild(open_status("/tmp/lathe-sandbox-test-file", O_WRONLY | O_CREAT)),
      1);
  // Nor may it lift its own limits.
  ExpectExitsWith(
      RunChild([] {
        rlimit limit{};
        getrlimit(RLIMIT_AS, &limit);
        return setrlimit(RLIMIT_AS, &limit) != 0 && errno == EPERM ? 1 : 0;
      }),
      1);
}

int RunCudaChild(const std::function<int()>& body) {
  return RunChild(body, /*filtered=*/true, WorkerKind::kCuda);
}

TEST(CudaWorkerSandbox, TheDriversCallsWork) {
  ExpectExitsWith(RunCudaChild([] {
                    // ioctl on a descriptor (the driver's device files).
                    int fds[2];
                    if (pipe2(fds, O_CLOEXEC) != 0) return 1;
                    int pending = -1;
                    if (ioctl(fds[0], FIONREAD, &pending) != 0 || pending != 0)
                      return 2;
                    // Reading /proc and /sys.
                    const int fd = open("/proc/self/status", O_RDONLY);
                    if (fd < 0) return 3;
                    close(fd);
                    struct stat st {};
                    if (stat("/proc/self/status", &st) != 0) return 4;
                    std::thread thread([] {});
                    thread.join();
                    return RefusedSyscalls().empty() ? 0 : 5;
                  }),
                  0);
}

TEST(CudaWorkerSandbox, WritingFilesFailsWithEpermAndIsNamed) {
  ExpectExitsWith(
      RunCudaChild([] {
        const int fd = open("/tmp/lathe-sandbox-test-file",
                            O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EPERM) return 1;
        if (open("/proc/self/status", O_RDWR) >= 0 || errno != EPERM) return 2;
        if (unlink("/tmp/lathe-sandbox-test-file") == 0 || errno != EPERM)
          return 3;
        const std::string refused = RefusedSyscalls();
        if (refused.find("openat") == std::string::npos) return 4;
        if (refused.find("unlink") == std::string::npos) return 5;
        return 0;
      }),
      0);
}

TEST(CudaWorkerSandbox, NetworkAndNewProgramsKillTheProcess) {
  ExpectKilledBySigsys(
      RunCudaChild([] { return socket(AF_INET, SOCK_STREAM, 0) < 0 ? 1 : 0; }));
  ExpectKilledBySigsys(RunCudaChild([] {
    char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
    execv("/bin/true", argv);
    return 1;
  }));
  ExpectKilledBySigsys(RunCudaChild([] {
    const pid_t child = fork();
    if (child == 0) _exit(0);
    return 1;
  }));
}

TEST(CudaWorkerSandbox, ACpuWorkerRecordsNothing) {
  ExpectExitsWith(RunChild([] {
                    if (open("/proc/self/status", O_RDONLY) >= 0) return 1;
                    return RefusedSyscalls().empty() ? 0 : 2;
                  }),
                  0);
}

TEST(WorkerSandbox, APrivateNetworkHasNothingButLoopback) {
  const int status = RunChild(
      [] {
        if (!IsolateNetwork()) return 77;
        std::ifstream dev("/proc/self/net/dev");
        std::string line;
        int interfaces = 0;
        bool only_lo = true;
        for (int n = 0; std::getline(dev, line); ++n) {
          if (n < 2) continue;  // the two header lines
          ++interfaces;
          if (line.find("lo:") == std::string::npos) only_lo = false;
        }
        return interfaces == 1 && only_lo ? 0 : 1;
      },
      /*filtered=*/false);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) {
    GTEST_SKIP() << "this kernel gives no private network namespace";
  }
  EXPECT_EQ(WEXITSTATUS(status), 0) << "other interfaces than lo";
}

}  // namespace
}  // namespace lathe::runner
