// lathe_model_constants (lathe_runtime.h): the first copy, once per image.
//
// The copy goes into space the library reserves in its own .bss rather than
// into a mapping of the runtime's: it then lives exactly as long as the
// library (a dlclose unmaps it with the library; a process exiting while
// another thread is inside the model never sees it unmapped), and nothing
// needs freeing.
#include "compiler/runtime/model_constants.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "compiler/runtime/huge_pages.h"

namespace lathe::runtime {
namespace {

// Guards the first copy of every image; the fast path takes no lock.
pthread_mutex_t g_copy_mutex = PTHREAD_MUTEX_INITIALIZER;

// Whether `mode_file` (kThpModeFile's form: "always madvise [never]")
// selects never.
bool ThpNever(const char* mode_file) {
  const int fd = open(mode_file, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[128];
  const ssize_t n = read(fd, text, sizeof(text) - 1);
  close(fd);
  if (n <= 0) return false;
  text[n] = '\0';
  return std::strstr(text, "[never]") != nullptr;
}

// Where the constants of `image` are to be read: a copy in `space` advised
// for huge pages, or `image` when the kernel ignores or refuses the advice.
const void* CopyOnHugePages(const void* image, void* space, uint64_t bytes,
                            const char* thp_mode_file) {
  if (bytes < kMinHugeBytes || space == nullptr) return image;
  if (ThpNever(thp_mode_file)) return image;
  const uintptr_t base = reinterpret_cast<uintptr_t>(space);
  char* start = reinterpret_cast<char*>(RoundUp(base, kHugePageBytes));
  const size_t length = RoundUp(bytes, kHugePageBytes);
  // The space is LATHE_MODEL_CONSTANTS_SPACE(bytes) long: the start is at
  // most 2 MiB - 1 past its beginning, so `length` bytes fit.
  if (madvise(start, length, MADV_HUGEPAGE) != 0) return image;
  std::memcpy(start, image, bytes);
  return start;
}

}  // namespace

const void* ModelConstants(const void* image, void* space, uint64_t bytes,
                           const void** where, const char* thp_mode_file) {
  if (where == nullptr) return image;
  if (const void* ready = __atomic_load_n(where, __ATOMIC_ACQUIRE))
    return ready;
  pthread_mutex_lock(&g_copy_mutex);
  const void* ready = __atomic_load_n(where, __ATOMIC_RELAXED);
  if (ready == nullptr) {
    ready = CopyOnHugePages(image, space, bytes, thp_mode_file);
    __atomic_store_n(where, ready, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&g_copy_mutex);
  return ready;
}

void ResetModelConstantsLockInChild() {
  g_copy_mutex = PTHREAD_MUTEX_INITIALIZER;
}

}  // namespace lathe::runtime
