// Code generation targets: which machine a kernel is compiled for.
//
// A target is a canonical string, e.g.
//   llvm -mcpu=znver4 -mattr=-mwaitx,-pku -num-threads=2
// kind "llvm" (CPU code through LLVM), the CPU name LLVM tunes and selects
// instructions for, the features that differ from that CPU's defaults
// ("+f": the target has f although the CPU name does not imply it; "-f": it
// lacks f although the CPU name implies it), and the number of threads
// parallel loops run on. Features are sorted and de-duplicated, so equal
// targets print equal strings (records in the database are keyed by them).
//
// This file is the target as data, free of LLVM: the parts above the code
// generator (design spaces, features, the tuner) read it. What a CPU name
// implies, parsing and the host's detection need LLVM's CPU tables and live
// behind the back end (compiler/codegen/cpu_target.h: ParseTarget,
// HostTarget, CheckRunnableHere), which fills in `resolved_features`.
//
// A CUDA target (kind "cuda") is
//   cuda -arch=sm_90 -max-threads-per-block=1024
//        -max-shared-memory-per-block=49152 -registers-per-block=65536
//        -warp-size=32
// the compute capability code is generated for (kept in `cpu`) and the
// device limits a schedule must respect (`gpu`), always printed in full so
// that a record says which limits its schedule was checked against. Its
// resolved features are the architectures it can run code of ("sm_80" for
// sm_80; "sm_80", "sm_89", "sm_90" for sm_90), so that the database's
// compatible matching takes a record of an older architecture for a newer
// one. Parsing is the CUDA back end's (compiler/codegen/cuda/cuda_target.h).
// Tests: tests/compiler/target/target_test.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace lathe {

// The registers one thread may have on every architecture a cuda target
// names (sm_80 to sm_90).
inline constexpr int64_t kMaxRegistersPerThread = 255;

// What a GPU allows one thread block (CUDA's device attributes of the same
// names). Zero in CPU targets.
struct GpuLimits {
  int max_threads_per_block = 0;
  int max_shared_memory_per_block = 0;  // bytes, without opting in to more
  int registers_per_block = 0;
  int warp_size = 0;
};

struct Target {
  std::string kind = "llvm";  // "llvm" or "cuda"
  std::string cpu = "generic";
  // "+name" / "-name", sorted by name, at most one entry per name.
  std::vector<std::string> features;
  int num_threads = 1;
  // kind "cuda" only.
  GpuLimits gpu;
  // Every feature the target enables, sorted: what its CPU name implies plus
  // its "+" features and what they imply, less its "-" features. Filled in by
  // the parser (compiler/codegen/cpu_target.h); not part of the canonical
  // string, which determines it. Empty for a Target assembled by hand, which
  // then has exactly its "+" features.
  std::vector<std::string> resolved_features;

  // The canonical string (see the top of this file).
  std::string ToString() const;
  // The features as LLVM wants them: "+a,-b".
  std::string FeatureString() const;
  // True when "+name" is listed, or `resolved_features` has name and no
  // "-name" is listed (a feature list edited after parsing counts).
  bool HasFeature(const std::string& name) const;
  // Every feature the target enables (`resolved_features` with the listed
  // "+" features added and "-" features removed), sorted: what the database
  // compares to match compatible targets.
  std::vector<std::string> EnabledFeatureList() const;
  // Floats in the widest vector register the target has (16 with AVX-512,
  // 8 with AVX, 4 otherwise).
  int VectorLanesF32() const;
  bool IsCuda() const { return kind == "cuda"; }

  friend bool operator==(const Target& a, const Target& b) {
    return a.ToString() == b.ToString();
  }
};

// The CPUs this process may run on: its affinity mask (under `taskset` or a
// cpuset, fewer than the machine has), at least 1.
int AllowedCpuCount();

}  // namespace lathe
