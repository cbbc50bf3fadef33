// What LLVM knows about CPUs, behind a header free of LLVM types: the host's
// CPU name and features, and the features a CPU name implies. Used by
// compiler/codegen/cpu_target.cc.
// Tests: tests/compiler/codegen/cpu_target_test.cc.
#pragma once

#include <map>
#include <set>
#include <string>

namespace lathe {

// LLVM's name for this machine's CPU ("znver4", "skylake-avx512", "generic").
std::string HostCpuName();

// This machine's features as LLVM detects them: name -> present. Features
// absent from the map are unknown to the detection.
std::map<std::string, bool> HostCpuFeatures();

// The x86 features the CPU name implies (with the features they imply in
// turn); empty for "generic" and for names LLVM does not know.
std::set<std::string> CpuImpliedFeatures(const std::string& cpu);

// The features that enabling `feature` enables too (itself included).
std::set<std::string> FeatureClosure(const std::string& feature);

// A CPU name LLVM's x86 target parser knows as a 64-bit CPU ("znver4",
// "x86-64-v3"; not "i386", not "generic"). LLVM itself only warns on an
// unknown name and then aborts the process ("64-bit code requested on a
// subtarget that doesn't support it"), so names are checked here first.
bool IsX86_64Cpu(const std::string& cpu);

// A feature name ("avx512f", "fma", without + or -) in LLVM's x86 feature
// table. Tuning flags of the code generator ("prefer-256-bit") are not.
bool IsX86Feature(const std::string& name);

}  // namespace lathe
