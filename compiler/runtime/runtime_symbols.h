// The runtime's C functions by name, for the JIT to define in its symbol
// table.
//
// Why a table rather than letting the JIT search the process: the runtime is
// a static library, so the linker keeps only the objects an executable
// references, and an executable that reaches the runtime only through JIT'ed
// code references none of them (nor are they exported without -rdynamic).
// Taking their addresses here keeps them linked wherever this is used, and
// hands the JIT exact addresses. Tests:
// tests/compiler/runtime/runtime_symbols_test.cc.
#pragma once

namespace lathe::runtime {

struct RuntimeSymbol {
  const char* name;  // the C name, e.g. "lathe_parallel_for"
  void* address;
};

// Every function of lathe_runtime.h; *count receives their number.
const RuntimeSymbol* RuntimeSymbols(int* count);

}  // namespace lathe::runtime
