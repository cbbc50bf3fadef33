// The copy of a model library's constants onto huge pages
// (lathe_model_constants in lathe_runtime.h): what the rest of the runtime
// needs of it. Private to compiler/runtime/.
// Tests: tests/compiler/runtime/model_constants_test.cc.
#pragma once

#include <stdint.h>

namespace lathe::runtime {

// lathe_model_constants' work (runtime_api.cc registers the fork handler
// first).
const void* ModelConstants(const void* image, void* space, uint64_t bytes,
                           const void** where);

// In a fork()ed child: the lock of the first copy may have been held by a
// thread that does not exist there. Async-signal-safe.
void ResetModelConstantsLockInChild();

}  // namespace lathe::runtime
