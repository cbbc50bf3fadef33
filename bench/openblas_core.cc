#include "bench/openblas_core.h"

#include <string>
#include <string_view>

namespace lathe::bench {
namespace {

// How wide the vectors of an Intel core of OpenBLAS's are (dynamic.c's
// names, as openblas_get_corename prints them); -1: not ranked here.
int VectorRank(std::string_view core) {
  for (std::string_view sse :
       {"Katmai", "Coppermine", "Northwood", "Prescott", "Banias", "Core2",
        "Penryn", "Dunnington", "Nehalem", "Atom"}) {
    if (core == sse) return 0;
  }
  if (core == "Sandybridge") return 1;
  if (core == "Haswell") return 2;
  // Cooperlake adds bf16 kernels only; its sgemm is SkylakeX's.
  if (core == "SkylakeX" || core == "Cooperlake" || core == "SapphireRapids")
    return 3;
  return -1;
}

}  // namespace

VectorExtensions HostVectorExtensions() {
  VectorExtensions cpu;
  __builtin_cpu_init();
  cpu.avx2_fma =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  cpu.avx512 =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
      __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  cpu.avx512_bf16 = cpu.avx512 && __builtin_cpu_supports("avx512bf16");
  return cpu;
}

std::string FairerOpenBlasCore(std::string_view detected,
                               const VectorExtensions& cpu) {
  const int have = VectorRank(detected);
  if (have < 0) return "";
  std::string best;
  int best_rank = have;
  if (cpu.avx512_bf16) {
    best = "Cooperlake", best_rank = 3;
  } else if (cpu.avx512) {
    best = "SkylakeX", best_rank = 3;
  } else if (cpu.avx2_fma) {
    best = "Haswell", best_rank = 2;
  }
  return best_rank > have ? best : "";
}

}  // namespace lathe::bench
