// Kernel libraries: what `lathe compile` writes for a kernel program
// (kernel_program.h), by the output's extension:
//   .o   the kernel's object file alone (ELF, position-independent). When the
//        kernel has parallel loops or large buffers it calls the runtime
//        (compiler/runtime/lathe_runtime.h), which the user then links too;
//        the .a carries it.
//   .a   a static archive of the kernel object and the runtime's objects
//        (embedded in this binary, runtime_objects.h), written by LLVM's
//        archive writer: link it with `cc prog.c k.a -lpthread -lm`.
//   .so  a shared library linked by the system C compiler driver
//        (`cc -shared ... -Wl,--exclude-libs,ALL`: the runtime inside is
//        private to the library, so two Lathe libraries in one process keep
//        their own thread pools). It exports the kernel and
//        NAME_set_num_threads. A C toolchain is required for .so only.
// A library may hold several kernels (one C symbol each, one object): the
// vector overloads below; the single-kernel functions are the case of one.
// The .o and .a are reproducible: the same inputs give the same bytes
// (archive timestamps, owners and modes are zeroed); so is the .so when the
// system linker is (GNU ld and its build ids are).
// Tests: tests/compiler/codegen/kernel_library_test.cc, tests/cli.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/codegen/kernel_header.h"
#include "compiler/codegen/kernel_program.h"
#include "compiler/target/target.h"

namespace lathe {

// The kind a path's extension asks for. InvalidArgument naming the path and
// the accepted extensions otherwise.
absl::StatusOr<LibraryKind> LibraryKindForPath(const std::string& path);

// The kernel's object file with the C symbol `function_name`.
// Errors: those of EmitObject (object_emitter.h).
absl::StatusOr<std::string> KernelObject(const KernelProgram& kernel,
                                         const Target& target,
                                         const std::string& function_name);

// A static archive of the object (as member NAME.o) and the runtime.
// Errors: Internal when the archive cannot be written.
absl::StatusOr<std::string> KernelStaticLibrary(
    const std::string& object, const std::string& function_name);

// Links the object and the runtime into a shared library at `path` with the
// C compiler ($CC, else cc on PATH). Errors: FailedPrecondition when no C
// compiler is found; Internal with the compiler's output when linking fails.
absl::Status LinkSharedLibrary(const std::string& object,
                               const std::string& function_name,
                               const std::string& path);

// Builds what `path`'s extension asks for and writes it there.
// Errors: those above, and InvalidArgument when the path cannot be written.
absl::Status WriteKernelLibrary(const KernelProgram& kernel,
                                const Target& target,
                                const std::string& function_name,
                                const std::string& path);

// One object file with every kernel, in order. Errors: InvalidArgument
// naming the symbol when two kernels share a function name or a name is
// not a C identifier; those of EmitObject.
absl::StatusOr<std::string> KernelObject(
    const std::vector<LibraryKernel>& kernels, const Target& target);

// Links the object of several kernels into a shared library exporting each
// kernel and its NAME_set_num_threads (one shared runtime inside).
absl::Status LinkSharedLibrary(const std::string& object,
                               const std::vector<std::string>& function_names,
                               const std::string& path);

// Builds the library of several kernels that `path`'s extension asks for
// (the archive's kernel member is lathe_kernels.o) and writes it there.
absl::Status WriteKernelLibrary(const std::vector<LibraryKernel>& kernels,
                                const Target& target, const std::string& path);

// Writes bytes to a file; InvalidArgument naming the path on failure.
absl::Status WriteFileBytes(const std::string& path, const std::string& bytes);

}  // namespace lathe
