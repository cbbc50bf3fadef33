// Refusing an output that would overwrite one of the command's own files.
//
// `lathe db export -o x.db --db x.db`, `lathe compile --db x.db --header
// x.db` and the like would write over the tuning database; `--header` equal
// to `-o` would write one output over the other. Every command that writes
// files checks its outputs here first, before it does any work.
// Tests: tests/cli/output_paths_test.sh.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace lathe::cli {

// (option, path): e.g. {"--db", "x.db"}. Empty paths and "-" (stdout) are
// left out.
using NamedPath = std::pair<std::string, std::string>;

// InvalidArgument when an output is the same file as one of `inputs` or as
// another output: the same path, or two names of one existing file (a
// symlink, a hard link, "./x" and "x"): "--header x.db is the database
// (--db); refusing to overwrite it".
absl::Status CheckOutputPaths(const std::vector<NamedPath>& inputs,
                              const std::vector<NamedPath>& outputs);

}  // namespace lathe::cli
