// ptxas as the tests' second opinion on generated PTX: whether the
// toolkit's assembler accepts it for an architecture (no GPU needed).
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"

namespace lathe::cuda::testing {

inline constexpr char kPtxas[] = "/usr/local/cuda/bin/ptxas";

// ptxas's verdict on `ptx` for `arch` (sm_80): empty when it assembles,
// else its output.
inline std::string Assemble(const std::string& ptx, const std::string& arch) {
  char dir[] = "/tmp/lathe_ptxas_XXXXXX";
  if (mkdtemp(dir) == nullptr) return "mkdtemp failed";
  std::ofstream(absl::StrCat(dir, "/k.ptx")) << ptx;
  const int rc =
      std::system(absl::StrCat(kPtxas, " -arch=", arch, " ", dir, "/k.ptx -o ",
                               dir, "/k.cubin > ", dir, "/log 2>&1")
                      .c_str());
  std::ifstream log(absl::StrCat(dir, "/log"));
  std::string text((std::istreambuf_iterator<char>(log)), {});
  std::system(absl::StrCat("rm -rf ", dir).c_str());
  return rc == 0 ? "" : text;
}

}  // namespace lathe::cuda::testing
