// The C header that `lathe compile` writes beside a kernel's object or
// library: the prototype with the C ABI of docs/architecture.md (inputs in
// definition order as const float*, outputs last), each parameter's shape in a
// comment, and what the kernel was built from (workload canonical form, target,
// schedule hash), plus the runtime's thread control. Valid C89/C99 and C++
// (extern "C" guards). The text depends only on its inputs: compiling twice
// gives the same bytes. A library of several kernels gets one header with a
// prototype per kernel (KernelLibraryHeader).
// Tests: tests/compiler/codegen/kernel_library_test.cc, tests/cli.
#pragma once

#include <string>
#include <vector>

#include "compiler/codegen/kernel_program.h"
#include "compiler/target/target.h"
#include "compiler/workload/workload.h"

namespace lathe {

// How the kernel ships; it decides which thread control the header declares.
enum class LibraryKind {
  kObject,  // .o: the user links the runtime (or uses the .a)
  kStatic,  // .a: kernel + runtime
  kShared,  // .so: kernel + a private copy of the runtime
};

// One kernel of a library (kernel_library.h): what it computes, its
// program and its C symbol. Pointers to the caller's objects.
struct LibraryKernel {
  const Workload* workload = nullptr;
  const KernelProgram* kernel = nullptr;
  std::string function_name;
  // Where the schedule came from, for the header's comment, e.g. "database
  // record 42"; empty: "default" or "trace" by the kernel.
  std::string origin;
};

// The default C symbol of a workload's kernel: the operator name and its
// integer parameters in declaration order joined by 'x'
// ("matmul_512x512x512"); a custom workload's dims in name order
// ("custom_64x64x64"). Always a valid C identifier.
std::string DefaultFunctionName(const Workload& workload);

// True for a valid C identifier that is free to name a function: not a C or
// C++ keyword, not reserved (_X..., __...), not main, not the runtime's
// (lathe, lathe_...) (what --function accepts).
bool IsCIdentifier(const std::string& name);

// The name of the thread-count setter a shared library exports:
// NAME_set_num_threads. The runtime inside a .so is private to it (linked
// with -Wl,--exclude-libs,ALL, so two Lathe libraries in one process never
// share or interpose a pool), so lathe_set_num_threads is not visible there.
std::string SharedSetNumThreadsName(const std::string& function_name);

// The name of the scratch release a shared library exports:
// NAME_release_scratch, the library's door to lathe_release_scratch (kept
// scratch blocks, up to 64 MiB, are otherwise freed only when the library is
// unloaded), private for the same reason as the setter.
std::string SharedReleaseScratchName(const std::string& function_name);

// The thread control a header declares beside `function_name`: for a .so
// its NAME_set_num_threads and NAME_release_scratch, else the runtime's
// lathe_set_num_threads and lathe_release_scratch.
std::string ThreadControlDeclarations(const std::string& function_name,
                                      LibraryKind kind);

// The header text for the kernel `function_name`.
std::string KernelHeader(const Workload& workload, const KernelProgram& kernel,
                         const Target& target, const std::string& function_name,
                         LibraryKind kind);

// One header for every kernel of a library, in the given order. The include
// guard is LATHE_<GUARD_STEM>_<HASH>_H_: guard_stem (e.g. the header file's
// stem) made an identifier, upper case, and 8 hex digits of the kernels'
// function names, so that two sets' headers of one file name do not hide
// each other.
std::string KernelLibraryHeader(const std::vector<LibraryKernel>& kernels,
                                const Target& target, LibraryKind kind,
                                const std::string& guard_stem);

}  // namespace lathe
