// Static archives (.a) in memory, through LLVM's archive writer: no external
// `ar` is needed, and the output is deterministic (timestamps, owners and
// modes zeroed), so the same members give the same bytes.
// Tests: tests/compiler/codegen/kernel_library_test.cc.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace lathe {

struct ArchiveMember {
  std::string name;  // the member's file name, e.g. "kernel.o"
  std::string bytes;
};

// A GNU archive of the members, in order, with a symbol table (so a linker
// finds the kernel and the runtime without ranlib). Errors: Internal when
// LLVM refuses a member (not an object file it can index).
absl::StatusOr<std::string> WriteArchive(
    const std::vector<ArchiveMember>& members);

}  // namespace lathe
