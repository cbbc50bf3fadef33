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
// `host` resolves at run time to this machine: its CPU name and its actual
// features (never a guess: a machine without AVX-512 gets no AVX-512).
// CheckRunnableHere refuses a target whose features this machine lacks, so
// Lathe never executes illegal instructions.
// Tests: tests/compiler/codegen/target_test.cc.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace lathe {

struct Target {
  std::string kind = "llvm";
  std::string cpu = "generic";
  // "+name" / "-name", sorted by name, at most one entry per name.
  std::vector<std::string> features;
  int num_threads = 1;

  // The canonical string (see the top of this file).
  std::string ToString() const;
  // The features as LLVM wants them: "+a,-b".
  std::string FeatureString() const;
  // True when an explicit "+name" is listed or the CPU implies name and no
  // "-name" is listed.
  bool HasFeature(const std::string& name) const;
  // Every feature the target enables (implied by its CPU or listed, and what
  // those imply, less its "-" features), sorted: what the database compares
  // to match compatible targets.
  std::vector<std::string> EnabledFeatureList() const;
  // Floats in the widest vector register the target has (16 with AVX-512,
  // 8 with AVX, 4 otherwise).
  int VectorLanesF32() const;

  friend bool operator==(const Target& a, const Target& b) {
    return a.ToString() == b.ToString();
  }
};

// Parses "llvm [-mcpu=NAME] [-mattr=+a,-b] [-num-threads=N]" or
// "host [-num-threads=N]". InvalidArgument naming the bad part otherwise.
// "host" gets this machine's CPU and features, and as many threads as this
// process may use CPUs (AllowedCpuCount, as `nproc` counts) unless
// -num-threads is given.
absl::StatusOr<Target> ParseTarget(const std::string& text);

// This machine, with num_threads threads.
Target HostTarget(int num_threads);

// The CPUs this process may run on: its affinity mask (under `taskset` or a
// cpuset, fewer than the machine has), at least 1.
int AllowedCpuCount();

// Ok when code for the target runs on this machine; FailedPrecondition naming
// every feature the target needs and this machine lacks otherwise, and
// InvalidArgument for a kind other than "llvm".
absl::Status CheckRunnableHere(const Target& target);

}  // namespace lathe
