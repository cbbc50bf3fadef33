// Which OpenBLAS kernel is the fair peer on this CPU.
//
// OpenBLAS (0.3.21, Debian 12's) picks its kernel from a table of CPU family
// and model numbers, and a CPU newer than its table gets the generic
// Prescott kernel (SSE3): on a Sapphire Rapids VM it ran sgemm 1024^3 at
// 32 GFLOP/s on one thread, where its AVX-512 kernel (Cooperlake, SkylakeX)
// ran at 110-139. A tuned kernel "beating OpenBLAS" there proves nothing, as
// bench/README.md ("Peers") says of the pinned AVX2 kernel. So when OpenBLAS's
// own choice is below what the CPU can run, the benchmarks run it with the best
// kernel of the CPU's vector extensions instead (bench/README.md, "Peers").
// Tests: tests/bench/openblas_core_test.cc.
#pragma once

#include <string>
#include <string_view>

namespace lathe::bench {

// The vector extensions OpenBLAS's x86-64 kernels are built for.
struct VectorExtensions {
  bool avx2_fma = false;     // Haswell and later
  bool avx512 = false;       // F, CD, BW, DQ, VL: SkylakeX
  bool avx512_bf16 = false;  // and BF16: Cooperlake
};

// This CPU's, from cpuid (__builtin_cpu_supports).
VectorExtensions HostVectorExtensions();

// The OpenBLAS core (OPENBLAS_CORETYPE's name) a fair comparison runs on a
// CPU with `cpu`, when OpenBLAS chose `detected` itself: `detected` when it
// uses the widest vectors the CPU has or when it is a core this function
// does not rank (an AMD or Arm core, say: OpenBLAS knows those better), else
// the best x86-64 core of those extensions. Empty when `detected` stands.
std::string FairerOpenBlasCore(std::string_view detected,
                               const VectorExtensions& cpu);

}  // namespace lathe::bench
