#include "compiler/runtime/scratch_cache.h"

#include <malloc.h>
#include <pthread.h>

#include <cstdlib>

namespace lathe::runtime {
namespace {

struct Block {
  void* p;
  size_t bytes;  // malloc_usable_size: what the block can hold
};

// Constant-initialized and trivially destructible: valid before any
// constructor and after every destructor of the program.
pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
Block g_blocks[kScratchSlots];  // oldest first; guarded by g_mutex
int g_count = 0;
size_t g_bytes = 0;

void RemoveLocked(int i) {
  g_bytes -= g_blocks[i].bytes;
  for (int j = i + 1; j < g_count; ++j) g_blocks[j - 1] = g_blocks[j];
  --g_count;
}

}  // namespace

void* TakeScratch(uint64_t bytes, uint64_t alignment) {
  if (bytes < kScratchMinBytes) return nullptr;
  void* found = nullptr;
  pthread_mutex_lock(&g_mutex);
  // The most recently kept first: the block this kernel freed last call.
  for (int i = g_count - 1; i >= 0; --i) {
    const Block& b = g_blocks[i];
    if (b.bytes >= bytes && b.bytes / 2 <= bytes &&
        reinterpret_cast<uintptr_t>(b.p) % alignment == 0) {
      found = b.p;
      RemoveLocked(i);
      break;
    }
  }
  pthread_mutex_unlock(&g_mutex);
  return found;
}

bool KeepScratch(void* p) {
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer finds a kernel that uses its scratch after the call
  // only if the block goes back to malloc.
  return false;
#endif
  if (p == nullptr) return false;
  const size_t bytes = malloc_usable_size(p);
  if (bytes < kScratchMinBytes || bytes > kScratchMaxBytes) return false;
  void* evicted[kScratchSlots];
  int num_evicted = 0;
  pthread_mutex_lock(&g_mutex);
  while (g_count > 0 &&
         (g_count == kScratchSlots || g_bytes + bytes > kScratchMaxBytes)) {
    evicted[num_evicted++] = g_blocks[0].p;
    RemoveLocked(0);
  }
  g_blocks[g_count++] = Block{p, bytes};
  g_bytes += bytes;
  pthread_mutex_unlock(&g_mutex);
  for (int i = 0; i < num_evicted; ++i) std::free(evicted[i]);
  return true;
}

void ReleaseScratch() {
  void* released[kScratchSlots];
  pthread_mutex_lock(&g_mutex);
  const int n = g_count;
  for (int i = 0; i < n; ++i) released[i] = g_blocks[i].p;
  g_count = 0;
  g_bytes = 0;
  pthread_mutex_unlock(&g_mutex);
  for (int i = 0; i < n; ++i) std::free(released[i]);
}

int KeptScratchBlocks() {
  pthread_mutex_lock(&g_mutex);
  const int n = g_count;
  pthread_mutex_unlock(&g_mutex);
  return n;
}

size_t KeptScratchBytes() {
  pthread_mutex_lock(&g_mutex);
  const size_t n = g_bytes;
  pthread_mutex_unlock(&g_mutex);
  return n;
}

void ResetScratchLockInChild() { g_mutex = PTHREAD_MUTEX_INITIALIZER; }

}  // namespace lathe::runtime
