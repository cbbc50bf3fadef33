// Scratch kept from one kernel call to the next.
//
// A kernel allocates its scratch (a packed operand, a padded input, a
// cache_write tile too big for the stack) at the start of every call and
// frees it at the end (codegen_llvm.cc). Handed back to malloc, such blocks
// cost page faults on the calls that follow: on glibc, a conv2d kernel's
// padded input and packed weights, allocated and freed in that order, grow
// the heap a call, each page touched for the first time, for its first
// calls, and leave the heap behind (bench/README.md, "Why the code is as it
// is"). Kept here, the next call of the kernel gets the same blocks back,
// already mapped.
//
// Bounded: at most kScratchSlots blocks and kScratchMaxBytes in all; only
// blocks of kScratchMinBytes or more (smaller ones malloc serves from its
// bins without faults). Process-wide, under a mutex (one lock per
// allocation of a kernel call, not per loop). lathe_release_scratch frees
// them all; so does the runtime's shutdown (process exit, dlclose). Under
// AddressSanitizer nothing is kept, so that it still sees every free.
// Private to compiler/runtime/. Tests: tests/compiler/runtime/alloc_test.cc.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace lathe::runtime {

inline constexpr int kScratchSlots = 8;
inline constexpr size_t kScratchMinBytes = size_t{64} << 10;
inline constexpr size_t kScratchMaxBytes = size_t{64} << 20;

// A kept block of at least `bytes` (and at most twice that, so that a small
// request does not take a large block) whose address is a multiple of
// `alignment`; nullptr if none is kept.
void* TakeScratch(uint64_t bytes, uint64_t alignment);
// Keeps `p` (from aligned_alloc) for a later TakeScratch, evicting (freeing)
// the oldest kept blocks when over the bounds; false when `p` is not kept
// (too small or too large), for the caller to free.
bool KeepScratch(void* p);
// Frees every kept block.
void ReleaseScratch();
// The blocks and bytes kept now.
int KeptScratchBlocks();
size_t KeptScratchBytes();
// In a fork()ed child: the lock may have been held by a thread that does
// not exist there. Async-signal-safe.
void ResetScratchLockInChild();

}  // namespace lathe::runtime
