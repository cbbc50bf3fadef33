// Futex wait/wake on a 32-bit atomic: how pool threads sleep and wake.
//
// A condition variable would need a mutex around every hand-off; a futex lets
// the hot path be one atomic store plus one load (the waker calls into the
// kernel only when the other side has said it is asleep). Linux only, as is
// the rest of the runtime (sched_getaffinity). Private to compiler/runtime/;
// exercised by every test in tests/compiler/runtime/.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

namespace lathe::runtime {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "futex words must be plain lock-free 32-bit atomics");

// Sleeps while *word == expected. Returns on a wake, a signal, or at once if
// the value already differs; callers re-check their condition in a loop.
inline void FutexWait(std::atomic<uint32_t>* word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE,
          expected, nullptr, nullptr, 0);
}

// Wakes up to `count` threads sleeping on word.
inline void FutexWake(std::atomic<uint32_t>* word, int count) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE,
          count, nullptr, nullptr, 0);
}

// One iteration of a spin-wait: tells the CPU we are spinning (saves power,
// and on SMT gives the sibling hyper-thread the core).
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace lathe::runtime
