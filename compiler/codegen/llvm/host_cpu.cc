// Host CPU detection and x86 feature implications, through LLVM's target
// parser (a light include: no IR, no code generator).
#include "compiler/codegen/llvm/host_cpu.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/X86TargetParser.h"

namespace lathe {

std::string HostCpuName() { return llvm::sys::getHostCPUName().str(); }

std::map<std::string, bool> HostCpuFeatures() {
  llvm::StringMap<bool> features;
  std::map<std::string, bool> out;
  if (!llvm::sys::getHostCPUFeatures(features)) return out;
  for (const auto& entry : features) out[entry.first().str()] = entry.second;
  return out;
}

std::set<std::string> FeatureClosure(const std::string& feature) {
  llvm::StringMap<bool> implied;
  llvm::X86::updateImpliedFeatures(feature, /*Enabled=*/true, implied);
  std::set<std::string> out = {feature};
  for (const auto& entry : implied) {
    if (entry.second) out.insert(entry.first().str());
  }
  return out;
}

std::set<std::string> CpuImpliedFeatures(const std::string& cpu) {
  std::set<std::string> out;
  // getFeaturesForCPU asserts on names it does not know.
  if (cpu.empty() || cpu == "generic" ||
      llvm::X86::parseArchX86(cpu, /*Only64Bit=*/true) == llvm::X86::CK_None) {
    return out;
  }
  llvm::SmallVector<llvm::StringRef, 64> features;
  llvm::X86::getFeaturesForCPU(cpu, features);
  for (llvm::StringRef f : features) {
    for (const std::string& g : FeatureClosure(f.str())) out.insert(g);
  }
  return out;
}

bool IsX86_64Cpu(const std::string& cpu) {
  return !cpu.empty() &&
         llvm::X86::parseArchX86(cpu, /*Only64Bit=*/true) != llvm::X86::CK_None;
}

bool IsX86Feature(const std::string& name) {
  // Disabling a feature disables itself and what depends on it; a name the
  // table lacks is left out of the map.
  llvm::StringMap<bool> disabled;
  llvm::X86::updateImpliedFeatures(name, /*Enabled=*/false, disabled);
  if (disabled.count(name) > 0) return true;
  // Host detection names a few features the table lacks ("hle" in LLVM 16),
  // and host target strings carry them: every name it reports, present or
  // not, is known (and "hle" by name, for strings made on another machine).
  if (name == "hle") return true;
  static const std::map<std::string, bool>* const host =
      new std::map<std::string, bool>(HostCpuFeatures());
  return host->count(name) > 0;
}

}  // namespace lathe
