// libFuzzer target: workload specs (compiler/workload/spec.h). Whatever the
// input, parsing returns a status; a spec that parses has a canonical form
// that parses to the same workload, and its initial program and FLOP count
// are computed without a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/workload/flop_count.h"
#include "compiler/workload/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<lathe::Workload> workload = lathe::ParseWorkloadSpec(text);
  if (!workload.ok()) return 0;
  const std::string canonical = workload->CanonicalForm();
  absl::StatusOr<lathe::Workload> again = lathe::ParseWorkloadSpec(canonical);
  if (!again.ok() || again->CanonicalForm() != canonical) __builtin_trap();
  (void)lathe::FlopCount(*workload);
  return 0;
}
