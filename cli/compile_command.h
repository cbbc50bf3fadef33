// `lathe compile`: a workload's kernel as an object file, a static archive
// or a shared library with a C header (compiler/codegen/kernel_library.h).
//
//   lathe compile matmul:M=512,N=512,K=512 -o mm.a --header mm.h
//   lathe compile matmul:M=512,N=512,K=512 --trace best.json
//       --target "llvm -mcpu=znver4 -num-threads=8" -o mm.so --header mm.h
//       --function my_matmul
//
// Without --trace the default schedule is used. A target this machine
// cannot run is only warned about: cross-compiling for another CPU is fine.
// Tests: tests/cli/compile_commands_test.sh (runs the built binary).
#pragma once

#include <CLI/CLI.hpp>

namespace lathe::cli {

void AddCompileCommand(CLI::App& app);

}  // namespace lathe::cli
