// The copy of a model library's constants onto huge pages
// (lathe_model_constants in lathe_runtime.h): what the rest of the runtime
// needs of it. Private to compiler/runtime/.
// Tests: tests/compiler/runtime/model_constants_test.cc.
#pragma once

#include <stdint.h>

namespace lathe::runtime {

// The file that says the kernel's transparent huge page mode.
inline constexpr const char* kThpModeFile =
    "/sys/kernel/mm/transparent_hugepage/enabled";

// lathe_model_constants' work (runtime_api.cc registers the fork handler
// first), reading the mode from `thp_mode_file`: where it selects "[never]"
// the advice would be ignored, so the image is read where it is rather
// than copied into memory it would double for nothing (THP is often off on
// database and latency-sensitive hosts); where the file cannot be read
// (no THP in the kernel, no /sys), madvise decides.
const void* ModelConstants(const void* image, void* space, uint64_t bytes,
                           const void** where, const char* thp_mode_file);

// In a fork()ed child: the lock of the first copy may have been held by a
// thread that does not exist there. Async-signal-safe.
void ResetModelConstantsLockInChild();

}  // namespace lathe::runtime
