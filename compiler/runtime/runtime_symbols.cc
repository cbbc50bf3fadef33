// The JIT's table of runtime functions; see runtime_symbols.h.
#include "compiler/runtime/runtime_symbols.h"

#include "compiler/runtime/lathe_runtime.h"

namespace lathe::runtime {
namespace {

// Converting a function pointer to void* is conditionally-supported in C++
// and fine on every target Lathe has (POSIX requires it for dlsym).
template <typename Fn>
void* Address(Fn* fn) {
  return reinterpret_cast<void*>(fn);
}

// At namespace scope, not function-local: a function-local static would need
// a guard variable, i.e. libstdc++'s __cxa_guard_acquire. (GCC emits the
// addresses as relocations; nothing runs at start-up.)
const RuntimeSymbol kSymbols[] = {
    {"lathe_parallel_for", Address(&lathe_parallel_for)},
    {"lathe_set_num_threads", Address(&lathe_set_num_threads)},
    {"lathe_get_num_threads", Address(&lathe_get_num_threads)},
    {"lathe_alloc", Address(&lathe_alloc)},
    {"lathe_free", Address(&lathe_free)},
    {"lathe_runtime_version", Address(&lathe_runtime_version)},
};

}  // namespace

const RuntimeSymbol* RuntimeSymbols(int* count) {
  *count = static_cast<int>(sizeof(kSymbols) / sizeof(kSymbols[0]));
  return kSymbols;
}

}  // namespace lathe::runtime
