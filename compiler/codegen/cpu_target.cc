#include "compiler/codegen/cpu_target.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "compiler/codegen/cuda/cuda_target.h"
#include "compiler/codegen/llvm/host_cpu.h"

namespace lathe {
namespace {

// Sorts by name and keeps the last setting of each name (as LLVM does).
std::vector<std::string> Canonicalize(
    const std::vector<std::string>& features) {
  std::map<std::string, char> by_name;
  for (const std::string& f : features) by_name[f.substr(1)] = f[0];
  std::vector<std::string> out;
  for (const auto& [name, sign] : by_name)
    out.push_back(std::string(1, sign) + name);
  return out;
}

// The features the target enables: what its CPU implies, plus its "+"
// features and what they imply, minus its "-" features.
std::set<std::string> ResolveFeatures(const Target& target) {
  std::set<std::string> enabled = CpuImpliedFeatures(target.cpu);
  for (const std::string& f : target.features) {
    if (f[0] == '+') {
      for (const std::string& g : FeatureClosure(f.substr(1)))
        enabled.insert(g);
    }
  }
  for (const std::string& f : target.features) {
    if (f[0] == '-') enabled.erase(f.substr(1));
  }
  return enabled;
}

// Fills in what the target enables (after its cpu and features are final).
void Resolve(Target& target) {
  std::set<std::string> enabled = ResolveFeatures(target);
  target.resolved_features.assign(enabled.begin(), enabled.end());
}

}  // namespace

Target HostTarget(int num_threads) {
  Target target;
  target.cpu = HostCpuName();
  std::set<std::string> implied = CpuImpliedFeatures(target.cpu);
  // Only the differences from the CPU's defaults are listed, which keeps the
  // string short and still pins down every feature.
  for (const auto& [name, present] : HostCpuFeatures()) {
    if (present && !implied.count(name)) target.features.push_back("+" + name);
    if (!present && implied.count(name)) target.features.push_back("-" + name);
  }
  target.features = Canonicalize(target.features);
  target.num_threads = std::max(1, num_threads);
  Resolve(target);
  return target;
}

absl::StatusOr<Target> ParseTarget(const std::string& text) {
  std::vector<std::string> words =
      absl::StrSplit(text, ' ', absl::SkipWhitespace());
  if (words.empty())
    return absl::InvalidArgumentError("target: empty target string");
  if (words[0] == "cuda") return cuda::ParseCudaTarget(text);
  Target target;
  bool is_host = words[0] == "host";
  if (!is_host && words[0] != "llvm") {
    return absl::InvalidArgumentError(
        absl::StrCat("target \"", text, "\": unknown kind \"", words[0],
                     "\" (accepted: llvm, host, cuda)"));
  }
  int num_threads = 0;
  // -mattr lists add up (the last setting of a feature wins, as in LLVM);
  // a second -mcpu or -num-threads would silently replace the first.
  bool has_cpu = false;
  auto given_twice = [&](absl::string_view option) {
    return absl::InvalidArgumentError(
        absl::StrCat("target \"", text, "\": ", option, " is given twice"));
  };
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (absl::StartsWith(w, "-mcpu=") && !is_host) {
      if (has_cpu) return given_twice("-mcpu");
      target.cpu = w.substr(6);
      has_cpu = true;
      if (target.cpu.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("target \"", text, "\": empty -mcpu"));
      }
    } else if (absl::StartsWith(w, "-mattr=") && !is_host) {
      for (absl::string_view f :
           absl::StrSplit(w.substr(7), ',', absl::SkipEmpty())) {
        if (f.size() < 2 || (f[0] != '+' && f[0] != '-')) {
          return absl::InvalidArgumentError(
              absl::StrCat("target \"", text, "\": feature \"", std::string(f),
                           "\" must start with + or -"));
        }
        target.features.push_back(std::string(f));
      }
    } else if (absl::StartsWith(w, "-num-threads=")) {
      if (num_threads > 0) return given_twice("-num-threads");
      if (!absl::SimpleAtoi(w.substr(13), &num_threads) || num_threads < 1 ||
          num_threads > 1024) {
        return absl::InvalidArgumentError(
            absl::StrCat("target \"", text,
                         "\": -num-threads must be an integer in [1, 1024]"));
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "target \"", text, "\": unknown option \"", w, "\" (accepted: ",
          is_host ? "-num-threads=N"
                  : "-mcpu=NAME, -mattr=+a,-b, -num-threads=N",
          ")"));
    }
  }
  if (is_host) {
    return HostTarget(num_threads > 0 ? num_threads : AllowedCpuCount());
  }
  // LLVM only warns on names it does not know, and aborts the process on a
  // CPU without 64-bit mode: both are refused here, by name.
  if (!target.cpu.empty() && target.cpu != "generic" &&
      !IsX86_64Cpu(target.cpu)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "target \"", text, "\": -mcpu=", target.cpu,
        " is not an x86-64 CPU LLVM knows (e.g. x86-64-v3, skylake-avx512, "
        "znver4; for this machine's CPU, the target \"host\")"));
  }
  for (const std::string& f : target.features) {
    const std::string name = f.substr(1);
    if (!IsX86Feature(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("target \"", text, "\": -mattr ", f, ": \"", name,
                       "\" is not an x86 feature LLVM knows"));
    }
    if (f == "-64bit") {
      return absl::InvalidArgumentError(
          absl::StrCat("target \"", text,
                       "\": -mattr -64bit: Lathe generates x86-64 code only"));
    }
  }
  target.features = Canonicalize(target.features);
  target.num_threads = num_threads > 0 ? num_threads : 1;
  Resolve(target);
  return target;
}

absl::Status CheckRunnableHere(const Target& target) {
  if (target.kind != "llvm") {
    return absl::InvalidArgumentError(
        absl::StrCat("target \"", target.ToString(),
                     "\": only llvm targets run on this machine"));
  }
  std::map<std::string, bool> host = HostCpuFeatures();
  std::set<std::string> implied = CpuImpliedFeatures(target.cpu);
  std::vector<std::string> missing;
  for (const std::string& f : ResolveFeatures(target)) {
    auto it = host.find(f);
    // A feature the host detection does not report (x87 implied by a CPU
    // name) is part of every x86-64 machine; an explicit unknown one is not.
    if (it == host.end() ? !implied.count(f) : !it->second)
      missing.push_back(f);
  }
  if (!missing.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "target \"", target.ToString(), "\" needs CPU features this machine (",
        HostCpuName(), ") lacks: ", absl::StrJoin(missing, ", ")));
  }
  return absl::OkStatus();
}

}  // namespace lathe
